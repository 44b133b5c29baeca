"""The widget in a real browser: Debian's headless Chromium, driven by Playwright, on a host
page served from another origin than svc with a strict Content-Security-Policy
(tests/host_site). The widget talks to the test app over real HTTP.

The widget's UI lives in a closed shadow root, which Playwright's locators cannot enter; the
`shadow_open` init script makes `attachShadow` open for the tests that click through the UI.
`test_the_ui_lives_in_a_closed_shadow_root` checks the real mode without it.
"""

import io
import json
import re
import time

import pytest
from PIL import Image
from playwright.sync_api import Page, expect

from harness.client import csrf
from harness.service import wait_until
from svc import i18n
from tests.browser import OPEN_SHADOW_ROOTS, save_screenshot
from tests.helpers import PseudoTranslations, pseudo, team_with_project
from tests.host_site import HostSite

# In the browser the database cannot change the answer: SQLite alone (tests/conftest.py).
pytestmark = [pytest.mark.browser, pytest.mark.any_database]

VIEWPORT = {"width": 1024, "height": 720}


@pytest.fixture
def project_owner(app):
    """Ada, signed in through the test client, with a project; `.key` is its API key."""
    return team_with_project(app)


@pytest.fixture
def host_site(live_server):
    with HostSite(live_server) as site:
        yield site


@pytest.fixture
def context(browser):
    browser_context = browser.new_context(viewport=VIEWPORT, locale="en-GB")
    yield browser_context
    browser_context.close()


@pytest.fixture
def page(context) -> Page:
    tab = context.new_page()
    tab.add_init_script(OPEN_SHADOW_ROOTS)
    return tab


@pytest.fixture
def capturing_page(full_browser) -> Page:
    """A tab of the full browser, which can capture itself (the headless shell cannot)."""
    browser_context, tab = reporter_page(full_browser, "en-GB")
    yield tab
    browser_context.close()


def open_shop(page: Page, host_site, key: str, **params) -> None:
    query = "&".join(f"{name}={value}" for name, value in {"project": key, **params}.items())
    page.goto(f"{host_site.url}/?{query}")


def launcher(page: Page):
    return page.get_by_role("button", name="Report a bug")


def dialog(page: Page):
    return page.get_by_role("dialog", name="Report a bug")


def reports(project_owner) -> list[dict]:
    return project_owner.get("/api/v1/reports").get_json()["items"]


def wait_for_reports(project_owner, count: int, seconds: float = 15) -> list[dict]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = reports(project_owner)
        if len(found) >= count:
            return found
        time.sleep(0.1)
    raise AssertionError(f"expected {count} reports, have {len(reports(project_owner))}")


def image(project_owner, key: str) -> Image.Image:
    response = project_owner.get(f"/api/v1/screenshots/{key}")
    assert response.status_code == 200
    return Image.open(io.BytesIO(response.data)).convert("RGB")


def stored_reports(page: Page) -> list:
    """What the widget keeps in localStorage until the service has it."""
    return page.evaluate(
        "Object.keys(localStorage).filter((key) => key.startsWith('svc-outbox'))"
        ".flatMap((key) => JSON.parse(localStorage.getItem(key)))"
    )


def draw_box(page: Page, canvas, start: tuple[float, float], end: tuple[float, float]) -> None:
    """Drag across the canvas from one fraction of its size to another."""
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    page.mouse.move(box["x"] + box["width"] * start[0], box["y"] + box["height"] * start[1])
    page.mouse.down()
    for step in range(1, 6):
        fraction = step / 5
        x = start[0] + (end[0] - start[0]) * fraction
        y = start[1] + (end[1] - start[1]) * fraction
        page.mouse.move(box["x"] + box["width"] * x, box["y"] + box["height"] * y)
    page.mouse.up()


