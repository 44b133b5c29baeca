/*! svc bug reporter: captures what went wrong and files it with your svc. docs/widget.md */
// Plain JavaScript, no build step, no third-party code. One global, `Svc`. Every hook into the
// page is wrapped so that the widget can never throw into it, and `Svc.destroy()` puts every
// patched function back.
(() => {
  "use strict";
  if (window.Svc && window.Svc.version) return; // loaded twice: the first one serves

  const VERSION = "1.0.0";
  const LIMIT = { console: 100, network: 100, actions: 100, text: 2000, stack: 4000, keys: 30, depth: 3, body: 10240 };
  const MAX_STORED = 5; // reports kept in localStorage while they cannot be sent
  const ATTEMPTS_IN_DIALOG = 3; // then the reporter is told the report will be sent later
  const ATTEMPTS_IN_BACKGROUND = 6;
  const MAX_RETRY_SECONDS = 60;
  const DEFAULT_MAX_SCREENSHOT = 10 * 1024 * 1024;
  const MASK = "[REDACTED]";
  // What a stored copy lost, by the field that carried it.
  const PARTS = { screenshot_url: "the screenshot", annotated_screenshot_url: "the screenshot", replay_key: "the replay" };
  const partNames = (fields) => [...new Set(fields.map((field) => PARTS[field] || field))];
  const partsNamed = (fields) => partNames(fields).join(" and ");
  // Query, fragment and form names whose values never leave the page. The service redacts
  // each of them again, and more (SECRET_PARAMETERS, kept a superset by a test).
  const SECRET_NAME = /^(?:token|access_token|refresh_token|id_token|code|password|passwd|pwd|secret|client_secret|api_key|apikey|key|signature|sig|auth|authorization|session|sessionid|jwt)$/i;
  const JWT = /eyJ[\w-]*\.[\w-]+\.[\w-]*/g;
  // A logged object's key whose name (any case, without - and _) holds one of these holds a
  // secret: its value is masked, as the service masks it in bodies (docs/security.md).
  const SECRET_KEY = /password|passwd|passphrase|secret|token|authorization|apikey|cookie|credential|privatekey|cardnumber|ccnumber|cvv|cvc|iban/;
  // Elements whose text is what someone typed or chose, never what they clicked on.
  const TYPED = "input,textarea,select,[contenteditable]:not([contenteditable=false])";
  // What the reporter reads is written in English and marked for `make translations-extract`:
  // speak() where it is said, N_() where it is only defined (docs/widget.md, "Languages").
  const N_ = (message) => message;
  const SEVERITIES = [["low", N_("Low")], ["medium", N_("Medium")], ["high", N_("High")], ["critical", N_("Critical")]];
  const CATEGORIES = [["bug", N_("Something is broken")], ["ui", N_("Looks wrong")], ["performance", N_("Slow")],
    ["crash", N_("Crash or freeze")], ["other", N_("Other")]];
  // A project's own button text or title is said as written; these defaults in the reporter's language.
  const CONFIG_DEFAULTS = {
    primaryColor: "#2563eb", buttonText: N_("Report a bug"), modalTitle: N_("Report a bug"), logoUrl: null,
    position: "bottom-right", enableScreenshot: true, enableSessionRecording: true,
    showWatermark: false, captureConsole: true, captureNetwork: true, captureActions: true,
    captureNetworkDetails: false, enableReplay: false, replaySeconds: 60, replayMaskAllText: true,
    testIdAttribute: "data-testid", maxScreenshotBytes: DEFAULT_MAX_SCREENSHOT,
  };
  const MESSAGES = {
    401: N_("This bug reporter is not set up correctly (its project key was refused)."),
    403: N_("This site is not allowed to send bug reports to this project."),
    413: N_("The report is too large to send."),
    429: N_("Too many reports were sent from here. Please try again in a minute."),
    422: N_("The report was not accepted: {errors}"),
    offline: N_("You seem to be offline."),
    unreachable: N_("svc could not be reached."),
    saved: N_("Your report is saved in this browser and will be sent automatically."),
    notSaved: N_("This browser's storage is full, so the report could not be kept. Please send it again later."),
    failed: N_("The report could not be sent."),
  };
  // What a report kept in this browser goes without, by the parts it lost (partNames).
  const LOST = {
    "the screenshot": N_("It goes without the screenshot: this browser's storage is too full to keep it."),
    "the replay": N_("It goes without the replay: this browser's storage is too full to keep it."),
    both: N_("It goes without the screenshot and the replay: this browser's storage is too full to keep them."),
  };

  // What the page had before the widget touched it: the widget's own requests and warnings
  // use these, so they are never captured as the page's.
  const nativeFetch = window.fetch;
  const nativeWarn = console.warn;

  const identity = { user: null };
  const customMetadata = {};
  let state = null; // the running widget: options, config, buffers, UI, and how to undo each hook
  // The replay recorder (/widget-replay.js, docs/replay.md), once its script has run: loaded
  // only for a project that records replays, at most once per page.
  let replay = null;
  let replayRequested = false;
  // The reporter's language: English until svc's words for another arrive (loadWords).
  const ENGLISH = { locale: "en", dir: "ltr", messages: {}, plurals: {} };
  let words = ENGLISH;

  // --- small helpers ------------------------------------------------------------------------

  function quietly(fn) {
    try { return fn(); } catch (_) { return undefined; }
  }

  // {name} in a message takes values[name], wherever the language put it.
  function fill(message, values) {
    return values ? message.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole)) : message;
  }

  // A table's own entry: a project's button text may be "constructor" or "toString".
  const own = (table, key) => (Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined);

  function speak(message, values) {
    return fill(own(words.messages, message) || message, values);
  }

  // By the language's plural rules (Polish and Arabic have several forms); {count} is the count.
  function speakPlural(one, many, count, values) {
    const forms = own(words.plurals, one);
    const form = forms
      ? forms[quietly(() => new Intl.PluralRules(words.locale).select(count))] || forms.other
      : (count === 1 ? one : many);
    const written = quietly(() => new Intl.NumberFormat(words.locale).format(count)) || String(count);
    return fill(form, { ...values, count: written });
  }

  function warn(message) {
    quietly(() => nativeWarn.call(console, "svc widget: " + message));
  }

  function ring(limit) {
    const items = [];
    return {
      push(item) { items.push(item); if (items.length > limit) items.shift(); },
      all: () => items.slice(),
      clear() { items.length = 0; },
    };
  }

  function cut(text, max) {
    text = String(text);
    return text.length > max ? text.slice(0, max) + "… (" + (text.length - max) + " more characters)" : text;
  }

  function randomId() {
    if (crypto.randomUUID) return crypto.randomUUID();
    return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function maskText(text) {
    return String(text).replace(JWT, MASK);
  }

  function maskUrl(url) {
    try {
      return String(url)
        .replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#@]*@/i, "$1" + MASK + "@")
        .replace(/([?&#;])([^=&#]+)=([^&#]*)/g, (whole, separator, name) =>
          SECRET_NAME.test(quietly(() => decodeURIComponent(name)) || name) ? separator + name + "=" + MASK : whole)
        .replace(JWT, MASK);
    } catch (_) {
      return "[unreadable URL]";
    }
  }

  function absoluteUrl(url) {
    return quietly(() => new URL(String(url), location.href).href) || String(url);
  }

  // A short CSS-like name for an element: button#pay, a.nav-link > span.
  function selector(element) {
    if (!element || element.nodeType !== 1) return element && element.nodeName ? element.nodeName.toLowerCase() : "";
    const part = (node) => {
      if (node.id) return node.localName + "#" + node.id;
      const classes = typeof node.className === "string" ? node.className.trim().split(/\s+/).filter(Boolean).slice(0, 2) : [];
      return node.localName + (classes.length ? "." + classes.join(".") : "");
    };
    const parent = element.parentElement;
    if (element.id || !parent || parent === document.body || parent === document.documentElement) return part(element);
    return part(parent) + " > " + part(element);
  }

  // How a test finds the element again (the repro kit, docs/repro-kit.md): its test id, a unique
  // id or form name, its role and accessible name, a label (a form field's, or aria-label), its
  // exact text, else a short CSS path. Never a field's value: the name of something typed into
  // comes from its label. A heading or a cell's text is no label: getByLabel never finds it.
  const ROLES = { a: "link", button: "button", summary: "button", select: "combobox", textarea: "textbox",
    h1: "heading", h2: "heading", h3: "heading", h4: "heading", h5: "heading", h6: "heading",
    td: "cell", th: "columnheader" };
  const INPUT_ROLES = { checkbox: "checkbox", radio: "radio", button: "button", submit: "button", reset: "button" };
  const unique = (css) => quietly(() => document.querySelectorAll(css).length === 1);
  const oneLine = (text) => String(text || "").replace(/\s+/g, " ").trim();
  function locatorOf(element, testIdAttribute) {
    if (!element || element.nodeType !== 1) return null;
    const testId = element.getAttribute(testIdAttribute || "data-testid");
    if (testId) return { testId };
    if (element.id && unique("#" + CSS.escape(element.id))) return { css: "#" + CSS.escape(element.id) };
    const name = element.getAttribute("name");
    const byName = name && element.localName + "[name=\"" + CSS.escape(name) + "\"]";
    if (byName && unique(byName)) return { css: byName };
    const typed = element.matches(TYPED);
    const field = typed || element.localName === "input";
    const role = element.getAttribute("role") ||
      (element.localName === "input" ? INPUT_ROLES[element.type] : ROLES[element.localName]);
    const labelled = oneLine(element.getAttribute("aria-label") ||
      (element.labels && element.labels[0] ? element.labels[0].textContent : ""));
    const text = field ? "" : oneLine(element.textContent);
    const usable = (words) => words && words.length <= 80 && words === maskText(words);
    if (role && !typed && usable(labelled || text)) return { role, name: labelled || text };
    if (usable(labelled)) return { label: labelled };
    if (usable(text)) return { text };
    const path = [];
    for (let node = element; node && node !== document.body && path.length < 5; node = node.parentElement) {
      if (node.id && unique("#" + CSS.escape(node.id))) { path.unshift("#" + CSS.escape(node.id)); break; }
      const index = Array.prototype.filter.call(node.parentElement ? node.parentElement.children : [node],
        (sibling) => sibling.localName === node.localName).indexOf(node) + 1;
      path.unshift(node.localName + ":nth-of-type(" + index + ")");
    }
    return { css: path.join(" > ") };
  }

  // A value turned into plain JSON data: cycles, DOM nodes, Errors, functions and long strings
  // made safe; getters that throw cannot stop it.
  function plain(value, depth, ancestors) {
    if (value === null || typeof value === "boolean") return value;
    if (typeof value === "number") return Number.isFinite(value) ? value : String(value);
    if (typeof value === "string") return cut(value, LIMIT.text);
    if (typeof value === "undefined") return "undefined";
    if (typeof value === "bigint") return value + "n";
    if (typeof value === "symbol") return value.toString();
    if (typeof value === "function") return "[function " + (value.name || "anonymous") + "]";
    if (value instanceof Error) return value.name + ": " + value.message;
    if (typeof Node !== "undefined" && value instanceof Node) return "<" + selector(value) + ">";
    if (ancestors.includes(value)) return "[circular]";
    if (depth >= LIMIT.depth) return Array.isArray(value) ? "[array]" : "[object]";
    ancestors.push(value);
    let result;
    if (Array.isArray(value)) {
      result = value.slice(0, LIMIT.keys).map((item) => plain(item, depth + 1, ancestors));
    } else {
      result = {};
      const keys = Object.keys(value);
      for (const key of keys.slice(0, LIMIT.keys)) {
        result[key] = SECRET_KEY.test(key.toLowerCase().replace(/[-_]/g, ""))
          ? MASK
          : quietly(() => plain(value[key], depth + 1, ancestors)) ?? "[unreadable]";
      }
      if (keys.length > LIMIT.keys) result["…"] = (keys.length - LIMIT.keys) + " more keys";
    }
    ancestors.pop();
    return result;
  }

  function describe(value) {
    if (typeof value === "string") return value;
    const data = plain(value, 0, []);
    return typeof data === "string" ? data : JSON.stringify(data);
  }

  // --- capture --------------------------------------------------------------------------------

  // Replace obj[name] with a wrapper; `undo` puts back exactly what was there (an own property
  // or one inherited from the prototype).
  function patch(obj, name, makeWrapper) {
    const original = obj && obj[name];
    if (typeof original !== "function") return;
    const own = Object.prototype.hasOwnProperty.call(obj, name);
    const wrapper = makeWrapper(original);
    obj[name] = wrapper;
    state.undo.push(() => {
      if (obj[name] !== wrapper) return; // someone wrapped us since: ours passes through now
      if (own) obj[name] = original;
      else delete obj[name];
    });
  }

  function listen(target, type, handler, options) {
    const safeHandler = (event) => quietly(() => handler(event));
    target.addEventListener(type, safeHandler, options);
    state.undo.push(() => target.removeEventListener(type, safeHandler, options));
  }

  // --- network details (captureNetworkDetails, docs/repro-kit.md) ------------------------------
  // Never a secret header (left out, not masked); bodies of text or JSON up to LIMIT.body, kept
  // as the page sent or read them and masked (secret-looking keys and form fields) when a report
  // takes them: masking per request cost more than the request (docs/performance.md). The
  // service redacts them again.

  const SECRET_HEADER = new RegExp(SECRET_KEY.source + "|signature|session|csrf|xsrf");
  const TEXTUAL = /json|text|xml|javascript|urlencoded/i;
  const JSON_PAIR = /"([^"\\]{1,64})"(\s*:\s*)("(?:[^"\\]|\\.)*"|[-+\d.eE]+|true|false|null)/g;

  function headersOf(headers) {
    const result = {};
    new Headers(headers || undefined).forEach((value, name) => {
      if (!SECRET_HEADER.test(name.replace(/[-_]/g, ""))) result[name] = cut(value, 500);
    });
    return result;
  }

  function maskBody(text) {
    let masked = text.replace(JSON_PAIR, (pair, key, colon) =>
      SECRET_KEY.test(key.toLowerCase().replace(/[-_]/g, "")) ? "\"" + key + "\"" + colon + "\"" + MASK + "\"" : pair);
    if (/^[\w.%+-]+=/.test(masked)) masked = maskUrl("?" + masked).slice(1); // a form's fields
    return maskText(masked);
  }

  function bodyField(name, body) {
    if (typeof body === "string" || (typeof URLSearchParams !== "undefined" && body instanceof URLSearchParams)) {
      return { [name]: cut(body, LIMIT.body) };
    }
    return {};
  }

  // The answer's body as the page reads it (text() or json()): no copy of the stream, which
  // cost Chromium about a millisecond per response. A failed request's body (status 400 and
  // up) is read from a copy, whether the page reads it or not: that cost is paid on failures
  // only, and those are what a report is about.
  function keepResponseBody(response, entry) {
    if (!TEXTUAL.test(response.headers.get("content-type") || "")) return;
    const keep = (body) => { entry.responseBody = cut(body, LIMIT.body); return body; };
    if (response.status >= 400) {
      response.clone().text().then(keep, () => null);
      return;
    }
    const text = Response.prototype.text;
    Object.defineProperties(response, {
      text: { configurable: true, writable: true, value() { return text.call(this).then(keep); } },
      json: { configurable: true, writable: true, value() { return text.call(this).then((body) => JSON.parse(keep(body))); } },
    });
  }

  function xhrResponse(request, entry) {
    const headers = request.getAllResponseHeaders().trim().split(/[\r\n]+/).filter(Boolean)
      .map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 1).trim()]);
    entry.responseHeaders = headersOf(headers);
    if (!TEXTUAL.test(request.getResponseHeader("content-type") || "")) return;
    const type = request.responseType;
    if (type === "" || type === "text") entry.responseBody = cut(request.responseText, LIMIT.body);
    else if (type === "json") { // written out only if a report takes it
      const parsed = request.response;
      Object.defineProperty(entry, "responseBody", { enumerable: true, configurable: true,
        get: () => cut(JSON.stringify(parsed), LIMIT.body) });
    }
  }

  function maskedDetails(entry) {
    const masked = { ...entry };
    for (const name of ["requestBody", "responseBody"]) if (typeof masked[name] === "string") masked[name] = maskBody(masked[name]);
    return masked;
  }

  function startCapture(run) {
    const { capture, buffers } = run;
    let busy = false; // a getter that logs, inside a logged object, must not recurse

    const recordConsole = (level, args) => {
      if (busy) return;
      busy = true;
      try {
        const list = Array.prototype.slice.call(args);
        const error = list.find((item) => item instanceof Error);
        const entry = { level, message: maskText(cut(list.map(describe).join(" "), LIMIT.text)), timestamp: Date.now() };
        if (error && error.stack) entry.stack = maskText(cut(error.stack, LIMIT.stack));
        buffers.console.push(entry);
      } catch (_) {
        // an argument that defeats even `plain`: the call itself still goes through
      } finally {
        busy = false;
      }
    };
    for (const level of ["log", "info", "warn", "error", "debug"]) {
      patch(console, level, (original) => function () {
        if (capture.console) recordConsole(level, arguments);
        return original.apply(this, arguments);
      });
    }
    listen(window, "error", (event) => {
      if (!capture.console || !(event instanceof ErrorEvent)) return;
      const error = event.error;
      const entry = {
        level: "error",
        message: maskText(cut("Uncaught " + (error instanceof Error ? error.name + ": " + error.message : event.message), LIMIT.text)),
        timestamp: Date.now(),
        source: maskUrl(event.filename || "") + ":" + event.lineno + ":" + event.colno,
      };
      if (error && error.stack) entry.stack = maskText(cut(error.stack, LIMIT.stack));
      buffers.console.push(entry);
    });
    listen(window, "unhandledrejection", (event) => {
      if (!capture.console) return;
      const reason = event.reason;
      const entry = { level: "error", message: maskText(cut("Unhandled rejection: " + describe(reason), LIMIT.text)), timestamp: Date.now() };
      if (reason && reason.stack) entry.stack = maskText(cut(reason.stack, LIMIT.stack));
      buffers.console.push(entry);
    });

    const recordRequest = (kind, method, url, started, status, error, details) => {
      const entry = {
        type: kind, method: String(method || "GET").toUpperCase(), url: maskUrl(absoluteUrl(url)), status,
        duration: Math.round(performance.now() - started), timestamp: Math.round(performance.timeOrigin + started),
      };
      if (error) entry.error = cut(error, 200);
      if (details) Object.assign(entry, details);
      buffers.network.push(entry);
      return entry;
    };
    patch(window, "fetch", (original) => function fetch(input, init) {
      const started = performance.now();
      const result = original.apply(this, arguments); // throws and returns exactly as before
      if (!capture.network) return result;
      try {
        const request = typeof Request !== "undefined" && input instanceof Request ? input : null;
        const method = (init && init.method) || (request ? request.method : "GET");
        const url = request ? request.url : input;
        const sent = capture.details ? quietly(() => ({
          requestHeaders: headersOf(init && init.headers ? init.headers : request && request.headers),
          ...bodyField("requestBody", init && init.body),
        })) : null;
        return result.then((response) => {
          quietly(() => {
            const entry = recordRequest("fetch", method, url, started, response.status, null, sent);
            if (!sent) return;
            entry.responseHeaders = headersOf(response.headers);
            keepResponseBody(response, entry);
          });
          return response;
        }, (error) => {
          quietly(() => recordRequest("fetch", method, url, started, 0, describe(error), sent));
          throw error;
        });
      } catch (_) {
        return result;
      }
    });
    if (typeof XMLHttpRequest !== "undefined") {
      const opened = new WeakMap();
      patch(XMLHttpRequest.prototype, "open", (original) => function open(method, url) {
        quietly(() => opened.set(this, { method, url, headers: {} }));
        return original.apply(this, arguments);
      });
      patch(XMLHttpRequest.prototype, "setRequestHeader", (original) => function setRequestHeader(name, value) {
        quietly(() => { if (capture.details) Object.assign(opened.get(this).headers, headersOf([[name, value]])); });
        return original.apply(this, arguments);
      });
      patch(XMLHttpRequest.prototype, "send", (original) => function send(body) {
        const request = opened.get(this);
        if (capture.network && request) {
          quietly(() => {
            const started = performance.now();
            const sent = capture.details ? { requestHeaders: request.headers, ...bodyField("requestBody", body) } : null;
            const done = (event) => {
              const entry = recordRequest("xhr", request.method, request.url, started, this.status,
                event.type === "load" ? null : event.type, sent);
              if (sent && event.type === "load") xhrResponse(this, entry);
            };
            for (const type of ["load", "error", "abort", "timeout"]) this.addEventListener(type, done, { once: true });
          });
        }
        return original.apply(this, arguments);
      });
    }

    const recordAction = (type, target, data, element) => {
      if (!capture.actions) return;
      const entry = { type, target, timestamp: Date.now() };
      if (data) entry.data = data;
      if (element) entry.locator = quietly(() => locatorOf(element, capture.testIdAttribute)) || undefined;
      buffers.actions.push(entry);
    };
    listen(document, "click", (event) => {
      if (event.target === run.host) return; // the reporter's own clicks are not the page's
      // Inside an open shadow root, the element itself rather than its host (a test finds it
      // by role there; the host's middle may be another element).
      const clicked = (event.composedPath && event.composedPath()[0]) || event.target;
      const target = clicked instanceof Element
        ? clicked.closest("a,button,input,select,textarea,label,summary,[role=button],[role=link]") || clicked
        : clicked;
      // No text of a field (typed, prefilled or its options), nor of an editable area; what
      // else was clicked on is masked as console text is.
      const typed = (clicked instanceof Element && clicked.closest(TYPED)) || clicked.isContentEditable;
      const text = typed ? "" : (target.textContent || target.getAttribute?.("aria-label") || "");
      const shown = cut(maskText(String(text).replace(/\s+/g, " ").trim()), 80);
      recordAction("click", selector(target), shown ? { text: shown } : null, target);
    }, { capture: true, passive: true });
    listen(document, "change", (event) => {
      const target = event.target;
      if (!(target instanceof Element) || target === run.host) return;
      if (target instanceof HTMLInputElement && target.type === "password") return; // never, not even the fact
      const verb = target instanceof HTMLSelectElement || /^(checkbox|radio|file|range|color)$/.test(target.type) ? "changed" : "typed into";
      const field = target instanceof HTMLInputElement ? target.type : target.localName === "select" ? target.type : "text";
      recordAction("input", selector(target), { text: verb + " " + selector(target), field }, target);
    }, { capture: true, passive: true });

    let lastUrl = location.href;
    const navigated = (via) => {
      const url = location.href;
      if (url === lastUrl) return;
      recordAction("navigation", maskUrl(url), { from: maskUrl(lastUrl), via });
      lastUrl = url;
    };
    for (const method of ["pushState", "replaceState"]) {
      patch(history, method, (original) => function () {
        const result = original.apply(this, arguments);
        quietly(() => navigated(method));
        return result;
      });
    }
    listen(window, "popstate", () => navigated("popstate"));
    listen(window, "hashchange", () => navigated("hashchange"));
  }

  function pageMetadata(run) {
    return {
      url: maskUrl(location.href),
      referrer: document.referrer ? maskUrl(document.referrer) : null,
      userAgent: navigator.userAgent,
      language: navigator.language,
      viewport: { width: window.innerWidth, height: window.innerHeight },
      screen: { width: screen.width, height: screen.height },
      pixelRatio: window.devicePixelRatio,
      timeZone: quietly(() => Intl.DateTimeFormat().resolvedOptions().timeZone) || null,
      release: run.options.release || null,
      widgetVersion: VERSION,
    };
  }

  // The page's own metadata (Svc.setMetadata, Svc.identify): kept even when the reporter
  // leaves out the page details; bounded as the service wants it (100 keys, 5 levels).
  function hostMetadata() {
    const result = {};
    for (const key of Object.keys(customMetadata).slice(0, 80)) result[cut(key, 64)] = plain(customMetadata[key], 1, []);
    if (identity.user) result.user = plain(identity.user, 1, []);
    return result;
  }

  // --- talking to the service -----------------------------------------------------------------

  // Its message in English (the console's, and Svc.report's callers'); said() in the reporter's.
  class Problem extends Error {
    constructor(message, { values = null, status = 0, retryable = false, retryAfter = null, errors = null } = {}) {
      super(fill(message, values));
      Object.assign(this, { status, retryable, retryAfter, errors });
      this.said = () => speak(message, values);
    }
  }

  async function call(run, path, init) {
    let response;
    try {
      response = await nativeFetch.call(window, run.api + path, {
        ...init, mode: "cors", credentials: "omit",
        headers: { "X-API-Key": run.options.projectKey, ...(init && init.headers) },
      });
    } catch (_) {
      throw new Problem(navigator.onLine === false ? MESSAGES.offline : MESSAGES.unreachable, { retryable: true });
    }
    const body = await response.json().catch(() => ({}));
    if (response.ok) return body;
    const retryable = response.status >= 500 || response.status === 429;
    const retryAfter = Number(response.headers.get("Retry-After")) || null;
    const message = MESSAGES[response.status] || MESSAGES.failed;
    const values = response.status === 422 ? { errors: describeErrors(body) } : null;
    throw new Problem(message, { values, status: response.status, retryable, retryAfter, errors: body.errors });
  }

  function describeErrors(body) {
    const errors = body && body.errors;
    if (!errors) return (body && body.detail) || "invalid";
    return Object.entries(errors).map(([field, messages]) => field + ": " + [].concat(messages).join(" ")).join("; ");
  }

  function dataUrlToBlob(dataUrl) {
    const [head, data] = dataUrl.split(",");
    const bytes = atob(data);
    const array = new Uint8Array(bytes.length);
    for (let i = 0; i < bytes.length; i += 1) array[i] = bytes.charCodeAt(i);
    return new Blob([array], { type: head.slice(5, head.indexOf(";")) });
  }

  // One try at a submission: upload what is not uploaded yet (remembering each key, so that a
  // retry sends the very same body), then file the report under its one Idempotency-Key.
  async function attempt(run, submission) {
    for (const field of Object.keys(submission.images)) {
      const blob = dataUrlToBlob(submission.images[field]);
      let uploaded;
      if (field === "replay_key") {
        uploaded = await call(run, "/upload/replay", { method: "POST", headers: { "Content-Type": "application/gzip" }, body: blob });
      } else {
        const form = new FormData();
        form.append("file", blob, field + "." + blob.type.split("/")[1]);
        uploaded = await call(run, "/upload/screenshot", { method: "POST", body: form });
      }
      submission.body[field] = uploaded.key;
      delete submission.images[field];
      outbox(run).update(submission);
    }
    return call(run, "/reports", {
      method: "POST",
      headers: { "Content-Type": "application/json", "Idempotency-Key": submission.id },
      body: JSON.stringify(submission.body),
    });
  }

  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  async function deliver(run, submission, attempts) {
    for (let tries = 1; ; tries += 1) {
      try {
        const report = await attempt(run, submission);
        outbox(run).remove(submission.id);
        return report;
      } catch (problem) {
        if (!(problem instanceof Problem)) throw problem;
        // The same key with another body: a copy of this report (another tab) was filed already.
        if (problem.status === 422 && /Idempotency-Key/.test(JSON.stringify(problem.errors || ""))) {
          outbox(run).remove(submission.id);
          return null;
        }
        if (!problem.retryable) {
          outbox(run).remove(submission.id);
          throw problem;
        }
        if (tries >= attempts || (problem.status === 0 && navigator.onLine === false)) throw problem;
        const backoff = Math.min(MAX_RETRY_SECONDS, problem.retryAfter || 2 ** (tries - 1)) * 1000;
        await sleep(backoff * (0.8 + Math.random() * 0.4));
        if (run !== state) throw problem; // destroyed meanwhile: the stored copy goes next load
      }
    }
  }

  // Reports not yet accepted live in localStorage, so that a flaky network or a closed tab loses
  // none; the Idempotency-Key they carry makes sure none is filed twice. What is stored is a copy:
  // when storage is short the copy of the report being added loses its images (with a note),
  // then is not kept; a report the reporter was told is saved is never changed afterwards.
  function outbox(run) {
    const key = "svc-outbox:" + run.options.projectKey;
    const read = () => quietly(() => JSON.parse(localStorage.getItem(key) || "[]")) || [];
    const store = (list) => {
      try {
        if (list.length) localStorage.setItem(key, JSON.stringify(list));
        else localStorage.removeItem(key);
        return true;
      } catch (_) {
        return false;
      }
    };
    return {
      all: read,
      // What the stored copy keeps: {kept: false}, or {kept: true, lost: [fields of the images
      // it left out]}.
      add(submission) {
        const list = read().filter((item) => item.id !== submission.id);
        if (list.length >= MAX_STORED) return { kept: false, lost: [] };
        const copy = { ...submission, images: { ...submission.images } };
        if (store([...list, copy])) return { kept: true, lost: [] };
        // Left out a part at a time, the largest first (a screenshot's two images are one part):
        // each part that fits is kept, a small replay beside a screenshot too large.
        const size = (fields) => fields.reduce((sum, field) => sum + JSON.stringify(copy.images[field]).length, 0);
        const parts = Object.values(Object.keys(copy.images).reduce((byPart, field) => {
          (byPart[PARTS[field] || field] = byPart[PARTS[field] || field] || []).push(field);
          return byPart;
        }, {})).sort((a, b) => size(b) - size(a));
        const lost = [];
        for (const fields of parts) {
          for (const field of fields) delete copy.images[field];
          lost.push(...fields);
          copy.body = { ...submission.body, metadata: { ...submission.body.metadata,
            widgetNote: "Left out (this browser's storage was full): " + partsNamed(lost) + "." } };
          if (store([...list, copy])) return { kept: true, lost };
        }
        return { kept: false, lost };
      },
      // After an upload: the stored copy takes the key of each image it still had.
      update(submission) {
        const list = read();
        const stored = list.find((item) => item.id === submission.id);
        if (!stored) return;
        for (const field of Object.keys(stored.images)) {
          if (!(field in submission.images)) {
            delete stored.images[field];
            stored.body[field] = submission.body[field];
          }
        }
        store(list);
      },
      remove(id) { store(read().filter((item) => item.id !== id)); },
    };
  }

  // Sends what earlier pages (or this one, offline) left behind; one tab at a time.
  function flushOutbox(run) {
    const flush = async () => {
      for (const submission of outbox(run).all()) {
        if (run !== state || run.sending.has(submission.id)) continue;
        run.sending.add(submission.id);
        try {
          await deliver(run, submission, ATTEMPTS_IN_BACKGROUND);
        } catch (problem) {
          if (problem.retryable) break; // still unreachable: the next page load or `online` tries again
        } finally {
          run.sending.delete(submission.id);
        }
      }
    };
    const locks = navigator.locks;
    const done = locks ? locks.request("svc-outbox:" + run.options.projectKey, flush) : flush();
    return done.catch((error) => warn("could not send stored reports: " + error));
  }

  async function send(run, fields, images, attempts) {
    let body = fields;
    if (typeof run.options.beforeSend === "function") {
      body = await run.options.beforeSend(body);
      if (!body) return null;
    }
    const submission = { id: randomId(), body, images, createdAt: Date.now() };
    const stored = outbox(run).add(submission);
    run.sending.add(submission.id);
    try {
      return await deliver(run, submission, attempts);
    } catch (problem) {
      if (problem instanceof Problem && problem.retryable) problem.stored = stored;
      throw problem;
    } finally {
      run.sending.delete(submission.id);
    }
  }

  function collect(run, snapshot, include, form) {
    const metadata = include.metadata ? { ...hostMetadata(), ...pageMetadata(run) } : hostMetadata();
    const user = identity.user || {};
    return {
      title: form.title,
      description: form.description || "",
      severity: form.severity || "medium",
      category: form.category || "bug",
      reporter_identifier: form.email || user.email || (user.id != null ? String(user.id) : null),
      console_logs: include.console ? snapshot.console : [],
      network_logs: include.network ? snapshot.network.map(include.details ? maskedDetails : withoutDetails) : [],
      user_actions: include.actions ? snapshot.actions : [],
      metadata,
      // The reporter's language (docs/widget.md): what svc's mails and pages to them speak.
      locale: askedLocale(run),
      hp_field: form.hp_field || "",
    };
  }

  function withoutDetails(entry) {
    const { requestHeaders, requestBody, responseHeaders, responseBody, ...rest } = entry;
    return rest;
  }

  function snapshot(run) {
    return { console: run.buffers.console.all(), network: run.buffers.network.all(), actions: run.buffers.actions.all() };
  }

  // --- screenshots ----------------------------------------------------------------------------

  const nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));

  // One frame of the current tab through the Screen Capture API; the stream stops at once.
  async function captureTab(hideUi) {
    const stream = await navigator.mediaDevices.getDisplayMedia({
      video: { displaySurface: "browser" }, audio: false,
      preferCurrentTab: true, selfBrowserSurface: "include", surfaceSwitching: "exclude",
    });
    const restore = hideUi();
    try {
      const video = document.createElement("video");
      video.muted = true;
      video.playsInline = true;
      video.srcObject = stream;
      await video.play();
      // On a busy machine the first frame can take a while; drawn before it, the picture is 0×0.
      for (let waited = 0; !video.videoWidth && waited < 5000; waited += 50) await sleep(50);
      if (!video.videoWidth) throw new Error("no frame");
      await nextFrame();
      await nextFrame();
      if (video.requestVideoFrameCallback) {
        await Promise.race([new Promise((resolve) => video.requestVideoFrameCallback(resolve)), sleep(500)]);
      }
      const canvas = document.createElement("canvas");
      canvas.width = video.videoWidth;
      canvas.height = video.videoHeight;
      canvas.getContext("2d").drawImage(video, 0, 0);
      video.srcObject = null;
      return canvas;
    } finally {
      for (const track of stream.getTracks()) track.stop();
      restore();
    }
  }

  async function imageToCanvas(blob) {
    const bitmap = await createImageBitmap(blob);
    const canvas = document.createElement("canvas");
    canvas.width = bitmap.width;
    canvas.height = bitmap.height;
    canvas.getContext("2d").drawImage(bitmap, 0, 0);
    bitmap.close();
    return canvas;
  }

  const dataUrlBytes = (dataUrl) => Math.floor((dataUrl.length - dataUrl.indexOf(",") - 1) * 3 / 4);

  // PNG when it fits the service's limit, else WebP or JPEG, else smaller: never dropped.
  function encode(canvas, maxBytes) {
    let source = canvas;
    for (let round = 0; round < 12; round += 1) {
      for (const [type, quality] of [["image/png"], ["image/webp", 0.9], ["image/jpeg", 0.85]]) {
        const dataUrl = source.toDataURL(type, quality);
        if (dataUrl.startsWith("data:" + type) && dataUrlBytes(dataUrl) <= maxBytes) return dataUrl;
      }
      const smaller = document.createElement("canvas");
      smaller.width = Math.max(1, Math.round(source.width * 0.75));
      smaller.height = Math.max(1, Math.round(source.height * 0.75));
      smaller.getContext("2d").drawImage(source, 0, 0, smaller.width, smaller.height);
      source = smaller;
    }
    return source.toDataURL("image/jpeg", 0.5);
  }

  // Pen, highlight and solid redaction boxes drawn over the screenshot, with undo and clear.
  function annotator(canvasElement, base) {
    const marks = [];
    let current = null;
    let tool = "redact";
    const context = canvasElement.getContext("2d");
    canvasElement.width = base.width;
    canvasElement.height = base.height;
    const lineWidth = Math.max(3, Math.round(base.width / 320));
    const draw = (mark) => {
      if (mark.tool === "pen") {
        context.strokeStyle = "#e11d48";
        context.lineWidth = lineWidth;
        context.lineJoin = context.lineCap = "round";
        context.beginPath();
        mark.points.forEach(([x, y], index) => (index ? context.lineTo(x, y) : context.moveTo(x, y)));
        context.stroke();
        return;
      }
      const [x0, y0] = mark.points[0];
      const [x1, y1] = mark.points[mark.points.length - 1];
      const box = [Math.min(x0, x1), Math.min(y0, y1), Math.abs(x1 - x0), Math.abs(y1 - y0)];
      if (mark.tool === "redact") {
        context.fillStyle = "#000000";
        context.fillRect(...box);
      } else {
        context.fillStyle = "rgba(250, 204, 21, 0.25)";
        context.fillRect(...box);
        context.strokeStyle = "#f59e0b";
        context.lineWidth = lineWidth;
        context.strokeRect(...box);
      }
    };
    const redraw = () => {
      context.drawImage(base, 0, 0);
      for (const mark of marks) draw(mark);
      if (current) draw(current);
    };
    const point = (event) => {
      const rect = canvasElement.getBoundingClientRect();
      return [Math.round((event.clientX - rect.left) * base.width / rect.width),
        Math.round((event.clientY - rect.top) * base.height / rect.height)];
    };
    canvasElement.addEventListener("pointerdown", (event) => {
      current = { tool, points: [point(event)] };
      canvasElement.setPointerCapture(event.pointerId);
      event.preventDefault();
    });
    canvasElement.addEventListener("pointermove", (event) => {
      if (!current) return;
      current.points.push(point(event));
      redraw();
    });
    const finish = () => {
      if (current && current.points.length > 1) marks.push(current);
      current = null;
      redraw();
    };
    canvasElement.addEventListener("pointerup", finish);
    canvasElement.addEventListener("pointercancel", finish);
    redraw();
    return {
      setTool(name) { tool = name; },
      undo() { marks.pop(); redraw(); },
      clear() { marks.length = 0; redraw(); },
      get marked() { return marks.length > 0; },
    };
  }

  // --- the reporter's dialog ------------------------------------------------------------------

  const STYLE = `
:host { all: initial !important; --svc-primary: #2563eb; --svc-on-primary: #fff; --svc-bg: #fff; --svc-fg: #111827;
  --svc-muted: #4b5563; --svc-line: #d1d5db; --svc-field: #fff; --svc-danger: #b91c1c; --svc-link: #1d4ed8; }
.svc { all: initial; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--svc-fg); }
@media (prefers-color-scheme: dark) { :host { --svc-bg: #111827; --svc-fg: #f3f4f6; --svc-muted: #9ca3af;
  --svc-line: #374151; --svc-field: #1f2937; --svc-danger: #f87171; --svc-link: #93c5fd; } }
a { color: var(--svc-link); }
* { box-sizing: border-box; font: inherit; letter-spacing: normal; }
[hidden] { display: none !important; }
.launcher { position: fixed; z-index: 2147483000; display: flex; align-items: center; gap: 8px; border: 0;
  border-radius: 999px; padding: 10px 16px; background: var(--svc-primary); color: var(--svc-on-primary);
  font-weight: 600; cursor: pointer; box-shadow: 0 4px 14px rgba(0,0,0,.25); }
.launcher:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible,
  canvas:focus-visible { outline: 3px solid var(--svc-primary); outline-offset: 2px; }
.bottom-right { right: 20px; bottom: 20px; } .bottom-left { left: 20px; bottom: 20px; }
.top-right { right: 20px; top: 20px; } .top-left { left: 20px; top: 20px; }
.launcher img, header img { width: 20px; height: 20px; object-fit: contain; }
dialog { width: min(560px, calc(100vw - 32px)); max-height: calc(100vh - 32px); padding: 0; border: 1px solid var(--svc-line);
  border-radius: 12px; background: var(--svc-bg); color: var(--svc-fg); box-shadow: 0 20px 50px rgba(0,0,0,.35); }
dialog::backdrop { background: rgba(17, 24, 39, .45); }
.capturing dialog, .capturing .launcher { visibility: hidden; }
.capturing dialog::backdrop { background: transparent; }
form, .done { padding: 18px 20px 20px; display: grid; gap: 12px; }
header { display: flex; align-items: center; gap: 10px; }
h2 { margin: 0; font-size: 18px; font-weight: 700; flex: 1; }
label, legend { display: block; font-weight: 600; font-size: 14px; }
.optional { font-weight: 400; color: var(--svc-muted); }
input, select, textarea { display: block; width: 100%; margin-top: 4px; padding: 8px 10px; color: var(--svc-fg);
  background: var(--svc-field); border: 1px solid var(--svc-line); border-radius: 8px; }
textarea { resize: vertical; min-height: 84px; }
.row { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
fieldset { border: 1px solid var(--svc-line); border-radius: 8px; padding: 10px 12px; margin: 0; display: grid; gap: 8px; }
.checks label { display: flex; gap: 8px; align-items: center; font-weight: 400; }
.checks input { width: auto; margin: 0; }
button { border-radius: 8px; padding: 8px 14px; border: 1px solid var(--svc-line); background: var(--svc-field);
  color: var(--svc-fg); cursor: pointer; }
button.primary { background: var(--svc-primary); color: var(--svc-on-primary); border-color: transparent; font-weight: 600; }
button[disabled] { opacity: .6; cursor: progress; }
button[aria-pressed="true"] { border-color: var(--svc-primary); box-shadow: inset 0 0 0 2px var(--svc-primary); }
.close { border: 0; background: transparent; font-size: 22px; line-height: 1; padding: 4px 8px; }
.buttons, .tools { display: flex; flex-wrap: wrap; gap: 8px; }
footer { display: flex; justify-content: flex-end; gap: 8px; }
canvas { width: 100%; height: auto; border: 1px solid var(--svc-line); border-radius: 6px; cursor: crosshair; touch-action: none; }
.alert { margin: 0; padding: 8px 10px; border-radius: 8px; border: 1px solid var(--svc-danger); color: var(--svc-danger); }
.hint { margin: 0; color: var(--svc-muted); font-size: 13px; }
/* Out of sight without an offset: one far to the left gave a right-to-left dialog 10,000 px to scroll sideways. */
.honeypot { position: absolute; width: 1px; height: 1px; margin: -1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.done p { margin: 0; font-size: 17px; }
.watermark { margin: 0; text-align: center; font-size: 12px; color: var(--svc-muted); }
@media (max-width: 600px) {
  dialog { width: 100vw; max-width: 100vw; height: 100%; max-height: 100%; margin: 0; border-radius: 0; border: 0; }
  .row { grid-template-columns: 1fr; }
}`;

  let sheet = null;
  function styleSheet() {
    if (!sheet) {
      sheet = new CSSStyleSheet();
      sheet.replaceSync(STYLE);
    }
    return sheet;
  }

  function el(tag, attributes, ...children) {
    const element = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
      else if (name === "text") element.textContent = value;
      else element.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children.flat()) if (child) element.append(child);
    return element;
  }

  function options(values, selected) {
    return values.map(([value, text]) => el("option", { value, selected: value === selected, text: speak(text) }));
  }

  // Text colour that stays readable on the project's colour.
  function onColour(hex) {
    const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255)
      .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
    return 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.4 ? "#111827" : "#ffffff";
  }

  function buildUi(run) {
    const config = run.config;
    const host = el("div", { "data-svc-widget": VERSION });
    const root = host.attachShadow({ mode: "closed" });
    root.adoptedStyleSheets = [styleSheet()];
    if (/^#[0-9a-f]{6}$/i.test(config.primaryColor)) {
      host.style.setProperty("--svc-primary", config.primaryColor);
      host.style.setProperty("--svc-on-primary", onColour(config.primaryColor));
    }
    const logo = () => (config.logoUrl ? el("img", { src: config.logoUrl, alt: "" }) : null);
    const position = run.options.position || config.position;
    const launcher = el("button", { type: "button", class: "launcher " + position, "aria-haspopup": "dialog",
      hidden: run.options.launcher === false }, logo(), el("span", { text: speak(config.buttonText) }));
    const wrapper = el("div", { class: "svc", lang: words.locale, dir: words.dir }, launcher);
    root.append(wrapper);

    let dialog = null;
    const close = () => { if (dialog && dialog.open) dialog.close(); };
    // While the tab is captured, the widget is not in the picture.
    const hideUi = () => {
      wrapper.classList.add("capturing");
      return () => wrapper.classList.remove("capturing");
    };
    const open = (prefill = {}) => {
      if (dialog && dialog.open) return;
      dialog = dialogFor(run, { close, logo, hideUi }, prefill);
      wrapper.append(dialog);
      dialog.showModal();
    };
    launcher.addEventListener("click", () => open());

    return {
      host,
      open,
      close,
      destroy() { close(); host.remove(); },
      mount() { (document.body || document.documentElement).append(host); },
    };
  }

  // The report dialog: the form, what it includes, and its sending. `ui` is what buildUi
  // lends it: close, logo and hideUi (for the capture).
  function dialogFor(run, ui, prefill) {
    const { close, logo } = ui;
    const config = run.config;
    const frozen = snapshot(run);
    const alert = el("p", { class: "alert", role: "alert", hidden: true });
    const showAlert = (text) => { alert.textContent = text; alert.hidden = !text; };
    if (run.configProblem) showAlert(run.configProblem.said());
    const user = identity.user || {};
    const title = el("input", { id: "svc-title", name: "title", required: true, maxlength: 200, autocomplete: "off", autofocus: true });
    title.value = prefill.title || "";
    const description = el("textarea", { id: "svc-description", name: "description", maxlength: 20000, rows: 4 });
    description.value = prefill.description || "";
    const severity = el("select", { id: "svc-severity", name: "severity" }, options(SEVERITIES, prefill.severity || "medium"));
    const category = el("select", { id: "svc-category", name: "category" }, options(CATEGORIES, prefill.category || "bug"));
    const email = el("input", { id: "svc-email", name: "email", type: "email", maxlength: 320, autocomplete: "email" });
    email.value = prefill.email || user.email || "";
    const honeypot = el("input", { id: "svc-website", name: "hp_field", tabindex: "-1", autocomplete: "off" });
    const submit = el("button", { type: "submit", class: "primary" }, speak("Send report"));
    const includes = includeChoices(run, frozen);
    const screenshot = run.config.enableScreenshot ? screenshotPanel(run, ui.hideUi) : null;
    const form = el("form", { novalidate: true },
      el("header", {}, logo(), el("h2", { id: "svc-heading", text: speak(config.modalTitle) }),
        el("button", { type: "button", class: "close", "aria-label": speak("Close"), onclick: close }, "×")),
      alert,
      el("div", {}, el("label", { for: "svc-title", text: speak("Title") }), title),
      el("div", {}, el("label", { for: "svc-description" }, speak("What happened?") + " ", el("span", { class: "optional", text: speak("(optional)") })), description),
      el("div", { class: "row" },
        el("div", {}, el("label", { for: "svc-severity", text: speak("Severity") }), severity),
        el("div", {}, el("label", { for: "svc-category", text: speak("Category") }), category)),
      el("div", {}, el("label", { for: "svc-email" }, speak("Your e-mail") + " ", el("span", { class: "optional",
        text: run.config.mailsReporters ? speak("(optional: we mail you a receipt and news of this report)") : speak("(optional, for follow-up questions)") })), email),
      el("div", { class: "honeypot", "aria-hidden": "true" }, el("label", { for: "svc-website", text: "Leave this field empty" }), honeypot),
      screenshot && screenshot.element,
      includes.element,
      el("footer", {}, el("button", { type: "button", onclick: close }, speak("Cancel")), submit),
      config.showWatermark ? el("p", { class: "watermark", text: speak("Bug reports by svc") }) : null);
    const done = el("div", { class: "done", role: "status", hidden: true });
    const box = el("dialog", { "aria-labelledby": "svc-heading" }, form, done);
    box.addEventListener("close", () => box.remove());
    if (screenshot) box.addEventListener("paste", screenshot.paste);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      showAlert("");
      if (!title.value.trim()) {
        showAlert(speak("Please give the report a title."));
        title.setAttribute("aria-invalid", "true");
        title.focus();
        return;
      }
      title.removeAttribute("aria-invalid");
      // The browser's own check of an e-mail field (type=email), in the reporter's language: a
      // receipt can only reach an address.
      if (email.value.trim() && email.validity.typeMismatch) {
        showAlert(speak("Please give an e-mail address such as name@example.com, or leave it empty."));
        email.setAttribute("aria-invalid", "true");
        email.focus();
        return;
      }
      email.removeAttribute("aria-invalid");
      submit.disabled = true;
      submit.textContent = speak("Sending…");
      form.setAttribute("aria-busy", "true");
      try {
        const chosen = includes.chosen();
        const images = { ...(screenshot ? await screenshot.images() : {}), ...await replayImage(chosen) };
        const fields = collect(run, frozen, chosen, {
          title: title.value.trim(), description: description.value, severity: severity.value,
          category: category.value, email: email.value.trim(), hp_field: honeypot.value,
        });
        const report = await send(run, fields, images, ATTEMPTS_IN_DIALOG);
        // An address the server cannot write to (ann@localhost): kept as a name, no receipt.
        const noReceipt = report && report.receipt === false && email.value.trim() && run.config.mailsReporters
          ? " " + speak("No mail will come about it: that is not an address we can write to.") : "";
        finish(done, form, close, (report
          ? speak("Thanks — {tracking_id}. Your report has been filed.", { tracking_id: report.trackingId })
          : speak("Thanks — your report has been filed.")) + noReceipt, report && report.statusUrl);
      } catch (problem) {
        if (problem instanceof Problem && problem.retryable && !problem.stored.kept) {
          showAlert(problem.said() + " " + speak(MESSAGES.notSaved));
        } else if (problem instanceof Problem && problem.retryable) {
          const names = partNames(problem.stored.lost);
          const lost = names.length > 1 ? LOST.both : LOST[names[0]];
          finish(done, form, close, [problem.said(), speak(MESSAGES.saved), lost && speak(lost)].filter(Boolean).join(" "));
          flushWhenOnline(run);
        } else {
          showAlert(problem instanceof Problem ? problem.said() : speak(MESSAGES.failed));
        }
      } finally {
        submit.disabled = false;
        submit.textContent = speak("Send report");
        form.removeAttribute("aria-busy");
      }
    });
    return box;
  }

  // statusUrl: the report's status page, when the project keeps reporters up to date.
  function finish(done, form, close, text, statusUrl) {
    const closeButton = el("button", { type: "button", class: "primary", onclick: close }, speak("Close"));
    const follow = /^https?:\/\//.test(statusUrl || "")
      ? el("p", {}, el("a", { href: statusUrl, target: "_blank", rel: "noopener noreferrer", text: speak("Follow your report: see its status, add to it") }))
      : null;
    done.replaceChildren(...[el("p", { text }), follow, el("footer", {}, closeButton)].filter(Boolean));
    form.hidden = true;
    done.hidden = false;
    closeButton.focus();
  }

  // Capture, attach or paste a picture, and mark it up; images() encodes it to fit the
  // service's limit. hideUi takes the widget out of the page while the tab is captured.
  function screenshotPanel(run, hideUi) {
    let shot = null; // { base: canvas, annotate: annotator }
    const canCapture = !!(navigator.mediaDevices && navigator.mediaDevices.getDisplayMedia);
    const file = el("input", { type: "file", accept: "image/*", hidden: true, "aria-label": speak("Attach an image") });
    const canvas = el("canvas", { "aria-label": speak("Screenshot: drag to draw on it") });
    const hint = el("p", { class: "hint", text: speak("Drag on the picture to mark it. Redact hides what should not be seen.") });
    const tools = el("div", { class: "tools", role: "toolbar", "aria-label": speak("Annotation tools") });
    const area = el("div", { hidden: true }, tools, canvas, hint);
    const status = el("p", { class: "hint", role: "status" });
    const problem = el("p", { class: "alert", role: "alert", hidden: true });
    // What went well is a quiet status; what went wrong an alert, in the error's colour.
    const say = (text, wrong) => {
      status.textContent = wrong ? "" : text;
      problem.textContent = wrong ? text : "";
      problem.hidden = !wrong;
    };
    const toolButtons = [["redact", speak("Redact")], ["highlight", speak("Highlight")], ["pen", speak("Pen")]].map(([name, text]) =>
      el("button", { type: "button", "aria-pressed": String(name === "redact"), onclick: (event) => {
        shot.annotate.setTool(name);
        for (const button of toolButtons) button.setAttribute("aria-pressed", String(button === event.currentTarget));
      } }, text));
    tools.append(...toolButtons,
      el("button", { type: "button", onclick: () => shot.annotate.undo() }, speak("Undo")),
      el("button", { type: "button", onclick: () => shot.annotate.clear() }, speak("Clear")),
      el("button", { type: "button", onclick: () => { shot = null; area.hidden = true; say(speak("Screenshot removed.")); } }, speak("Remove")));
    const use = (base) => {
      shot = { base, annotate: annotator(canvas, base) };
      area.hidden = false;
      say(speak("Screenshot added."));
    };
    const attach = async (blob) => {
      try {
        use(await imageToCanvas(blob));
      } catch (_) {
        say(speak("That file could not be read as an image. Try a PNG, JPEG, GIF or WebP file."), true);
      }
    };
    file.addEventListener("change", () => { if (file.files[0]) attach(file.files[0]); file.value = ""; });
    const captureButton = canCapture ? el("button", { type: "button", onclick: async () => {
      try {
        use(await captureTab(hideUi));
      } catch (error) {
        say(error && error.name === "NotAllowedError"
          ? speak("The page could not be captured (the browser or you refused it). Attach an image instead.")
          : speak("The page could not be captured (not supported here). Attach an image instead."), true);
      }
    } }, speak("Capture this page")) : null;
    const element = el("fieldset", {}, el("legend", { text: speak("Screenshot") }),
      el("div", { class: "buttons" }, captureButton,
        el("button", { type: "button", onclick: () => file.click() }, speak("Attach an image")), file),
      el("p", { class: "hint", text: speak("You can also paste an image here.") }), status, problem, area);
    return {
      element,
      paste(event) {
        const item = Array.from(event.clipboardData ? event.clipboardData.items : []).find((entry) => entry.type.startsWith("image/"));
        if (item) { event.preventDefault(); attach(item.getAsFile()); }
      },
      async images() {
        if (!shot) return {};
        const limit = run.config.maxScreenshotBytes || DEFAULT_MAX_SCREENSHOT;
        const images = { screenshot_url: encode(shot.base, limit) };
        if (shot.annotate.marked) images.annotated_screenshot_url = encode(canvas, limit);
        return images;
      },
    };
  }

  function includeChoices(run, frozen) {
    const capture = run.capture;
    const seconds = run.config.replaySeconds;
    const choices = [
      ["console", capture.console, () => speakPlural("Console messages: {count} entry", "Console messages: {count} entries", frozen.console.length)],
      ["network", capture.network, () => speakPlural("Network requests: {count} request", "Network requests: {count} requests", frozen.network.length)],
      ["details", capture.details, () => speak("Request and response details (headers, bodies up to 10 KB)")],
      ["replay", capture.replay && !!replay, () => (run.config.replayMaskAllText === false
        ? speakPlural("Replay of the last {count} second of this page (its text as shown, which may repeat what you typed)", "Replay of the last {count} seconds of this page (its text as shown, which may repeat what you typed)", seconds)
        : speakPlural("Replay of the last {count} second of this page (its layout, text hidden; never what you typed)", "Replay of the last {count} seconds of this page (its layout, text hidden; never what you typed)", seconds))],
      ["actions", capture.actions, () => speakPlural("Recent clicks and page changes: {count} action", "Recent clicks and page changes: {count} actions", frozen.actions.length)],
      ["metadata", true, () => speak("Page address, browser and screen size")],
    ].filter(([, enabled]) => enabled);
    const boxes = {};
    const element = el("fieldset", { class: "checks" }, el("legend", { text: speak("Also send, to help fix it") }),
      choices.map(([name, , text]) => {
        boxes[name] = el("input", { type: "checkbox", id: "svc-include-" + name, checked: true });
        return el("label", { for: "svc-include-" + name }, boxes[name], text());
      }));
    return {
      element,
      chosen: () => Object.fromEntries(["console", "network", "details", "actions", "metadata", "replay"].map((name) => [name, !!(boxes[name] && boxes[name].checked)])),
    };
  }

  const replayOptions = (config) => ({ seconds: config.replaySeconds, maskAllText: config.replayMaskAllText !== false });

  function startReplay(run) {
    if (replay) return replay.start(replayOptions(run.config));
    if (replayRequested) return;
    replayRequested = true;
    document.addEventListener("svc:replay-ready", (event) => {
      replay = event.detail;
      if (state && state.capture.replay) replay.start(replayOptions(state.config));
    }, { once: true });
    const script = document.createElement("script");
    script.src = run.options.endpoint + "/widget-replay.js";
    script.async = true;
    script.crossOrigin = "anonymous";
    (document.head || document.documentElement).append(script);
  }

  // The replay as a data: URL, like the screenshots, so that a report waiting in localStorage
  // keeps it (or drops it first when storage is short).
  async function replayImage(include) {
    if (!include.replay || !replay) return {};
    const blob = await Promise.resolve(quietly(() => replay.take())).catch(() => null);
    if (!blob) return {};
    const url = await new Promise((resolve) => {
      const reader = new FileReader();
      reader.onload = () => resolve(reader.result);
      reader.onerror = () => resolve(null);
      reader.readAsDataURL(blob);
    });
    return url ? { replay_key: url } : {};
  }

  function flushWhenOnline(run) {
    if (run.onlineHooked) return;
    run.onlineHooked = true;
    listen(window, "online", () => flushOutbox(run));
  }

  // --- starting and stopping ------------------------------------------------------------------

  function askedLocale(run) {
    return run.options.locale || (navigator.languages && navigator.languages[0]) || navigator.language || null;
  }

  // svc's words for a language (GET /widget-<locale>.json, beside this script: cached as it is),
  // or null for English, which is written here.
  async function loadWords(run, locale) {
    if (!locale || /^en(-|$)/i.test(locale)) return null;
    const address = run.options.endpoint + "/widget-" + encodeURIComponent(locale) + ".json";
    const response = await nativeFetch.call(window, address, { mode: "cors", credentials: "omit" });
    const found = response.ok ? await response.json() : null;
    return found && found.messages && found.plurals ? found : null;
  }

  async function loadConfig(run) {
    // The reporter's words load beside the settings; a project that fixes one language
    // (settings.widget.locale) has that one loaded instead.
    const asked = askedLocale(run);
    const wordsFor = (locale) => loadWords(run, locale).catch(() => null);
    const loading = wordsFor(asked);
    try {
      const config = await call(run, "/projects/widget-config", { method: "GET" });
      Object.assign(run.config, config);
    } catch (problem) {
      if (problem.status === 401 || problem.status === 403) {
        run.configProblem = problem;
        warn(problem.message);
      }
    }
    const fixed = run.config.locale && run.config.locale !== "auto" ? run.config.locale : null;
    const found = await (fixed && fixed !== asked ? wordsFor(fixed) : loading);
    if (run !== state) return;
    words = found || ENGLISH;
    const capture = run.capture;
    capture.console = capture.console && run.config.captureConsole !== false;
    capture.network = capture.network && run.config.captureNetwork !== false;
    capture.actions = capture.actions && run.config.captureActions !== false && run.config.enableSessionRecording !== false;
    capture.details = capture.network && run.config.captureNetworkDetails === true;
    capture.testIdAttribute = run.config.testIdAttribute || "data-testid";
    capture.replay = run.config.enableReplay === true && run.options.enableReplay !== false;
    if (capture.replay) quietly(() => startReplay(run));
    for (const name of ["console", "network", "actions"]) if (!capture[name]) run.buffers[name].clear();
    const started = performance.now();
    quietly(() => {
      run.ui = buildUi(run);
      run.host = run.ui.host;
      run.ui.mount();
    });
    quietly(() => performance.measure("svc:render", { start: started }));
  }

  function start(given) {
    const startedAt = performance.now();
    if (!given || typeof given.projectKey !== "string" || !given.projectKey) {
      throw new TypeError("Svc.init: projectKey is required");
    }
    const endpoint = String(given.endpoint || "").replace(/\/+$/, "");
    const run = {
      options: { ...given, endpoint },
      api: endpoint + "/api/v1",
      config: { ...CONFIG_DEFAULTS },
      // Details wait for the project's setting (widget-config): off until it says on.
      capture: { console: given.captureConsole !== false, network: given.captureNetwork !== false, actions: given.captureActions !== false, details: false },
      buffers: { console: ring(LIMIT.console), network: ring(LIMIT.network), actions: ring(LIMIT.actions) },
      undo: [],
      sending: new Set(),
      ui: null,
      host: null,
      configProblem: null,
    };
    state = run;
    if (given.user) identity.user = given.user;
    if (given.metadata) Object.assign(customMetadata, given.metadata);
    try {
      startCapture(run);
    } catch (error) {
      warn("capture could not start: " + error);
    }
    const whenReady = () => {
      loadConfig(run).then(() => flushOutbox(run), () => {});
    };
    // The configuration and the button wait for a task of their own: the page's start-up comes first.
    if (document.readyState === "loading") listen(document, "DOMContentLoaded", whenReady);
    else setTimeout(whenReady, 0);
    quietly(() => performance.measure("svc:init", { start: startedAt }));
    return run;
  }

  function stop() {
    const run = state;
    if (!run) return;
    state = null;
    words = ENGLISH;
    if (replay) quietly(() => replay.stop());
    if (run.ui) quietly(() => run.ui.destroy());
    for (const undo of run.undo.reverse()) quietly(undo);
  }

  function scriptOptions(script) {
    if (!script || !script.dataset || !script.dataset.projectKey) return null;
    const data = script.dataset;
    return {
      projectKey: data.projectKey,
      endpoint: data.endpoint || quietly(() => new URL(".", script.src).href) || location.origin,
      release: data.release,
      position: /^(top|bottom)-(left|right)$/.test(data.position || "") ? data.position : undefined,
    };
  }

  const Svc = {
    version: VERSION,
    init(given) {
      stop();
      start(given);
      return Svc;
    },
    open(prefill) {
      if (state && state.ui) state.ui.open(prefill || {});
    },
    close() {
      if (state && state.ui) state.ui.close();
    },
    identify(user) {
      identity.user = user ? plain(user, 1, []) : null;
    },
    setMetadata(values) {
      if (values && typeof values === "object") Object.assign(customMetadata, values);
    },
    // Files a report without the dialog; resolves with the filed report (or null when
    // beforeSend dropped it), rejects with an Error whose message says why in plain words.
    async report(fields) {
      const run = state;
      if (!run) throw new Error("Svc.report: call Svc.init first");
      const given = fields || {};
      const frozen = snapshot(run);
      const include = { console: true, network: true, details: true, actions: true, metadata: true, replay: true };
      const body = collect(run, frozen, include, {
        title: String(given.title || "").trim(), description: given.description, severity: given.severity,
        category: given.category, email: given.email || given.reporter_identifier,
      });
      for (const name of ["console_logs", "network_logs", "user_actions"]) if (Array.isArray(given[name])) body[name] = given[name];
      if (given.metadata) Object.assign(body.metadata, given.metadata);
      try {
        return await send(run, body, await replayImage(include), ATTEMPTS_IN_BACKGROUND);
      } catch (problem) {
        if (problem instanceof Problem && problem.retryable) flushWhenOnline(run);
        throw problem;
      }
    },
    destroy: stop,
  };

  function boot(tag) {
    window.Svc = Svc;
    try {
      const fromTag = scriptOptions(tag);
      if (fromTag) start(fromTag);
    } catch (error) {
      warn("could not start: " + error);
    }
  }

  // An error the page's own code raises while a widget hook is on the stack (a failed fetch, a
  // refused pushState) reaches the page muted when the widget came from another origin without
  // CORS: "Script error." and no unhandledrejection. A snippet's copy loads itself once more
  // with crossorigin (the HTTP cache answers) and lets that one run; if that fails, it runs
  // itself. A page that loads the script to call Svc.init gets Svc at once (docs/widget.md).
  const tag = document.currentScript;
  const crossOrigin = tag && tag.src && quietly(() => new URL(tag.src).origin !== location.origin);
  if (crossOrigin && tag.crossOrigin === null && scriptOptions(tag)) {
    const copy = document.createElement("script");
    for (const attribute of Array.from(tag.attributes)) copy.setAttribute(attribute.name, attribute.value);
    copy.nonce = tag.nonce;
    copy.crossOrigin = "anonymous";
    copy.addEventListener("error", () => boot(tag));
    (document.head || document.documentElement).append(copy);
  } else {
    boot(tag);
  }
})();
