// Building the page. Everything that came from a user or a widget goes in as text nodes, never
// as markup, so a report titled "<img onerror=...>" shows those characters and runs nothing.

export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(element.dataset, value);
    else if (value === true) element.setAttribute(name, "");
    else element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

// element.append() would write null as the text "null": this skips what a view leaves out.
export function appendTo(element, ...children) {
  append(element, children);
}

export function replaceContent(element, ...children) {
  element.replaceChildren();
  append(element, children);
}

export function formatTime(iso) {
  if (!iso) return "never";
  return new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

export function formatEpochMillis(value) {
  const date = typeof value === "number" ? new Date(value) : new Date(String(value));
  if (Number.isNaN(date.getTime())) return String(value ?? "");
  return date.toLocaleTimeString(undefined, { hour12: false }) +
    "." + String(date.getMilliseconds()).padStart(3, "0");
}

// "1 report", "2 reports": English's plural rule, by Intl's (the dashboard speaks English).
const PLURAL = new Intl.PluralRules("en");
export function plural(count, one, other = `${one}s`) {
  return `${count.toLocaleString()} ${PLURAL.select(count) === "one" ? one : other}`;
}

export function label(value) {
  return String(value ?? "").replace(/_/g, " ");
}

// A badge says its value in words; the colour only repeats it.
export function badge(kind, value) {
  return h("span", { class: `badge ${kind}-${value}` }, label(value));
}

export function field(labelText, input, hint) {
  const name = input.name || Math.random().toString(36).slice(2);
  const id = input.id || `field-${name.replace(/[^\w-]/g, "-")}`;
  input.id = id;
  const errorId = `${id}-error`;
  input.setAttribute("aria-describedby", errorId);
  return h("div", { class: "field" },
    h("label", { for: id }, labelText),
    input,
    hint ? h("small", { class: "hint" }, hint) : null,
    h("p", { class: "field-error", id: errorId, role: "alert", hidden: true }));
}

export function select(name, options, selected, attributes = {}) {
  return h("select", { name, ...attributes },
    options.map(([value, text]) =>
      h("option", { value, selected: String(value) === String(selected ?? "") }, text)));
}

// Shows an API error in plain words: field errors beside their inputs, the rest at the top of
// the form (or in `fallback` when there is no form).
export function showError(error, form, fallback) {
  const place = form?.querySelector(".form-error") || fallback;
  clearErrors(form);
  let unplaced = [];
  let placed = 0;
  for (const [name, messages] of Object.entries(error.errors || {})) {
    const input = inputFor(form, name);
    const slot = input && form.querySelector(`#${CSS.escape(input.id)}-error`);
    if (slot) {
      slot.textContent = messages.join(" ");
      slot.hidden = false;
      input.setAttribute("aria-invalid", "true");
      placed += 1;
    } else {
      unplaced.push(`${inWords(name)}: ${messages.join(" ")}`);
    }
  }
  if (place) {
    // "Correct the highlighted fields" only when some field is highlighted.
    const lead = error.errors && !placed ? "The service did not accept this:" : error.message;
    const text = [lead, ...unplaced].join(" ");
    place.textContent = text;
    place.hidden = false;
  }
  // The first problem in view, beside its field: one far above the button went unseen.
  const first = form?.querySelector("[aria-invalid=true]") || place;
  first?.scrollIntoView?.({ block: "center" });
  first?.focus?.({ preventScroll: true });
}

// The input an error names: `settings.allowed_origins.2` falls back to
// `settings.allowed_origins`, and `settings.widget.replay_seconds` to a form's `replay_seconds`
// (the widget's form names its inputs without the path the API gives them).
function inputFor(form, name) {
  const parts = name.split(".");
  for (let start = 0; form && start < parts.length; start += 1) {
    for (let end = parts.length; end > start; end -= 1) {
      const input = form.querySelector(`[name="${CSS.escape(parts.slice(start, end).join("."))}"]`);
      if (input) return input;
    }
  }
  return null;
}

// A field the form does not show, in words: `settings.widget.replay_seconds` is "replay seconds".
function inWords(name) {
  const parts = name.split(".").filter((part) => !/^\d+$/.test(part));
  return (parts[parts.length - 1] || name).replace(/_/g, " ");
}

export function clearErrors(form) {
  if (!form) return;
  for (const slot of form.querySelectorAll(".field-error, .form-error")) {
    slot.textContent = "";
    slot.hidden = true;
  }
  for (const input of form.querySelectorAll("[aria-invalid]")) input.removeAttribute("aria-invalid");
}

export function formError() {
  return h("p", { class: "form-error", role: "alert", tabindex: "-1", hidden: true });
}

export function notice(text) {
  return h("p", { class: "notice", role: "status" }, text);
}

// A form whose submit button is disabled while the request runs and whose API errors land
// beside their fields. `submit(values, form)` receives the named inputs' values.
export function form(attributes, children, submit) {
  const element = h("form", { novalidate: true, ...attributes }, formError(), children);
  element.addEventListener("submit", async (event) => {
    event.preventDefault();
    const button = element.querySelector("button[type=submit]");
    clearErrors(element);
    if (button) button.disabled = true;
    try {
      await submit(Object.fromEntries(new FormData(element)), element);
    } catch (error) {
      if (!error.status) throw error;
      showError(error, element);
    } finally {
      if (button) button.disabled = false;
    }
  });
  return element;
}

// A modal question; resolves true only when the user confirms.
export function confirmDialog(question, confirmText = "Confirm") {
  return new Promise((resolve) => {
    const dialog = h("dialog", { class: "confirm", "aria-label": question },
      h("p", {}, question),
      h("form", { method: "dialog", class: "actions" },
        h("button", { value: "cancel", class: "secondary" }, "Cancel"),
        h("button", { value: "confirm", class: "danger" }, confirmText)));
    dialog.addEventListener("close", () => {
      resolve(dialog.returnValue === "confirm");
      dialog.remove();
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

export function copyButton(getText, what = "value") {
  const button = h("button", { type: "button", class: "secondary copy" }, "Copy");
  button.setAttribute("aria-label", `Copy ${what}`);
  button.addEventListener("click", async () => {
    const text = getText();
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // Clipboard refused (plain http, or no permission): select the text for Ctrl+C instead.
      const scratch = h("textarea", { class: "visually-hidden" }, text);
      document.body.append(scratch);
      scratch.select();
      document.execCommand("copy");
      scratch.remove();
    }
    button.textContent = "Copied";
    setTimeout(() => { button.textContent = "Copy"; }, 1500);
  });
  return button;
}

// A picture that opens full size in a dialog when clicked (or Enter/Space on its button).
export function zoomableImage(src, alt) {
  const image = h("img", { src, alt, loading: "lazy" });
  const open = () => {
    const dialog = h("dialog", { class: "lightbox", "aria-label": alt },
      h("form", { method: "dialog" }, h("button", { class: "secondary" }, "Close")),
      h("img", { src, alt }));
    dialog.addEventListener("close", () => dialog.remove());
    dialog.addEventListener("click", (event) => { if (event.target === dialog) dialog.close(); });
    document.body.append(dialog);
    dialog.showModal();
  };
  return h("button", { type: "button", class: "thumbnail", title: `Enlarge: ${alt}`, onclick: open },
    image);
}

// A button whose action's API errors are shown right beside it, in plain words.
// "Newer", "Page 2 of 5", "Older" for a log read a page at a time; null when it has one page.
// `go(page)` loads the page asked for.
export function pageButtons(labelText, listing, page, go) {
  const pages = Math.max(1, Math.ceil(listing.total / listing.pageSize));
  if (pages === 1) return null;
  const to = (number, text) => h("button", { type: "button", class: "secondary", onclick: () => go(number) }, text);
  return h("nav", { class: "pager", "aria-label": labelText },
    page > 1 ? to(page - 1, "Newer") : null,
    h("span", {}, `Page ${page} of ${pages}`),
    page < pages ? to(page + 1, "Older") : null);
}

export function actionButton(text, action, attributes = {}) {
  const problem = h("span", { class: "action-error", role: "alert", hidden: true });
  const button = h("button", { type: "button", class: "secondary", ...attributes }, text);
  button.addEventListener("click", async () => {
    problem.hidden = true;
    button.disabled = true;
    try {
      await action();
    } catch (error) {
      if (!error.status) throw error;
      problem.textContent = error.message;
      problem.hidden = false;
    } finally {
      button.disabled = false;
    }
  });
  return h("span", { class: "action" }, button, problem);
}