def test_captures_annotates_and_files_a_report(capturing_page, host_site, project_owner):
    page = capturing_page
    open_shop(page, host_site, project_owner.key, release="shop@4.2.0")
    expect(launcher(page)).to_be_visible()
    save_screenshot(page, "widget-launcher")
    page.evaluate("shop.noise()")
    page.locator("#email").fill("ada@example.com")
    page.locator("#password").fill("hunter2-secret")
    page.locator("#pay").click()
    expect(page.locator("#out")).to_have_text("Paid")

    launcher(page).click()
    form = dialog(page)
    expect(form).to_be_visible()
    expect(form).to_contain_text(re.compile(r"Console messages: \d+ entries"))
    expect(form).to_contain_text("Network requests: 3 requests")
    form.get_by_label("Title").fill("Pay button charges twice")
    form.get_by_label("What happened?").fill("I clicked Pay once and got two receipts.")
    form.get_by_label("Severity").select_option("high")
    form.get_by_label("Your e-mail").fill("reporter@example.com")
    save_screenshot(page, "widget-dialog")

    form.get_by_role("button", name="Capture this page").click()
    canvas = form.get_by_label("Screenshot: drag to draw on it")
    expect(canvas).to_be_visible()
    draw_box(page, canvas, (0.2, 0.2), (0.5, 0.5))  # Redact is the tool in hand
    form.get_by_role("button", name="Highlight").click()
    draw_box(page, canvas, (0.6, 0.6), (0.8, 0.8))
    save_screenshot(page, "widget-annotation")
    form.get_by_role("button", name="Send report").click()
    expect(form.get_by_role("status")).to_contain_text("Thanks — WS-1")
    # Reporter updates are off: no link to follow, and no stray "null" in its place.
    expect(form.get_by_role("status")).to_have_text(
        re.compile(r"^Thanks — WS-1\. Your report has been filed\.\s*Close$")
    )

    report = project_owner.get("/api/v1/reports/WS-1").get_json()
    assert report["title"] == "Pay button charges twice"
    assert report["description"] == "I clicked Pay once and got two receipts."
    assert (report["severity"], report["category"]) == ("high", "bug")
    assert report["reporterIdentifier"] == "reporter@example.com"

    console = report["consoleLogs"]
    levels = {entry["level"] for entry in console}
    assert {"log", "info", "warn", "error", "debug"} <= levels
    messages = [entry["message"] for entry in console]
    assert any('App booted {"user":{"id":7}}' in message for message in messages)
    assert any('"self":"[circular]"' in message for message in messages)
    assert any(message == "<button#pay>" for message in messages)
    assert any(len(message) < 2100 and "more characters" in message for message in messages)
    assert not any("eyJhbGciOiJIUzI1NiJ9" in message for message in messages)
    cart_error = next(e for e in console if "Cart total is undefined" in e["message"])
    assert "host.js" in cart_error["stack"]
    uncaught = next(e for e in console if e["message"] == "Uncaught Error: Boom from a timer")
    assert uncaught["level"] == "error" and "host.js" in uncaught["stack"]
    rejected = next(e for e in console if "Nobody catches this" in e["message"])
    assert rejected["message"].startswith("Unhandled rejection") and rejected["stack"]

    network = report["networkLogs"]
    assert [(e["type"], e["method"], e["status"]) for e in network] == [
        ("fetch", "GET", 200),
        ("fetch", "GET", 0),
        ("xhr", "GET", 404),
    ]
    assert network[0]["url"].endswith("/api/data?pwd=[REDACTED]&page=1")  # masked in the page
    assert network[1]["url"] == "http://localhost:1/orders" and network[1]["error"]
    for entry in network:
        assert entry["duration"] >= 0 and entry["timestamp"] > 1_700_000_000_000
        assert "requestHeaders" not in entry and "body" not in entry

    actions = report["userActions"]
    assert {"type": "navigation", "via": "pushState"}.items() <= {
        "type": actions[0]["type"],
        **actions[0]["data"],
    }.items()
    assert actions[0]["target"].endswith("/checkout#step=2")
    typed = [a for a in actions if a["type"] == "input"]
    assert [a["data"]["text"] for a in typed] == ["typed into input#email"]  # never the password
    click = next(a for a in actions if a["type"] == "click" and a["target"] == "button#pay")
    assert click["data"] == {"text": "Pay now"}
    assert "hunter2" not in json.dumps(report)
    assert "ada@example.com" not in json.dumps(actions)

    metadata = report["metadata"]
    assert metadata["url"] == f"{host_site.url}/checkout#step=2"
    assert metadata["viewport"] == VIEWPORT
    assert metadata["release"] == "shop@4.2.0"
    assert metadata["language"] == "en-GB"
    assert report["locale"] == "en-GB"  # navigator.languages[0], the reporter's language
    assert {"userAgent", "screen", "pixelRatio", "timeZone", "referrer"} <= set(metadata)

    original = image(project_owner, report["screenshotUrl"])
    annotated = image(project_owner, report["annotatedScreenshotUrl"])
    assert original.size == annotated.size == (VIEWPORT["width"], VIEWPORT["height"])
    width, height = original.size
    inside = [
        (x, y)
        for x in range(int(width * 0.25), int(width * 0.45), 7)
        for y in range(int(height * 0.25), int(height * 0.45), 7)
    ]
    assert {annotated.getpixel(point) for point in inside} == {(0, 0, 0)}
    assert {original.getpixel(point) for point in inside} != {(0, 0, 0)}
    # The page itself is in the picture, and the widget is not: its launcher is hidden.
    assert original.getpixel((5, 5)) == (255, 255, 255)


def test_the_ui_lives_in_a_closed_shadow_root(context, host_site, project_owner):
    page = context.new_page()  # without the test's open-shadow-root script
    open_shop(page, host_site, project_owner.key)
    page.wait_for_selector("[data-svc-widget]", state="attached")
    assert page.evaluate("document.querySelector('[data-svc-widget]').shadowRoot") is None
    # The host's stylesheet (Comic Sans, `button {all: unset}`) does not reach the launcher.
    font = page.evaluate("getComputedStyle(document.querySelector('[data-svc-widget]')).fontFamily")
    assert "Comic Sans" not in font
    assert page.evaluate("Object.keys(window).filter((name) => /svc/i.test(name))") == ["Svc"]


def test_offline_reports_wait_in_the_browser_and_go_once(context, page, host_site, project_owner):
    open_shop(page, host_site, project_owner.key)
    expect(launcher(page)).to_be_visible()
    context.set_offline(True)
    launcher(page).click()
    dialog(page).get_by_label("Title").fill("Filed on the train")
    dialog(page).get_by_role("button", name="Send report").click()
    expect(dialog(page).get_by_role("status")).to_contain_text("saved in this browser")
    assert len(stored_reports(page)) == 1

    context.set_offline(False)
    page.reload()
    [report] = wait_for_reports(project_owner, 1)
    assert report["title"] == "Filed on the train"
    wait_until(lambda: stored_reports(page) == [], message="the stored report to go")
    page.reload()
    expect(launcher(page)).to_be_visible()
    time.sleep(1)
    assert len(reports(project_owner)) == 1


def test_a_lost_answer_is_retried_under_the_same_key_and_files_once(
    page, host_site, project_owner, live_server
):
    keys = []

    def lose_the_first_answer(route):
        keys.append(route.request.headers.get("idempotency-key"))
        if len(keys) == 1:
            route.fetch()  # the service files the report; the page never hears back
            route.abort("connectionreset")
        else:
            route.continue_()

    page.route(f"{live_server}/api/v1/reports", lose_the_first_answer)
    open_shop(page, host_site, project_owner.key)
    launcher(page).click()
    dialog(page).get_by_label("Title").fill("Retried after a lost answer")
    dialog(page).get_by_role("button", name="Send report").click()
    expect(dialog(page).get_by_role("status")).to_contain_text("Thanks — WS-1", timeout=15_000)
    assert len(keys) == 2 and keys[0] == keys[1] and keys[0]
    assert [r["title"] for r in reports(project_owner)] == ["Retried after a lost answer"]


