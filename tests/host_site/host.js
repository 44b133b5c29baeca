// The customer's own script: it runs before the widget and keeps what the page had, so that
// the tests can check what the widget patched and what it put back.
window.originals = {
  fetch: window.fetch,
  xhrOpen: XMLHttpRequest.prototype.open,
  xhrSend: XMLHttpRequest.prototype.send,
  xhrSetRequestHeader: XMLHttpRequest.prototype.setRequestHeader,
  log: console.log,
  info: console.info,
  warn: console.warn,
  error: console.error,
  debug: console.debug,
  pushState: history.pushState,
  replaceState: history.replaceState,
};
const FAILING = "http://localhost:1/orders";

window.shop = {
  // What a page does before someone reports a bug: logs, an uncaught error, a rejected promise,
  // requests that work and that fail, a route change.
  async noise() {
    const cart = { items: 2, owner: { name: "Ada" } };
    cart.self = cart;
    console.log("App booted", { user: { id: 7 } });
    console.info("Cart loaded", cart);
    console.warn("Slow response from /api/data");
    console.error(new Error("Cart total is undefined"));
    console.debug(document.getElementById("pay"));
    console.log("x".repeat(5000));
    console.log("session eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl");
    setTimeout(() => { throw new Error("Boom from a timer"); });
    Promise.reject(new Error("Nobody catches this"));
    await fetch("/api/data?pwd=hunter2&page=1").then((response) => response.json());
    await fetch(FAILING).catch(() => null);
    await new Promise((resolve) => {
      const request = new XMLHttpRequest();
      request.open("GET", "/api/missing");
      request.onloadend = resolve;
      request.send();
    });
    history.pushState({ step: 2 }, "", "/checkout#step=2");
    await new Promise((resolve) => setTimeout(resolve, 50));
  },

  // What the page's own code sees of fetch, XHR, console and history: the tests compare it with
  // and without the widget.
  async behaviour() {
    const out = {};
    const ok = await fetch("/api/data");
    out.ok = [ok.status, ok.ok, ok.statusText, await ok.json(), ok instanceof Response];
    const missing = await fetch("/api/missing");
    out.missing = [missing.status, await missing.json()];
    const posted = await fetch(new Request("/api/data", { method: "POST", body: "x" }));
    out.request = [posted.status, posted.url.endsWith("/api/data")];
    try {
      await fetch(FAILING);
      out.failed = "resolved";
    } catch (error) {
      out.failed = [error.name, error.message, error instanceof TypeError];
    }
    try {
      fetch.call({}, "/api/data");
      out.wrongThis = "no error";
    } catch (error) {
      out.wrongThis = [error.name, error.message];
    }
    let unhandled = 0;
    const count = (event) => { unhandled += 1; event.preventDefault(); };
    window.addEventListener("unhandledrejection", count);
    fetch(FAILING); // nobody catches it: the page still hears of it
    await new Promise((resolve) => setTimeout(resolve, 300));
    window.removeEventListener("unhandledrejection", count);
    out.unhandled = unhandled;
    out.consoleReturns = [console.log("probe"), console.error("probe"), console.warn.call(console, "probe")];
    out.xhr = await new Promise((resolve) => {
      const request = new XMLHttpRequest();
      request.open("GET", "/api/data");
      request.responseType = "json";
      request.onload = () => resolve([request.status, request.response, request.readyState]);
      request.send();
    });
    out.xhrError = await new Promise((resolve) => {
      const request = new XMLHttpRequest();
      request.open("GET", FAILING);
      request.onerror = (event) => resolve([event.type, request.status, request.readyState]);
      request.send();
    });
    try {
      new XMLHttpRequest().send();
      out.sendBeforeOpen = "no error";
    } catch (error) {
      out.sendBeforeOpen = error.name;
    }
    out.pushState = history.pushState({ n: 1 }, "", "/checkout?probe=1");
    out.location = [location.pathname + location.search, history.state];
    return out;
  },
};

// The shop's own record of what was clicked, and where the page was then, for the repro kit's
// test: one visit per tab, numbered, sent with sendBeacon (which the widget does not capture).
const visit = sessionStorage.getItem("visit") || String(Math.random()).slice(2);
sessionStorage.setItem("visit", visit);
let clicks = 0;
document.addEventListener("click", (event) => {
  if (event.target.closest("[data-svc-widget]")) return; // the bug reporter's own UI
  const element = event.target.closest("a,button,input,textarea,select,[contenteditable]") || event.target;
  const what = element.dataset.testid || element.id || element.name || element.textContent.trim();
  const number = (clicks += 1);
  setTimeout(() => navigator.sendBeacon("/clicks", JSON.stringify({ visit, number, what, url: location.href })));
}, true);

document.addEventListener("DOMContentLoaded", () => {
  document.getElementById("pay").addEventListener("click", () => {
    document.getElementById("out").textContent = "Paid";
  });
  // A single-page app's link: the route changes without a page load.
  document.getElementById("orders-link").addEventListener("click", (event) => {
    event.preventDefault();
    history.pushState({}, "", "/orders?tab=open");
    document.getElementById("out").textContent = "Your orders";
  });
  // The replay's page (tests/test_replay_browser.py): a password a button shows, a DOM change.
  document.getElementById("show-secret").addEventListener("click", () => {
    document.getElementById("secret").type = "text";
  });
  // Text the page mirrors from a field: what was typed, shown as page text.
  document.getElementById("nickname").addEventListener("input", (event) => {
    document.getElementById("greeting").textContent = `Hello, ${event.target.value}!`;
  });
  document.getElementById("add-line").addEventListener("click", () => {
    const lines = document.getElementById("lines");
    lines.append(Object.assign(document.createElement("li"), { textContent: `Line ${lines.children.length + 1} added` }));
    console.info(`Line ${lines.children.length} added`);
  });
  document.querySelector("[data-testid=apply-coupon]").addEventListener("click", async () => {
    const coupon = document.querySelector("[name=coupon]").value;
    const headers = { "Content-Type": "application/json", "X-Shop-Client": "web/1.0",
      Authorization: "Bearer shop-session-secret" };
    const priced = await fetch("/api/price", { method: "POST", headers,
      body: JSON.stringify({ coupon, password: "hunter2-body" }) });
    await priced.json();
    await fetch(FAILING, { method: "POST", headers, body: JSON.stringify({ coupon }) }).catch(() => null);
    document.getElementById("out").textContent = "Coupon tried";
  });
});
