"""What replay costs the page that records (docs/replay.md, docs/performance.md).

    .venv/bin/python -m bench.replay [--seconds 60] [--mutations 5000]

A page in Debian's headless Chromium runs a scripted session: `--mutations` DOM changes spread
over `--seconds` (a list item added, a text changed, a class toggled, in turn), three ways:
without the widget, with the widget and replay off, with replay on (60 s window), alternating,
`--rounds` times each. For each, the main thread's busy time over the session (Chromium's
`TaskDuration`, from the DevTools protocol's Performance domain), the median of the rounds; what
replay adds, against the widget without it, as a share of the session. Then, with replay on:
the events kept, their size as JSON (the buffer's memory, roughly), the upload a report would
carry (gzipped), and the replay script's size gzipped.

No svc is needed: the page, widget.js and /widget-replay.js (assembled from node_modules as svc
serves it) come from Playwright's routing, and the widget's settings from a stubbed fetch.
"""

import argparse
import gzip
import statistics
from pathlib import Path

from playwright.sync_api import sync_playwright

from bench.common import write_result
from harness.browser import launch_chromium
from svc import replay

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = ("bare", "widget", "replay")
WIDGET = ROOT / "svc" / "widget" / "widget.js"
ORIGIN = "http://bench.invalid"
SETTINGS = '{"enableReplay": %s, "replaySeconds": 60}'
PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>bench</title><script>
window.fetch = function stubFetch() {
  const headers = { "content-type": "application/json" };
  return Promise.resolve(new Response(window.settings, { headers }));
};
</script></head><body><h1>A page</h1><input id="name"><ul id="list"></ul><p id="text">0</p>
</body></html>"""
WITH_WIDGET = (
    '<script src="/widget.js" data-project-key="svc_pub_bench" data-endpoint="%s"></script>'
)

SESSION = """async ([seconds, mutations]) => {
  const list = document.getElementById("list");
  const text = document.getElementById("text");
  const gap = (seconds * 1000) / mutations;
  const started = performance.now();
  for (let i = 0; i < mutations; i += 1) {
    const item = () => Object.assign(document.createElement("li"), { textContent: "Item " + i });
    if (i % 3 === 0) list.append(item());
    else if (i % 3 === 1) text.textContent = "Changed " + i;
    else list.classList.toggle("odd");
    if (list.children.length > 200) list.firstElementChild.remove();
    const next = started + (i + 1) * gap;
    const wait = next - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
  await new Promise((resolve) => setTimeout(resolve, 50));
}"""


def busy_seconds(cdp) -> float:
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return metrics["TaskDuration"]


def session(browser, variant: str, options) -> dict:
    page = browser.new_page()
    settings = SETTINGS % ("true" if variant == "replay" else "false")
    widget = WITH_WIDGET % ORIGIN if variant != "bare" else ""
    html = PAGE.replace("<script>", f"<script>window.settings = {settings!r};", 1).replace(
        "</body>", widget + "</body>"
    )
    script, _ = replay._assembled(replay.folder_of(None))
    page.route(f"{ORIGIN}/", lambda route: route.fulfill(body=html, content_type="text/html"))
    page.route(f"{ORIGIN}/widget.js", lambda route: route.fulfill(
        body=WIDGET.read_bytes(), content_type="text/javascript"))  # fmt: skip
    page.route(f"{ORIGIN}/widget-replay.js", lambda route: route.fulfill(
        body=script, content_type="text/javascript"))  # fmt: skip
    page.add_init_script(
        'document.addEventListener("svc:replay-ready", (e) => { window.recorder = e.detail; });'
    )
    page.goto(f"{ORIGIN}/")
    if variant == "replay":
        page.wait_for_function("() => window.recorder && window.recorder.size() > 0")
    elif variant == "widget":
        page.wait_for_selector("[data-svc-widget]", state="attached")
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")
    before = busy_seconds(cdp)
    page.evaluate(SESSION, [options.seconds, options.mutations])
    result = {"busy_s": busy_seconds(cdp) - before}
    if variant == "replay":
        result.update(
            page.evaluate("""async () => {
          const upload = await window.recorder.take();
          return { events: window.recorder.size(), upload_bytes: upload ? upload.size : 0,
                   buffer_json_bytes: JSON.stringify(window.recorder.events()).length };
        }""")
        )
    page.close()
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60, help="length of the session")
    parser.add_argument("--mutations", type=int, default=5000, help="DOM changes in it")
    parser.add_argument("--rounds", type=int, default=3, help="sessions of each kind")
    options = parser.parse_args()
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        rounds = [
            {variant: session(browser, variant, options) for variant in VARIANTS}
            for _ in range(options.rounds)
        ]
        browser.close()
    # The last round's figures, with the median busy time of all rounds.
    runs = {
        variant: {
            **rounds[-1][variant],
            "busy_s": statistics.median(one[variant]["busy_s"] for one in rounds),
        }
        for variant in VARIANTS
    }
    script, _ = replay._assembled(replay.folder_of(None))
    added = runs["replay"]["busy_s"] - runs["widget"]["busy_s"]
    result = {
        "seconds": options.seconds,
        "mutations": options.mutations,
        "rounds": options.rounds,
        "busy_bare_s": round(runs["bare"]["busy_s"], 3),
        "busy_widget_s": round(runs["widget"]["busy_s"], 3),
        "busy_replay_s": round(runs["replay"]["busy_s"], 3),
        # The goal's measure: what recording adds to the main thread, as a share of the session.
        "added_share_of_session": round(added / options.seconds, 4),
        "added_share_of_busy": round(added / runs["widget"]["busy_s"], 3),
        "events": runs["replay"]["events"],
        "buffer_json_bytes": runs["replay"]["buffer_json_bytes"],
        "upload_bytes": runs["replay"]["upload_bytes"],
        "script_gzip_bytes": len(gzip.compress(script, 9)),
    }
    path = write_result("replay", result)
    print(
        f"replay: {options.mutations} mutations in {options.seconds:g} s; main thread busy "
        f"{result['busy_bare_s']} s bare, {result['busy_widget_s']} s with the widget, "
        f"{result['busy_replay_s']} s with replay: +{result['added_share_of_session']:.2%} of the "
        f"session; {result['events']} events, {result['buffer_json_bytes']:,} bytes as JSON, "
        f"upload {result['upload_bytes']:,} bytes; script {result['script_gzip_bytes']:,} bytes "
        f"gzipped -> {path}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