def test_a_wrong_key_says_the_reporter_is_not_set_up(page, host_site, project_owner):
    open_shop(page, host_site, "svc_pub_" + "x" * 40)
    launcher(page).click()
    expect(dialog(page).get_by_role("alert")).to_have_text(
        "This bug reporter is not set up correctly (its project key was refused)."
    )
    dialog(page).get_by_label("Title").fill("Will not go")
    dialog(page).get_by_role("button", name="Send report").click()
    expect(dialog(page).get_by_role("alert")).to_contain_text("not set up correctly")
    assert reports(project_owner) == []


def test_a_site_outside_the_allowed_origins_is_told_so(page, host_site, project_owner):
    project_owner.patch(
        f"/api/v1/projects/{project_owner.project['id']}",
        json={"settings": {"allowed_origins": ["https://shop.example.com"]}},
        headers=csrf(project_owner),
    )
    open_shop(page, host_site, project_owner.key)
    launcher(page).click()
    expect(dialog(page).get_by_role("alert")).to_have_text(
        "This site is not allowed to send bug reports to this project."
    )


def test_destroy_puts_back_everything_it_patched(page, host_site, project_owner):
    open_shop(page, host_site, project_owner.key)
    expect(launcher(page)).to_be_visible()
    patched = page.evaluate(
        "Object.keys(originals).filter((name) => "
        "({fetch, xhrOpen: XMLHttpRequest.prototype.open, xhrSend: XMLHttpRequest.prototype.send,"
        " xhrSetRequestHeader: XMLHttpRequest.prototype.setRequestHeader,"
        " log: console.log, info: console.info, warn: console.warn, error: console.error,"
        " debug: console.debug, pushState: history.pushState, "
        " replaceState: history.replaceState})[name] !== originals[name])"
    )
    assert sorted(patched) == sorted(
        [
            "fetch",
            "xhrOpen",
            "xhrSend",
            "xhrSetRequestHeader",
            "log",
            "info",
            "warn",
            "error",
            "debug",
            "pushState",
            "replaceState",
        ]
    )
    page.evaluate("Svc.destroy()")
    assert page.evaluate(
        "fetch === originals.fetch && XMLHttpRequest.prototype.open === originals.xhrOpen"
        " && XMLHttpRequest.prototype.send === originals.xhrSend && console.log === originals.log"
        " && XMLHttpRequest.prototype.setRequestHeader === originals.xhrSetRequestHeader"
        " && console.error === originals.error && console.debug === originals.debug"
        " && history.pushState === originals.pushState"
        " && history.replaceState === originals.replaceState"
        " && !Object.prototype.hasOwnProperty.call(history, 'pushState')"
    )
    expect(page.locator("[data-svc-widget]")).to_have_count(0)


def test_the_pages_own_requests_and_logs_behave_as_without_the_widget(
    context, host_site, project_owner
):
    without = context.new_page()
    open_shop(without, host_site, project_owner.key, widget="0")
    expected = without.evaluate("shop.behaviour()")

    with_widget = context.new_page()
    open_shop(with_widget, host_site, project_owner.key)
    with_widget.wait_for_selector("[data-svc-widget]", state="attached")  # configured, running
    assert with_widget.evaluate("shop.behaviour()") == expected
    # fetch with a wrong `this` rejects (WebIDL), so the page hears of two unhandled rejections.
    assert expected["failed"][0] == "TypeError" and expected["unhandled"] == 2


def test_keyboard_alone_files_a_report(page, host_site, project_owner):
    open_shop(page, host_site, project_owner.key)
    expect(launcher(page)).to_be_visible()
    widget_focused = "document.activeElement?.hasAttribute('data-svc-widget')"
    inner_focus = "document.activeElement.shadowRoot.activeElement"
    for _ in range(25):
        page.keyboard.press("Tab")
        if page.evaluate(widget_focused):
            break
    assert page.evaluate(widget_focused)

    page.keyboard.press("Enter")
    expect(dialog(page)).to_be_visible()
    page.keyboard.press("Escape")  # Esc closes, and focus goes back to the launcher
    expect(dialog(page)).to_have_count(0)
    assert page.evaluate(f"{inner_focus}.textContent") == "Report a bug"

    page.keyboard.press("Enter")
    assert page.evaluate(f"{inner_focus}.id") == "svc-title"
    page.keyboard.type("Search box ignores Enter")
    page.keyboard.press("Tab")
    page.keyboard.type("Typing a term and pressing Enter does nothing.")
    for _ in range(40):  # the focus stays inside the dialog until it reaches Send
        page.keyboard.press("Tab")
        assert page.evaluate(f"!!{inner_focus}?.closest('dialog')")
        if page.evaluate(f"{inner_focus}.textContent") == "Send report":
            break
    page.keyboard.press("Enter")
    expect(dialog(page).get_by_role("status")).to_contain_text("Thanks — WS-1")
    assert reports(project_owner)[0]["title"] == "Search box ignores Enter"


