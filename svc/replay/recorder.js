// svc's replay recorder (docs/replay.md). Served at /widget-replay.js after rrweb's recorder,
// which it is given; loaded by the widget only when the project records replays. It keeps the
// last `seconds` of the page as rrweb events, in memory only, and hands them to the widget when
// a report is sent: nothing leaves the page otherwise.
function startSvcReplay(rrwebRecord) {
  "use strict";
  const MAX_COMPRESSED = 2 * 1024 * 1024;
  // Each segment starts with a full snapshot (rrweb's checkout), so playing can begin at any
  // segment; the oldest goes once the next one alone covers the window.
  let segments = [];
  let seconds = 60;
  let maskAllText = true;
  let stopRecording = null;
  // Text typed into an editable element is what a reporter typed: masked whatever the setting.
  const EDITABLE = "[contenteditable]:not([contenteditable='false'])";
  const MASKED = "[data-svc-mask], " + EDITABLE;
  const UNMASKED = "[data-svc-unmask]";
  // Every kind of field, hidden ones too (a CSRF token is a hidden input's value).
  const FIELDS = ["color", "date", "datetime-local", "email", "month", "number", "range", "search",
    "tel", "text", "time", "url", "week", "textarea", "select", "password", "hidden"];
  // Attributes that carry words rather than structure: masked with the text (a card's
  // data-last4, an aria-label "Card ending 4242", a title, a placeholder).
  const WORDY = /^(aria-label|aria-description|aria-valuetext|aria-placeholder|title|alt|placeholder|label|value|content|summary|data-(?!svc-).*)$/i;

  const stars = (text) => String(text).replace(/[\S]/g, "*");

  function readable(element) {
    if (!element || !element.closest) return !maskAllText;
    if (element.closest(MASKED)) return false;
    return !maskAllText || !!element.closest(UNMASKED);
  }

  function maskAttributes(attributes, element) {
    if (!attributes || readable(element)) return;
    for (const name of Object.keys(attributes)) {
      if (WORDY.test(name) && typeof attributes[name] === "string") attributes[name] = stars(attributes[name]);
    }
  }

  // rrweb masks text and field values itself; the words in attributes are masked here, in the
  // full snapshots' nodes and in the changes, before an event is kept.
  function maskSnapshot(node) {
    if (!node) return;
    if (node.type === 2) maskAttributes(node.attributes, rrwebRecord.record.mirror.getNode(node.id));
    for (const child of node.childNodes || []) maskSnapshot(child);
  }

  function masked(event) {
    if (event.type === 2) maskSnapshot(event.data.node);
    if (event.type === 3 && event.data.source === 0) {
      for (const added of event.data.adds || []) maskSnapshot(added.node);
      for (const changed of event.data.attributes || []) {
        maskAttributes(changed.attributes, rrwebRecord.record.mirror.getNode(changed.id));
      }
    }
    return event;
  }

  function emit(event, isCheckout) {
    event = masked(event);
    if (isCheckout || !segments.length) segments.push([]);
    segments[segments.length - 1].push(event);
    const windowStart = Date.now() - seconds * 1000;
    while (segments.length > 1 && segments[1][0].timestamp <= windowStart) segments.shift();
  }

  async function gzip(text) {
    const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"));
    return new Response(stream).blob();
  }

  const api = {
    start(options) {
      if (stopRecording) return;
      seconds = Math.min(300, Math.max(10, Number(options && options.seconds) || 60));
      maskAllText = !(options && options.maskAllText === false);
      stopRecording = rrwebRecord.record({
        emit,
        checkoutEveryNms: seconds * 500,
        // Every field's value, hidden and password ones always (also once a "show password"
        // button made one a text field); all text but [data-svc-unmask]'s (by default), else
        // the text of [data-svc-mask] and of editable elements; nothing of [data-svc-block]
        // nor the widget.
        maskAllInputs: false,
        maskInputOptions: Object.fromEntries(FIELDS.map((kind) => [kind, true])),
        maskInputFn: stars,
        maskTextSelector: maskAllText ? "*" : MASKED,
        maskTextFn: (text, element) => (readable(element) ? text : stars(text)),
        blockSelector: "[data-svc-block], [data-svc-widget]",
        slimDOMOptions: { script: true, comment: true, headFavicon: true, headWhitespace: true,
          headMetaSocial: true, headMetaRobots: true, headMetaHttpEquiv: true, headMetaVerification: true },
        recordCanvas: false,
        collectFonts: false,
        sampling: { mousemove: 100, scroll: 150, input: "last" },
      }) || null;
    },
    // The window's events, gzipped, at most MAX_COMPRESSED (the oldest segments go first);
    // null when even the newest segment alone is larger.
    async take() {
      for (;;) {
        const blob = await gzip(JSON.stringify(segments.flat()));
        if (blob.size <= MAX_COMPRESSED) return segments.length ? blob : null;
        if (segments.length <= 1) return null;
        segments.shift();
      }
    },
    stop() {
      if (stopRecording) stopRecording();
      stopRecording = null;
      segments = [];
    },
    size: () => segments.reduce((count, segment) => count + segment.length, 0),
    events: () => segments.flat(),
  };
  document.dispatchEvent(new CustomEvent("svc:replay-ready", { detail: api }));
}
