"""What the widget costs the page that embeds it, in headless Chromium (docs/performance.md).

    .venv/bin/python -m bench.widget [--rounds 15] [--calls 20000]

- init: evaluating widget.js (parse, compile, run) plus `Svc.init()`, on the main thread, in a
  fresh page each round; and `svc:render`, the widget's own measure of building its button.
- per fetch and per console call: the same page times N calls with the widget's hooks on and off
  (`Svc.destroy()` takes them off, `Svc.init()` puts them back), alternating, and the difference
  divided by N is what the widget adds to one call. `fetch` and `console.log` are replaced with
  stubs before the widget loads, so the network and DevTools' console add no noise: what is left
  is the hook itself (recording the entry included).

- per fetch with network details (the project's `captureNetworkDetails`, docs/repro-kit.md):
  the same on/off comparison on a page whose stubbed fetch answers 10 KB of JSON, each call
  sending 10 KB of JSON with three headers and reading the answer's JSON, as a page does. The
  widget then keeps the headers, masks the request body and reads (a copy of) the answer: its
  asynchronous read is inside the timed block, which waits for the page to be idle at its end.

- per failed fetch with network details: the same, the stub answering 500 with the 10 KB JSON,
  which the page never reads: the widget reads a copy of a failed answer (docs/repro-kit.md), a
  cost paid on failures only.

No svc is needed: the page and the script are served by Playwright's routing, and the widget's
configuration request goes to the stubbed fetch.
"""

import argparse
import statistics
from pathlib import Path

from playwright.sync_api import sync_playwright

from bench.common import percentile, write_result
from harness.browser import launch_chromium

SCRIPT = Path(__file__).resolve().parent.parent / "svc" / "widget" / "widget.js"
PAGE_URL = "http://bench.invalid/"
PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>bench</title><script>
window.fetch = function stubFetch() { return Promise.resolve(new Response("{}")); };
console.log = function stubLog() {};
</script></head><body><h1>A page</h1><button id="pay">Pay</button></body></html>"""
OPTIONS = {"projectKey": "svc_pub_bench", "endpoint": "http://svc.invalid"}
DETAILS_URL = "http://bench.invalid/details"
# The stub answers the widget's settings with details on, and the page's calls with 10 KB JSON.
DETAILS_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>bench</title><script>
const lines = Array.from({ length: 100 },
  (_, n) => ({ sku: "item-" + n, price: n * 1.5, name: "x".repeat(60) }));
window.answer = JSON.stringify({ total: 41.5, token: "t-1", lines });
window.sent = JSON.stringify({ coupon: "SAVE10", password: "p", lines });
window.fetch = function stubFetch(input) {
  const body = String(input).includes("widget-config") ? '{"captureNetworkDetails": true}' : answer;
  const status = String(input).includes("/api/fail") ? 500 : 200;
  const headers = { "content-type": "application/json" };
  return Promise.resolve(new Response(body, { status, headers }));
};
</script></head><body><h1>A page</h1></body></html>"""

# Calls timed with the widget's hooks on and off, in alternating blocks; each block ends when the
# page is idle, so the widget's asynchronous work is inside it. `call` is one call's body.
ON_OFF = """async ([calls, blocks, options]) => {
  const idle = () => new Promise((resolve) => setTimeout(resolve));
  const configured = async () => {
    while (!document.querySelector("[data-svc-widget]")) await idle();
  };
  const headers = { "Content-Type": "application/json", "X-Client": "web/1.0",
    Accept: "application/json" };
  const timeFetch = async () => {
    const started = performance.now();
    for (let i = 0; i < calls; i += 1) { CALL }
    await idle();
    return performance.now() - started;
  };
  let on = 0, off = 0;
  for (let block = 0; block < blocks; block += 1) {
    Svc.destroy();
    off += await timeFetch();
    Svc.init(options);
    await configured();
    on += await timeFetch();
  }
  return { NAME_added_us: ((on - off) / (calls * blocks)) * 1000,
           NAME_bare_us: (off / (calls * blocks)) * 1000, body_bytes: answer.length };
}"""
# Sends 10 KB of JSON with three headers and reads the answer's JSON, as a page does.
PER_DETAILED_FETCH = ON_OFF.replace("NAME", "detailed_fetch").replace(
    "CALL",
    'const response = await fetch("/api/price?i=" + i, { method: "POST", headers, body: sent });'
    " await response.json();",
)
# A failed request whose answer the page ignores: the widget reads a copy of it.
PER_FAILED_FETCH = ON_OFF.replace("NAME", "failed_fetch").replace(
    "CALL", 'await fetch("/api/fail?i=" + i);'
)

INIT = """([source, options]) => {
  const started = performance.now();
  const script = document.createElement("script");
  script.textContent = source;
  document.head.append(script);  // an inline script runs on insertion
  const evaluated = performance.now();
  Svc.init(options);
  return { evaluate: evaluated - started, init: performance.now() - evaluated };
}"""

RENDERED = """() => new Promise((resolve) => {
  const look = () => {
    const [entry] = performance.getEntriesByName("svc:render");
    if (entry) resolve(entry.duration); else setTimeout(look, 10);
  };
  look();
})"""