def test_the_javascript_api_files_and_drops_reports(page, host_site, project_owner, live_server):
    open_shop(page, host_site, project_owner.key, widget="0")
    filed = page.evaluate(
        """async ([svc, key]) => {
          await new Promise((resolve) => {
            const script = document.createElement("script");
            script.src = svc + "/widget.js";
            script.onload = resolve;
            document.head.append(script);
          });
          Svc.init({ projectKey: key, endpoint: svc, launcher: false,
            beforeSend: (report) => report.title.startsWith("drop") ? null
              : { ...report, metadata: { ...report.metadata, cart: "c-17" } } });
          Svc.identify({ id: 42, email: "ada@example.com", name: "Ada" });
          Svc.setMetadata({ plan: "pro" });
          console.warn("before the report");
          const dropped = await Svc.report({ title: "drop me" });
          const report = await Svc.report({ title: "From code", severity: "critical" });
          return { dropped, report };
        }""",
        [live_server, project_owner.key],
    )
    assert filed["dropped"] is None
    assert filed["report"]["trackingId"] == "WS-1"
    [listed] = reports(project_owner)
    report = project_owner.get(f"/api/v1/reports/{listed['id']}").get_json()
    assert (report["title"], report["severity"]) == ("From code", "critical")
    assert report["reporterIdentifier"] == "ada@example.com"
    assert report["metadata"]["user"] == {"id": 42, "email": "ada@example.com", "name": "Ada"}
    assert report["metadata"]["plan"] == "pro" and report["metadata"]["cart"] == "c-17"
    assert [e["message"] for e in report["consoleLogs"]] == ["before the report"]
    expect(page.locator("[data-svc-widget]")).to_have_count(1)
    expect(launcher(page)).to_be_hidden()  # launcher: false; Svc.open still opens the dialog
    page.evaluate("Svc.open({title: 'Opened from code'})")
    expect(dialog(page).get_by_label("Title")).to_have_value("Opened from code")


# --- large screenshots -------------------------------------------------------------------------

FILL_LOCAL_STORAGE = """() => {
  const chunk = "x".repeat(256 * 1024);
  for (let index = 0; ; index += 1) {
    try { localStorage.setItem("page-data-" + index, chunk); } catch (_) { break; }
  }
  for (let index = 0; ; index += 1) {
    try { localStorage.setItem("page-tail-" + index, "x".repeat(1024)); } catch (_) { return; }
  }
}"""


def noise_png(path, megabytes: float) -> Image.Image:
    """A PNG of random pixels (which no encoder can shrink) of about that size on disk."""
    import os

    side = int((megabytes * 2**20 / 3) ** 0.5)
    picture = Image.frombytes("RGB", (side, side), os.urandom(side * side * 3))
    picture.save(path, compress_level=1)
    return picture


def attach_image(page: Page, path) -> None:
    with page.expect_file_chooser() as chooser:
        dialog(page).get_by_role("button", name="Attach an image").click()
    chooser.value.set_files(str(path))
    expect(dialog(page).get_by_text("Screenshot added.")).to_be_visible()


def assert_arrived(project_owner, report: dict, original: Image.Image) -> None:
    """The server has the attached picture: the very pixels as PNG, or, where the widget had to
    re-encode it to fit the service's limit (docs/widget.md), a picture no larger than that."""
    response = project_owner.get(f"/api/v1/screenshots/{report['screenshotUrl']}")
    assert response.status_code == 200
    limit = project_owner.get(
        "/api/v1/projects/widget-config", headers={"X-API-Key": project_owner.key}
    )
    assert len(response.data) <= limit.get_json()["maxScreenshotBytes"]
    received = Image.open(io.BytesIO(response.data))
    if received.format == "PNG":
        assert received.convert("RGB").tobytes() == original.tobytes()
    else:
        assert received.size[0] <= original.size[0] and received.size[0] > original.size[0] // 2
    assert "widgetNote" not in report["metadata"]


@pytest.mark.parametrize("megabytes", [4.5, 7, 9.5])
def test_a_large_attached_image_arrives(page, host_site, project_owner, tmp_path, megabytes):
    original = noise_png(tmp_path / "large.png", megabytes)
    assert (tmp_path / "large.png").stat().st_size > (megabytes - 0.2) * 2**20
    open_shop(page, host_site, project_owner.key)
    launcher(page).click()
    dialog(page).get_by_label("Title").fill(f"A {megabytes} MB picture")
    attach_image(page, tmp_path / "large.png")
    dialog(page).get_by_role("button", name="Send report").click()
    expect(dialog(page).get_by_role("status")).to_contain_text("Thanks — WS-1", timeout=30_000)
    [report] = reports(project_owner)
    assert_arrived(
        project_owner, project_owner.get(f"/api/v1/reports/{report['id']}").get_json(), original
    )


def test_a_full_local_storage_keeps_nothing_from_the_live_send(
    page, host_site, project_owner, tmp_path
):
    original = noise_png(tmp_path / "large.png", 4.5)
    open_shop(page, host_site, project_owner.key)
    page.evaluate(FILL_LOCAL_STORAGE)
    launcher(page).click()
    dialog(page).get_by_label("Title").fill("Sent from a page whose storage is full")
    attach_image(page, tmp_path / "large.png")
    dialog(page).get_by_role("button", name="Send report").click()
    expect(dialog(page).get_by_role("status")).to_contain_text("Thanks — WS-1", timeout=30_000)
    report = project_owner.get(f"/api/v1/reports/{reports(project_owner)[0]['id']}").get_json()
    assert_arrived(project_owner, report, original)


def send_offline(context, page, host_site, project_owner, title, image) -> None:
    """Open the shop, lose the network, and file a report with `image` attached."""
    open_shop(page, host_site, project_owner.key)
    expect(launcher(page)).to_be_visible()
    context.set_offline(True)
    launcher(page).click()
    dialog(page).get_by_label("Title").fill(title)
    attach_image(page, image)
    dialog(page).get_by_role("button", name="Send report").click()


def test_offline_the_reporter_is_told_the_stored_copy_has_no_screenshot(
    context, page, host_site, project_owner, tmp_path
):
    noise_png(tmp_path / "large.png", 4.5)  # its base64 outgrows localStorage's 5 MB
    send_offline(
        context,
        page,
        host_site,
        project_owner,
        "Filed offline with a large picture",
        tmp_path / "large.png",
    )
    expect(dialog(page).get_by_role("status").locator("p").first).to_have_text(
        "You seem to be offline. Your report is saved in this browser and will be sent"
        " automatically. It goes without the screenshot: this browser's storage is too full to"
        " keep it."
    )
    [stored] = stored_reports(page)
    assert stored["images"] == {}

    context.set_offline(False)
    page.reload()
    [report] = wait_for_reports(project_owner, 1)
    report = project_owner.get(f"/api/v1/reports/{report['id']}").get_json()
    assert report["screenshotUrl"] is None
    assert (
        report["metadata"]["widgetNote"]
        == "Left out (this browser's storage was full): the screenshot."
    )


def test_offline_a_small_replay_is_kept_beside_a_screenshot_too_large(
    context, page, host_site, project_owner, tmp_path
):
    """Storage too short for the screenshot lost the small replay too, and the message blamed
    storage for both: each part that fits is kept, and the message names what was left."""
    settings = {"settings": {"widget": {"enable_replay": True, "replay_seconds": 30}}}
    project_owner.patch(f"/api/v1/projects/{project_owner.project['id']}", json=settings,
                        headers=csrf(project_owner))  # fmt: skip
    page.add_init_script(
        'document.addEventListener("svc:replay-ready", () => { window.recording = 1; });'
    )
    noise_png(tmp_path / "large.png", 4.5)  # its base64 outgrows localStorage's 5 MB
    open_shop(page, host_site, project_owner.key)
    page.wait_for_function("() => window.recording === 1")
    context.set_offline(True)
    launcher(page).click()
    dialog(page).get_by_label("Title").fill("Offline, a replay and a large picture")
    attach_image(page, tmp_path / "large.png")
    dialog(page).get_by_role("button", name="Send report").click()
    expect(dialog(page).get_by_role("status").locator("p").first).to_have_text(
        "You seem to be offline. Your report is saved in this browser and will be sent"
        " automatically. It goes without the screenshot: this browser's storage is too full to"
        " keep it."
    )
    [stored] = stored_reports(page)
    assert list(stored["images"]) == ["replay_key"]

    context.set_offline(False)
    page.reload()
    [report] = wait_for_reports(project_owner, 1)
    report = project_owner.get(f"/api/v1/reports/{report['id']}").get_json()
    assert report["screenshotUrl"] is None and report["replayUrl"]
    assert report["metadata"]["widgetNote"] == (
        "Left out (this browser's storage was full): the screenshot."
    )


def test_a_report_told_it_is_saved_is_never_stripped_by_a_later_one(
    page, host_site, project_owner, tmp_path, live_server
):
    """What new users hit: svc stopped, report A (small screenshot) told
    "saved"; report B's large picture made the outbox strip A's. Only the new one may lose
    parts, and it says which; "offline" only when the browser is."""
    small, large = noise_png(tmp_path / "small.png", 0.1), tmp_path / "large.png"
    noise_png(large, 4.5)  # its base64 outgrows localStorage's 5 MB
    open_shop(page, host_site, project_owner.key)
    expect(launcher(page)).to_be_visible()
    # svc stopped: every connection to it refused, the browser still online.
    page.route(f"{live_server}/api/v1/**", lambda route: route.abort("connectionrefused"))
    told = []
    for title, picture in (("A: small picture", tmp_path / "small.png"), ("B: large", large)):
        launcher(page).click()
        dialog(page).get_by_label("Title").fill(title)
        attach_image(page, picture)
        dialog(page).get_by_role("button", name="Send report").click()
        status = dialog(page).get_by_role("status")
        expect(status).to_contain_text("Your report is saved in this browser", timeout=20_000)
        told.append(status.locator("p").first.inner_text())
        dialog(page).get_by_role("button", name="Close", exact=True).last.click()
    assert told[0] == (
        "svc could not be reached. Your report is saved in this browser and will be sent"
        " automatically."
    )
    assert told[1].endswith(
        "It goes without the screenshot: this browser's storage is too full to keep it."
    )
    first, second = stored_reports(page)
    assert list(first["images"]) == ["screenshot_url"] and second["images"] == {}

    page.unroute(f"{live_server}/api/v1/**")
    page.reload()
    arrived = {report["title"]: report for report in wait_for_reports(project_owner, 2, seconds=30)}
    a = project_owner.get(f"/api/v1/reports/{arrived['A: small picture']['id']}").get_json()
    assert_arrived(project_owner, a, small)
    b = project_owner.get(f"/api/v1/reports/{arrived['B: large']['id']}").get_json()
    assert b["screenshotUrl"] is None and "the screenshot" in b["metadata"]["widgetNote"]


def test_offline_a_small_screenshot_is_kept_and_sent_later(
    context, page, host_site, project_owner, tmp_path
):
    original = noise_png(tmp_path / "small.png", 0.3)
    send_offline(
        context,
        page,
        host_site,
        project_owner,
        "Filed offline with a small picture",
        tmp_path / "small.png",
    )
    status = dialog(page).get_by_role("status")
    expect(status).to_contain_text("will be sent automatically.")
    expect(status).not_to_contain_text("without the screenshot")

    context.set_offline(False)
    page.reload()
    [report] = wait_for_reports(project_owner, 1)
    assert_arrived(
        project_owner, project_owner.get(f"/api/v1/reports/{report['id']}").get_json(), original
    )