# Per call, hooks on minus hooks off, in alternating blocks so that drift hits both alike.
PER_CALL = """async ([calls, blocks, options]) => {
  const timeFetch = async () => {
    const started = performance.now();
    for (let i = 0; i < calls; i += 1) await fetch("/api/cart?page=" + i);
    return performance.now() - started;
  };
  const timeLog = () => {
    const started = performance.now();
    for (let i = 0; i < calls; i += 1) console.log("GET /api/cart", { status: 200, items: i });
    return performance.now() - started;
  };
  const totals = { fetchOn: 0, fetchOff: 0, logOn: 0, logOff: 0 };
  for (let block = 0; block < blocks; block += 1) {
    Svc.destroy();
    totals.fetchOff += await timeFetch();
    totals.logOff += timeLog();
    Svc.init(options);
    totals.fetchOn += await timeFetch();
    totals.logOn += timeLog();
  }
  const perCall = (on, off) => ((on - off) / (calls * blocks)) * 1000;
  return {
    fetch_added_us: perCall(totals.fetchOn, totals.fetchOff),
    fetch_bare_us: (totals.fetchOff / (calls * blocks)) * 1000,
    console_added_us: perCall(totals.logOn, totals.logOff),
    console_bare_us: (totals.logOff / (calls * blocks)) * 1000,
  };
}"""


def serve(route) -> None:
    body = DETAILS_PAGE if route.request.url == DETAILS_URL else PAGE
    route.fulfill(status=200, content_type="text/html", body=body)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15, help="fresh pages for the init figures")
    parser.add_argument("--calls", type=int, default=20000, help="calls per timed block")
    parser.add_argument("--blocks", type=int, default=5, help="on/off blocks per page")
    options = parser.parse_args()
    source = SCRIPT.read_text()

    inits, evaluations, renders, per_call = [], [], [], []
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        for _ in range(options.rounds):
            page = browser.new_page()
            page.route(PAGE_URL, serve)
            page.goto(PAGE_URL)
            timing = page.evaluate(INIT, [source, OPTIONS])
            evaluations.append(timing["evaluate"])
            inits.append(timing["evaluate"] + timing["init"])
            renders.append(page.evaluate(RENDERED))
            page.close()
        for _ in range(3):
            page = browser.new_page()
            page.route(PAGE_URL, serve)
            page.goto(PAGE_URL)
            page.evaluate(INIT, [source, OPTIONS])
            per_call.append(page.evaluate(PER_CALL, [options.calls, options.blocks, OPTIONS]))
            page.close()
            page = browser.new_page()
            page.route(DETAILS_URL, serve)
            page.goto(DETAILS_URL)
            page.evaluate(INIT, [source, OPTIONS])
            calls = max(1, options.calls // 10)  # each call moves 20 KB
            per_call[-1].update(page.evaluate(PER_DETAILED_FETCH, [calls, options.blocks, OPTIONS]))
            per_call[-1].update(page.evaluate(PER_FAILED_FETCH, [calls, options.blocks, OPTIONS]))
            page.close()
        browser.close()

    def median_of(name: str) -> float:
        return round(statistics.median(run[name] for run in per_call), 2)

    result = {
        "init_p50_ms": round(statistics.median(inits), 2),
        "init_p90_ms": round(percentile(inits, 0.9), 2),
        "evaluate_p50_ms": round(statistics.median(evaluations), 2),
        "render_p50_ms": round(statistics.median(renders), 2),
        "fetch_added_us": median_of("fetch_added_us"),
        "fetch_bare_us": median_of("fetch_bare_us"),
        "console_added_us": median_of("console_added_us"),
        "console_bare_us": median_of("console_bare_us"),
        "detailed_fetch_added_us": median_of("detailed_fetch_added_us"),
        "detailed_fetch_bare_us": median_of("detailed_fetch_bare_us"),
        "detailed_body_bytes": per_call[0]["body_bytes"],
        "failed_fetch_added_us": median_of("failed_fetch_added_us"),
        "failed_fetch_bare_us": median_of("failed_fetch_bare_us"),
        "rounds": options.rounds,
        "calls": options.calls * options.blocks,
        "script_bytes": len(source.encode()),
    }
    path = write_result("widget", result)
    print(
        f"widget: init p50 {result['init_p50_ms']} ms (p90 {result['init_p90_ms']}; of it "
        f"evaluating the script {result['evaluate_p50_ms']}), render {result['render_p50_ms']} ms; "
        f"per fetch +{result['fetch_added_us']} µs (stub alone {result['fetch_bare_us']} µs), "
        f"per console call +{result['console_added_us']} µs "
        f"(stub alone {result['console_bare_us']} µs); per fetch with details, "
        f"{result['detailed_body_bytes']} bytes of JSON each way, "
        f"+{result['detailed_fetch_added_us']} µs "
        f"(page alone {result['detailed_fetch_bare_us']} µs); per failed fetch whose answer the "
        f"page ignores +{result['failed_fetch_added_us']} µs "
        f"(page alone {result['failed_fetch_bare_us']} µs) -> {path}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