def test_a_refused_capture_and_a_file_that_is_no_image_are_said_as_errors(
    page, host_site, project_owner, tmp_path
):
    page.add_init_script(
        "navigator.mediaDevices.getDisplayMedia = () =>"
        " Promise.reject(new DOMException('Permission denied', 'NotAllowedError'));"
    )
    open_shop(page, host_site, project_owner.key)
    launcher(page).click()
    dialog(page).get_by_role("button", name="Capture this page").click()
    problem = dialog(page).get_by_role("alert").filter(has_text="could not be captured")
    expect(problem).to_be_visible()
    expect(problem).to_contain_text("refused")

    (tmp_path / "notes.png").write_text("not a picture")
    with page.expect_file_chooser() as chooser:
        dialog(page).get_by_role("button", name="Attach an image").click()
    chooser.value.set_files(str(tmp_path / "notes.png"))
    expect(dialog(page).get_by_role("alert").filter(has_text="could not be read")).to_be_visible()


def test_clicks_and_logs_carry_no_typed_text_and_no_secret(page, host_site, project_owner):
    """What the review found stored: a contenteditable's typed text, a textarea's prefilled
    value, a select's options, a JWT from a clicked <code>, a password in a logged object."""
    open_shop(page, host_site, project_owner.key)
    expect(launcher(page)).to_be_visible()
    page.locator("#notes").click()
    page.keyboard.type("my card is 4111 1111")
    # The host's stylesheet hides textareas and selects (it is hostile to the widget's own).
    page.locator("#address").dispatch_event("click")
    page.locator("#plan").dispatch_event("click")
    page.locator("#jwt").click()
    page.evaluate("console.log('login', {password: 'hunter2', user: 'ada', apiKey: 'k-123'})")
    launcher(page).click()
    dialog(page).get_by_label("Title").fill("Leaks nothing")
    dialog(page).get_by_role("button", name="Send report").click()
    expect(dialog(page).get_by_role("status")).to_contain_text("Thanks — WS-1")

    report = project_owner.get(f"/api/v1/reports/{reports(project_owner)[0]['id']}").get_json()
    stored = json.dumps(report["userActions"]) + json.dumps(report["consoleLogs"])
    for secret in ("4111", "Prefilled Street", "Basic plan", "Secret plan", "eyJhbGci", "hunter2",
                   "k-123"):  # fmt: skip
        assert secret not in stored, secret
    clicked = {action["target"] for action in report["userActions"] if action["type"] == "click"}
    assert {"div#notes", "textarea#address", "select#plan", "code#jwt"} <= clicked
    logged = next(entry for entry in report["consoleLogs"] if "login" in entry["message"])
    assert '"user":"ada"' in logged["message"]


def test_the_thank_you_screen_links_the_status_page_when_reporters_hear_back(
    page, host_site, project_owner
):
    turned_on = project_owner.patch(
        f"/api/v1/projects/{project_owner.project['id']}",
        json={"settings": {"reporter_updates": {"enabled": True}}},
        headers=csrf(project_owner),
    )
    assert turned_on.status_code == 200
    open_shop(page, host_site, project_owner.key)
    launcher(page).click()
    form = dialog(page)
    form.get_by_label("Title").fill("Coupon refused")
    form.get_by_label("Your e-mail").fill("rep@example.com")
    form.get_by_role("button", name="Send report").click()
    follow = form.get_by_role("link", name="Follow your report")
    expect(follow).to_have_attribute("href", re.compile(r"^http://[^/]+/status/[\w-]{43}$"))
    expect(follow).to_have_attribute("rel", "noopener noreferrer")
    token = follow.get_attribute("href").rsplit("/", 1)[1]
    assert project_owner.get(f"/api/v1/status/{token}").get_json()["title"] == "Coupon refused"


def _luminance(css: str) -> float:
    """WCAG's relative luminance of an rgb()/rgba() colour."""
    red, green, blue = (int(part) / 255 for part in re.findall(r"\d+", css)[:3])
    channel = [
        c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (red, green, blue)
    ]
    return 0.2126 * channel[0] + 0.7152 * channel[1] + 0.0722 * channel[2]


def _contrast(one: str, other: str) -> float:
    light, dark = sorted((_luminance(one), _luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


BACKGROUND_BEHIND = """(element) => {
  for (let node = element; node; node = node.parentElement || node.getRootNode().host) {
    const colour = getComputedStyle(node).backgroundColor;
    if (colour && !/rgba\\(.*, 0\\)$/.test(colour) && colour !== "transparent") return colour;
  }
  return "rgb(255, 255, 255)";
}"""


def test_dark_mode_keeps_the_thank_you_link_readable_and_the_status_page_dark(
    browser, host_site, project_owner, live_server
):
    """The thank-you link was 1.89:1 on the dark dialog (WCAG AA asks 4.5:1)
    and the status page stayed light."""
    updates = {"settings": {"reporter_updates": {"enabled": True}}}
    project_owner.patch(
        f"/api/v1/projects/{project_owner.project['id']}", json=updates, headers=csrf(project_owner)
    )
    context = browser.new_context(viewport=VIEWPORT, color_scheme="dark")
    page = context.new_page()
    page.add_init_script(OPEN_SHADOW_ROOTS)
    open_shop(page, host_site, project_owner.key)
    launcher(page).click()
    dialog(page).get_by_label("Title").fill("Dark")
    dialog(page).get_by_role("button", name="Send report").click()
    link = dialog(page).get_by_role("link", name="Follow your report: see its status, add to it")
    expect(link).to_be_visible()
    colour = link.evaluate("(a) => getComputedStyle(a).color")
    assert _contrast(colour, link.evaluate(BACKGROUND_BEHIND)) >= 4.5, colour
    # Without SVC_PUBLIC_URL the link names the address the widget reached svc at, not the
    # address svc binds (which may answer nothing from the reporter's browser).
    assert link.get_attribute("href").startswith(f"{live_server}/status/")
    page.goto(link.get_attribute("href"))
    assert _luminance(page.locator("body").evaluate(BACKGROUND_BEHIND)) < 0.05
    assert _luminance(page.locator("body").evaluate("(b) => getComputedStyle(b).color")) > 0.8
    context.close()


# --- the reporter's language (contract v5 §22; docs/widget.md, "Languages") ----------------------

SMALL_SCREEN = {"width": 390, "height": 844}

WIDGET_TEXTS = """() => {
  const root = document.querySelector("[data-svc-widget]").shadowRoot;
  const texts = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const element = node.parentElement;
    if (element.closest(".honeypot, [hidden]")) continue;  // the honeypot is for robots
    if (node.textContent.trim()) texts.push(node.textContent.trim());
  }
  for (const element of root.querySelectorAll("[aria-label], [placeholder], [title]")) {
    for (const name of ["aria-label", "placeholder", "title"]) {
      if (element.getAttribute(name)) texts.push(element.getAttribute(name));
    }
  }
  return texts;
}"""

# What lies outside the dialog or overflows its own box: a word cut off on a small screen.
CUT_OFF = """() => {
  const root = document.querySelector("[data-svc-widget]").shadowRoot;
  const dialog = root.querySelector("dialog").getBoundingClientRect();
  const cut = [];
  if (dialog.left < 0 || dialog.right > innerWidth) cut.push("the dialog");
  for (const element of root.querySelectorAll("dialog *")) {
    if (element.closest(".honeypot") || !element.getClientRects().length) continue;
    const box = element.getBoundingClientRect();
    const outside = box.left < dialog.left - 1 || box.right > dialog.right + 1;
    const overflows = element.clientWidth > 0 && element.scrollWidth > element.clientWidth + 1;
    if (outside || overflows) cut.push(element.tagName + ": " + element.textContent.slice(0, 60));
  }
  return cut;
}"""


def reporter_page(browser, locale: str, viewport=VIEWPORT):
    context = browser.new_context(viewport=viewport, locale=locale)
    tab = context.new_page()
    tab.add_init_script(OPEN_SHADOW_ROOTS)
    return context, tab


def shop_keeping_reporters_posted(browser, host_site, project_owner, locale: str):
    """The shop open in a reporter's browser speaking `locale`, its project mailing reporters
    (so the widget asks for an address and links the status page)."""
    updates = {"settings": {"reporter_updates": {"enabled": True}}}
    project_owner.patch(
        f"/api/v1/projects/{project_owner.project['id']}", json=updates, headers=csrf(project_owner)
    )
    context, tab = reporter_page(browser, locale)
    open_shop(tab, host_site, project_owner.key)
    return context, tab


def test_a_reporter_whose_browser_says_de_at_files_in_german_and_follows_in_german(
    browser, host_site, project_owner
):
    context, tab = shop_keeping_reporters_posted(browser, host_site, project_owner, "de-AT")
    tab.get_by_role("button", name="Fehler melden").click()
    form = tab.get_by_role("dialog", name="Fehler melden")
    assert form.evaluate("(d) => [d.closest('[lang]').lang, d.closest('[dir]').dir]") == [
        "de",
        "ltr",
    ]
    expect(form.get_by_label("Schweregrad")).to_have_value("medium")
    expect(form.get_by_label("Schweregrad").locator("option:checked")).to_have_text("Mittel")
    expect(form.get_by_text("Konsolenmeldungen:")).to_be_visible()
    form.get_by_role("button", name="Meldung senden").click()
    expect(form.get_by_role("alert")).to_have_text("Bitte geben Sie der Meldung einen Titel.")
    form.get_by_label("Titel").fill("Bezahlen geht nicht")
    form.get_by_role("button", name="Meldung senden").click()
    expect(form.get_by_role("status").first).to_contain_text(
        "Danke \u2013 WS-1. Ihre Meldung ist eingegangen."
    )
    wait_for_reports(project_owner, 1)
    assert project_owner.get("/api/v1/reports/WS-1").get_json()["locale"] == "de-AT"
    link = form.get_by_role("link", name="Ihre Meldung verfolgen: Status ansehen, etwas ergänzen")
    tab.goto(link.get_attribute("href"))
    assert tab.evaluate("document.documentElement.lang") == "de"
    expect(tab.locator("#status")).to_have_text("eingegangen, noch nicht angesehen")
    context.close()


def test_an_e_mail_that_is_no_address_is_refused_and_one_no_mail_reaches_is_said(
    browser, host_site, project_owner
):
    context, tab = shop_keeping_reporters_posted(browser, host_site, project_owner, "fr")
    tab.get_by_role("button", name="Signaler un bug").click()
    form = tab.get_by_role("dialog", name="Signaler un bug")
    form.get_by_label("Titre").fill("Le panier se vide")
    address = form.get_by_label("Votre e-mail")
    address.fill("not-an-email")
    form.get_by_role("button", name="Envoyer le signalement").click()
    expect(form.get_by_role("alert")).to_have_text(
        "Veuillez indiquer une adresse e-mail comme nom@example.com, ou laisser le champ vide."
    )
    expect(address).to_have_attribute("aria-invalid", "true")
    expect(address).to_be_focused()
    assert project_owner.get("/api/v1/reports").get_json()["total"] == 0
    # The browser takes ann@localhost; svc cannot mail it, keeps it as a name and says so.
    address.fill("ann@localhost")
    form.get_by_role("button", name="Envoyer le signalement").click()
    expect(form.get_by_role("status").first).to_contain_text(
        "Aucun e-mail ne suivra : nous ne pouvons pas écrire à cette adresse."
    )
    wait_for_reports(project_owner, 1)
    assert project_owner.get("/api/v1/reports/WS-1").get_json()["reporterIdentifier"] == (
        "ann@localhost"
    )
    context.close()


def test_an_arabic_reporter_sees_the_widget_right_to_left(browser, host_site, project_owner):
    # A project's own button text is shown as written, even one named like a JavaScript
    # object's property; the dialog's default title speaks Arabic.
    settings = {"settings": {"widget": {"button_text": "constructor"}}}
    project_owner.patch(
        f"/api/v1/projects/{project_owner.project['id']}",
        json=settings,
        headers=csrf(project_owner),
    )
    context, tab = reporter_page(browser, "ar", SMALL_SCREEN)
    open_shop(tab, host_site, project_owner.key)
    tab.get_by_role("button", name="constructor").click()
    form = tab.get_by_role("dialog", name="الإبلاغ عن مشكلة")
    assert form.evaluate("(d) => getComputedStyle(d).direction") == "rtl"
    # Mirrored: the title starts at the right and the close button sits at the left.
    heading = form.get_by_role("heading").bounding_box()
    close = form.get_by_role("button", name="إغلاق").first.bounding_box()
    assert close["x"] + close["width"] <= heading["x"] + 1
    expect(form.get_by_role("button", name="إرسال البلاغ")).to_be_visible()
    assert tab.evaluate(CUT_OFF) == []
    save_screenshot(tab, "widget-ar")
    context.close()


@pytest.mark.parametrize("viewport", [SMALL_SCREEN, {"width": 1280, "height": 800}], ids=str)
def test_the_right_to_left_dialog_stays_in_place_when_scrolled_sideways(
    browser, host_site, project_owner, viewport
):
    """The hidden field for robots once sat 10,000 px to the left: a right-to-left dialog then
    scrolled sideways by a trackpad moved the form out of view (a blank screen on a phone)."""
    context, tab = reporter_page(browser, "ar", viewport)
    open_shop(tab, host_site, project_owner.key)
    tab.get_by_role("button", name="الإبلاغ عن مشكلة").click()
    form = tab.get_by_role("dialog", name="الإبلاغ عن مشكلة")
    title = form.get_by_label("العنوان")
    before, page_at = title.bounding_box(), tab.evaluate("scrollX")
    box = form.bounding_box()
    tab.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    for sideways in (-3000, 3000, -3000):
        tab.mouse.wheel(sideways, 0)
    tab.evaluate("() => new Promise(requestAnimationFrame)")
    assert title.bounding_box() == before
    assert form.evaluate("(d) => d.scrollWidth <= d.clientWidth")
    assert tab.evaluate("scrollX") == page_at
    context.close()


def test_no_english_is_left_in_the_widget_nor_cut_off_in_a_pseudo_language(
    browser, host_site, project_owner, live_server
):
    """Every message wrapped and a third longer (tests/helpers.py, pseudo), served as a
    language svc does not speak would be, at 390 px: what is not wrapped was never
    translated, what overflows would be cut off in a longer language."""
    words = {**i18n.words_in("en", PseudoTranslations()), "locale": "eo"}
    context, tab = reporter_page(browser, "eo", SMALL_SCREEN)
    tab.route(f"{live_server}/widget-eo.json", lambda route: route.fulfill(json=words))
    updates = {"settings": {"reporter_updates": {"enabled": True}}}
    project_owner.patch(
        f"/api/v1/projects/{project_owner.project['id']}", json=updates, headers=csrf(project_owner)
    )
    open_shop(tab, host_site, project_owner.key)
    launcher = tab.get_by_role("button", name=pseudo("Report a bug"))
    launcher.click()
    form = tab.get_by_role("dialog", name=pseudo("Report a bug"))
    form.get_by_role("button", name=pseudo("Send report")).click()
    expect(form.get_by_role("alert")).to_have_text(pseudo("Please give the report a title."))

    def english_left() -> list[str]:  # the close button's "\u00d7" is a sign, not a word
        return [t for t in tab.evaluate(WIDGET_TEXTS) if t != "\u00d7" and not t.startswith("⟦")]

    assert english_left() == []
    assert tab.evaluate(CUT_OFF) == []
    form.get_by_label(pseudo("Title")).fill("Pay")
    form.get_by_role("button", name=pseudo("Send report")).click()
    expect(
        form.get_by_role("link", name=pseudo("Follow your report: see its status, add to it"))
    ).to_be_visible()
    assert english_left() == []
    assert tab.evaluate(CUT_OFF) == []
    context.close()


def test_a_click_on_text_is_recorded_as_a_test_can_find_it_again(page, host_site, project_owner):
    """A click on a plain <h1>Account</h1> was recorded as a form label (getByLabel), as any
    click on text in a div, span, cell or heading was: the generated test could not find it."""
    open_shop(page, host_site, project_owner.key)
    expect(launcher(page)).to_be_visible()
    page.evaluate("""() => document.body.insertAdjacentHTML("afterbegin",
      '<section style="position: relative; z-index: 1000; background: #fff">' +
      '<h1>Account</h1><div><span>Order total</span></div>' +
      '<table><tr><th>Item</th></tr><tr><td>Red shoes</td></tr></table>' +
      '<div aria-label="Close banner">x</div></section>')""")
    for text in ("Account", "Order total", "Item", "Red shoes", "x"):
        page.get_by_text(text, exact=True).click()
    launcher(page).click()
    dialog(page).get_by_label("Title").fill("Clicks on text")
    dialog(page).get_by_role("button", name="Send report").click()
    [report] = wait_for_reports(project_owner, 1)
    actions = project_owner.get(f"/api/v1/reports/{report['id']}").get_json()["userActions"]
    located = [a["locator"] for a in actions if a["type"] == "click"][-5:]
    assert located == [
        {"role": "heading", "name": "Account"},
        {"text": "Order total"},
        {"role": "columnheader", "name": "Item"},
        {"role": "cell", "name": "Red shoes"},
        {"label": "Close banner"},
    ]
    spec = project_owner.get(f"/api/v1/reports/{report['id']}/repro.spec.ts").get_data(as_text=True)
    assert 'page.getByText("Order total", { exact: true }).click()' in spec
    assert 'page.getByRole("heading", { name: "Account", exact: true }).click()' in spec
