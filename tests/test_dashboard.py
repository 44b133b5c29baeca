"""The dashboard in a real browser: headless Chromium (Debian's package) driven by Playwright,
against the app served over real HTTP. Widget traffic goes to the same server with the API key.

The pages it passes through are saved into docs/screenshots/ for the README.
"""

import csv
import io
import json
import re
from pathlib import Path
from urllib.parse import quote

import pytest
import requests
from playwright.sync_api import Page, expect

from harness.client import register
from harness.service import sign_up as register_over_http
from svc import audit
from svc.extensions import db
from svc.models import Project, User
from svc.services.team import notification_mails
from tests.browser import OPEN_SHADOW_ROOTS, save_screenshot
from tests.helpers import fan_out

PASSWORD = "correct horse battery"

# In the browser the database cannot change the answer: SQLite alone (tests/conftest.py).
pytestmark = [pytest.mark.browser, pytest.mark.any_database]


@pytest.fixture
def base_url(live_server):
    return live_server


@pytest.fixture
def context(browser, base_url):
    browser_context = browser.new_context(
        base_url=base_url, viewport={"width": 1280, "height": 860}, locale="en-GB"
    )
    yield browser_context
    browser_context.close()


@pytest.fixture
def page(context):
    """A tab that fails the test on any script error or failed module load."""
    tab = context.new_page()
    errors = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    yield tab
    assert errors == []


def go_to(page: Page, section: str) -> None:
    page.get_by_role("navigation", name="Main").get_by_role("link", name=section).click()


def sign_up(page: Page, name="Ada Lovelace", email="ada@example.com") -> None:
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login$"))
    page.get_by_role("link", name="Sign up").click()
    page.get_by_label("Name").fill(name)
    page.get_by_label("E-mail").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Create account").click()
    expect(page.get_by_role("heading", name="Projects")).to_be_visible()


def create_project(page: Page, name="Web Shop") -> str:
    """Creates a project through the form; returns its API key as the settings page shows it."""
    go_to(page, "Projects")
    page.get_by_label("Name").fill(name)
    page.get_by_role("button", name="Create project").click()
    expect(page.get_by_role("heading", name=name, level=1)).to_be_visible()
    return page.locator("code.api-key").inner_text()


_SERVED = {}  # the app behind the live server, for what the scheduler would do beside it


@pytest.fixture(autouse=True)
def _served_app(app):
    _SERVED["app"] = app
    yield
    _SERVED.clear()


def file_report(base_url: str, api_key: str, **fields) -> dict:
    """What a widget does: POST the report with the project's API key; then what the
    scheduler's next second does with it (the fan-out: counters, delivery, notifications)."""
    body = {"description": "Steps to reproduce…", "category": "bug", **fields}
    response = requests.post(
        f"{base_url}/api/v1/reports", json=body, headers={"X-API-Key": api_key}
    )
    assert response.status_code == 201, response.text
    fan_out(_SERVED["app"])
    return response.json()


def upload_screenshot(base_url: str, api_key: str, image: bytes) -> str:
    response = requests.post(
        f"{base_url}/api/v1/upload/screenshot",
        headers={"X-API-Key": api_key},
        files={"file": ("screenshot.png", image, "image/png")},
    )
    assert response.status_code == 201, response.text
    return response.json()["key"]


CAPTURED = {
    "console_logs": [
        {"level": "info", "message": "App booted", "timestamp": 1763800000000},
        {"level": "warn", "message": "Slow response from /api/cart", "timestamp": 1763800001000},
        {
            "level": "error",
            "message": "TypeError: cart.total is undefined",
            "timestamp": 1763800002000,
            "stack": "at checkout (app.js:12:5)",
        },
    ],
    "network_logs": [
        {
            "method": "GET",
            "url": "https://shop.example/api/cart",
            "status": 200,
            "duration": 87,
            "timestamp": 1763800000500,
        },
        {
            "method": "POST",
            "url": "https://shop.example/api/checkout",
            "status": 500,
            "duration": 1204,
            "timestamp": 1763800001900,
        },
    ],
    "user_actions": [
        {"type": "click", "target": "button#add-to-cart", "timestamp": 1763800000700},
        {"type": "click", "target": "button#pay", "timestamp": 1763800001800},
    ],
    "metadata": {
        "url": "https://shop.example/checkout",
        "viewport": {"width": 1440, "height": 900},
        "release": "2026.11.3",
    },
}


def invite(page: Page, email: str, role: str = "member") -> str:
    """Invites through the project page's form; returns the link the page shows."""
    page.get_by_label("Invite by e-mail").fill(email)
    page.get_by_label("Role", exact=True).select_option(role)
    page.get_by_role("button", name="Send invitation").click()
    link = page.locator("section[aria-label=Invitations] .notice code")
    expect(link).to_contain_text("/invite/")
    return link.inner_text()


def rows(page: Page):
    return page.locator("table.reports tbody tr")


def test_reports_are_filtered_searched_opened_and_triaged(page, base_url):
    page.goto("/login")
    save_screenshot(page, "sign-in")
    sign_up(page)
    api_key = create_project(page)
    save_screenshot(page, "project-settings")

    image = page.screenshot()  # a real PNG for the report to carry
    key = upload_screenshot(base_url, api_key, image)
    file_report(
        base_url,
        api_key,
        title="Checkout fails with a 500",
        severity="critical",
        screenshot_url=key,
        **CAPTURED,
    )
    file_report(
        base_url, api_key, title="Logo is blurry on retina screens", severity="low", category="ui"
    )
    file_report(
        base_url,
        api_key,
        title="Search is slow on checkout page",
        severity="high",
        category="performance",
    )

    go_to(page, "Reports")
    expect(rows(page)).to_have_count(3)
    save_screenshot(page, "reports")

    page.get_by_label("Severity", exact=True).select_option("critical")
    expect(page).to_have_url(re.compile(r"severity=critical"))
    expect(rows(page)).to_have_count(1)
    page.get_by_label("Severity", exact=True).select_option("")
    expect(rows(page)).to_have_count(3)

    page.get_by_label("Search").fill("checkout")
    page.get_by_role("button", name="Search").click()
    expect(page).to_have_url(re.compile(r"search=checkout"))
    expect(rows(page)).to_have_count(2)
    page.get_by_label("Search").fill("checkout slow")
    page.get_by_role("button", name="Search").click()
    expect(rows(page)).to_have_count(1)
    expect(rows(page).first).to_contain_text("Search is slow on checkout page")

    # The URL alone brings the same view back.
    page.reload()
    expect(page.get_by_label("Search")).to_have_value("checkout slow")
    expect(rows(page)).to_have_count(1)

    page.goto("/reports?severity=critical")
    page.get_by_role("link", name="Checkout fails with a 500").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("WS-1")
    screenshot = page.locator("figure img").first
    expect(screenshot).to_be_visible()
    assert screenshot.evaluate("image => image.complete && image.naturalWidth") > 100
    expect(page.locator(".console-entry.level-error")).to_contain_text(
        "TypeError: cart.total is undefined"
    )
    expect(page.locator("table.network tr.failed")).to_have_count(1)
    expect(page.locator("table.network tr.failed")).to_contain_text("/api/checkout")
    expect(page.locator(".timeline li")).to_have_count(2)
    expect(page.locator("table.metadata")).to_contain_text("2026.11.3")
    save_screenshot(page, "report")

    page.locator("figure .thumbnail").first.click()
    expect(page.locator("dialog.lightbox img")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("dialog.lightbox")).to_have_count(0)

    page.get_by_label("Status").select_option("in_progress")
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_text("Changes saved.")).to_be_visible()
    # The activity shows the change without a reload.
    expect(page.get_by_role("region", name="Activity")).to_contain_text("in progress")
    page.reload()
    expect(page.get_by_label("Status")).to_have_value("in_progress")
    expect(page.locator(".badges")).to_contain_text("in progress")


def test_a_read_only_token_for_a_coding_agent_in_one_click(page, base_url):
    sign_up(page)
    create_project(page)
    go_to(page, "Account")
    page.get_by_role("button", name="Token for a coding agent").click()
    token = page.locator("code.token-value").inner_text()
    commands = page.locator("pre.agent-commands")
    expect(commands).to_have_text(f"svc login --url {base_url}\nclaude mcp add svc -- svc mcp")
    assert token not in commands.inner_text()  # pasted at svc login's prompt, never in history
    expect(page.locator("table.tokens")).to_contain_text("coding agent (reports:read)")
    bearer = {"Authorization": f"Bearer {token}"}
    assert requests.get(f"{base_url}/api/v1/reports/WS-1", headers=bearer).status_code == 404
    refused = requests.post(f"{base_url}/api/v1/projects", json={"name": "X"}, headers=bearer)
    assert refused.status_code == 403  # it only reads


def test_key_rotation_tokens_and_sign_out(page, context, base_url):
    sign_up(page)
    old_key = create_project(page)

    page.get_by_role("button", name="Rotate API key").click()
    page.get_by_role("dialog").get_by_role("button", name="Rotate key").click()
    expect(page.get_by_text("A new API key is in force.")).to_be_visible()
    new_key = page.locator("code.api-key").inner_text()
    assert new_key != old_key and new_key.startswith("svc_pub_")
    expect(page.locator(".snippet code")).to_contain_text(new_key)
    rejected = requests.post(f"{base_url}/api/v1/reports", json={}, headers={"X-API-Key": old_key})
    assert rejected.status_code == 401
    file_report(base_url, new_key, title="Filed with the new key", severity="low")

    # The embed snippet, pasted into another site's page, loads the widget with the new key.
    snippet = page.locator(".snippet code").inner_text()
    assert f'src="{base_url}/widget.js"' in snippet and f'data-project-key="{new_key}"' in snippet
    other_site = context.new_page()
    other_site.set_content(snippet)
    other_site.wait_for_function("window.Svc !== undefined")
    filed = other_site.evaluate(
        "Svc.report({title: 'Filed by the snippet', description: 'It works', severity: 'high'})"
    )
    assert filed["trackingId"] == "WS-2" and filed["severity"] == "high"
    other_site.close()

    go_to(page, "Account")
    page.get_by_label("Token name").fill("release script")
    page.get_by_role("button", name="Create token").click()
    token = page.locator("code.token-value").inner_text()
    assert token.startswith("svc_pat_")
    me = requests.get(f"{base_url}/api/v1/auth/me", headers={"Authorization": f"Bearer {token}"})
    assert me.json()["email"] == "ada@example.com"
    page.reload()
    expect(page.locator("code.token-value")).to_have_count(0)  # shown once only
    expect(page.locator("table.tokens tbody tr")).to_have_count(1)
    expect(page.locator("table.tokens")).to_contain_text(token[:12])
    save_screenshot(page, "account")

    page.get_by_role("button", name="Revoke release script").click()
    page.get_by_role("dialog").get_by_role("button", name="Revoke").click()
    expect(page.get_by_text("No tokens yet")).to_be_visible()
    me = requests.get(f"{base_url}/api/v1/auth/me", headers={"Authorization": f"Bearer {token}"})
    assert me.status_code == 401

    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(re.compile(r"/login$"))
    page.goto("/account")
    expect(page).to_have_url(re.compile(r"/login\?next=%2Faccount$"))
    page.get_by_label("E-mail").fill("ada@example.com")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(re.compile(r"/account$"))


@pytest.mark.parametrize(
    "next_value",
    ["/\\evil.example/", "//evil.example/", "/\t/evil.example/", "https://evil.example/"],
)
def test_sign_in_goes_on_only_to_a_page_of_this_site(page, app, base_url, next_value):
    register(app.test_client())
    page.goto(f"/login?next={quote(next_value)}")
    page.get_by_label("E-mail").fill("ada@example.com")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Reports")).to_be_visible()
    assert page.url == f"{base_url}/reports"


def test_an_expired_access_cookie_is_refreshed_silently(page, context):
    sign_up(page)
    create_project(page, "Mobile App")
    context.clear_cookies(name="svc_access_token")
    page.goto("/projects")
    expect(page.get_by_role("link", name="Mobile App", exact=True)).to_be_visible()
    assert any(cookie["name"] == "svc_access_token" for cookie in context.cookies())


def test_api_errors_are_shown_beside_their_fields(page):
    sign_up(page)
    create_project(page, "Web Shop")
    page.get_by_label("Webhook URL").fill("http://insecure.example/hook")
    page.get_by_role("button", name="Save settings").click()
    webhook_field = page.get_by_label("Webhook URL")
    expect(webhook_field).to_have_attribute("aria-invalid", "true")
    error_id = webhook_field.get_attribute("aria-describedby")
    expect(page.locator(f"#{error_id}")).to_contain_text("https")

    go_to(page, "Projects")
    page.get_by_label("Name").fill("Web Store")
    page.get_by_label("Tracking prefix (optional)").fill("WS")
    page.get_by_role("button", name="Create project").click()
    expect(page.locator(".form-error")).to_contain_text("Tracking prefix WS is already taken")


def test_members_assignees_webhook_secret_and_delivery_log(page, base_url, app):
    sign_up(page)
    api_key = create_project(page)

    link = invite(page, "grace@example.com")
    pending = page.locator("section[aria-label=Invitations] ul li")
    expect(pending).to_have_count(1)
    expect(pending).to_contain_text("grace@example.com · member")
    page.get_by_label("Invite by e-mail").fill("grace@example.com")
    page.get_by_role("button", name="Send invitation").click()
    expect(page.locator("section[aria-label=Invitations] form .form-error")).to_contain_text(
        "already invited"
    )
    # Grace accepts from elsewhere (the API); the owner's page then lists her as a member.
    token = link.rsplit("/", 1)[1]
    accepted = requests.post(
        f"{base_url}/api/v1/invitations/accept",
        json={"token": token, "name": "Grace Hopper", "password": PASSWORD},
    )
    assert accepted.status_code == 201, accepted.text
    page.reload()
    expect(page.locator("section[aria-label=Members] ul.members li")).to_have_count(2)
    expect(page.locator("section[aria-label=Invitations] ul li")).to_have_count(0)

    page.get_by_label("Webhook URL").fill("https://hooks.slack.com/services/T0/B0/x")
    page.get_by_role("button", name="Save settings").click()
    expect(page.get_by_text("Webhook format in force: slack")).to_be_visible()

    secret = page.locator("code.webhook-secret")
    expect(secret).not_to_contain_text("whsec_")
    page.get_by_role("button", name="Reveal").click()
    expect(secret).to_contain_text("whsec_")
    before = secret.inner_text()
    page.get_by_role("button", name="Rotate webhook secret").click()
    page.get_by_role("dialog").get_by_role("button", name="Rotate secret").click()
    expect(secret).not_to_have_text(before)

    report = file_report(base_url, api_key, title="Cart empties itself", severity="medium")
    page.reload()
    deliveries = page.locator("table.deliveries tbody tr")
    expect(deliveries).to_have_count(1)
    expect(deliveries).to_contain_text("report.created")
    deliveries.get_by_role("button", name="Redeliver").click()
    expect(deliveries).to_contain_text("pending")
    save_screenshot(page, "project-webhooks")

    page.goto(f"/reports/{report['trackingId']}")
    page.get_by_label("Assignee").select_option(label="Grace Hopper")
    page.get_by_label("Status").select_option("in_progress")
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_text("Changes saved.")).to_be_visible()
    # The Details panel follows the save at once, as the activity does, without a reload.
    expect(page.locator(".facts")).to_contain_text("Grace Hopper")
    expect(page.locator(".facts")).to_contain_text("in progress")
    page.reload()
    expect(page.locator(".facts")).to_contain_text("Grace Hopper")


def test_a_colleague_is_invited_joins_and_changes_role(page, browser, base_url):
    sign_up(page)
    api_key = create_project(page)
    link = invite(page, "grace@example.com", "viewer")
    report = file_report(base_url, api_key, title="Cart empties itself", severity="medium")

    # Grace has no account: the link creates it and joins her to the project.
    graces = browser.new_context(base_url=base_url)
    grace = graces.new_page()
    # Without SVC_PUBLIC_URL the link names SVC_BIND's address; this server listens elsewhere.
    grace.goto("/invite/" + link.rsplit("/", 1)[1])
    expect(grace.get_by_role("heading", name="Join Web Shop")).to_be_visible()
    expect(grace.get_by_text("Ada Lovelace invites grace@example.com")).to_be_visible()
    grace.get_by_label("Name").fill("Grace Hopper")
    grace.get_by_label("Password").fill(PASSWORD)
    save_screenshot(grace, "accept-invitation")
    grace.get_by_role("button", name="Create account and join").click()
    # exact: "Join Web Shop", the heading before the click, would match too (a race seen in CI).
    expect(grace.get_by_role("heading", name="Web Shop", level=1, exact=True)).to_be_visible()

    page.reload()
    grace_role = page.get_by_label("Role of Grace Hopper")
    expect(grace_role).to_have_value("viewer")
    # The last owner cannot step down: the API's answer is shown, the choice undone.
    page.get_by_label("Role of Ada Lovelace").select_option("member")
    expect(page.locator("section[aria-label=Members] > .form-error")).to_contain_text("owner")
    expect(page.get_by_label("Role of Ada Lovelace")).to_have_value("owner")

    grace.goto(f"/reports/{report['trackingId']}")
    expect(grace.get_by_role("heading", level=1)).to_contain_text("Cart empties itself")
    expect(grace.get_by_role("button", name="Save changes")).to_have_count(0)

    grace_role.select_option("member")
    expect(grace_role).to_have_value("member")
    page.reload()
    expect(page.get_by_label("Role of Grace Hopper")).to_have_value("member")
    grace.reload()
    expect(grace.get_by_role("button", name="Save changes")).to_be_visible()

    grace.goto(page.url.removeprefix(base_url))
    grace.get_by_role("button", name="Leave project").click()
    grace.get_by_role("dialog").get_by_role("button", name="Leave").click()
    expect(grace.get_by_role("heading", name="Projects")).to_be_visible()
    expect(grace.get_by_text("Web Shop")).to_have_count(0)
    graces.close()


def test_deleting_a_report_asks_first_and_works_by_keyboard(page, base_url):
    sign_up(page)
    api_key = create_project(page)
    report = file_report(base_url, api_key, title="Typo on the home page", severity="low")
    page.goto(f"/reports/{report['trackingId']}")

    delete = page.get_by_role("button", name="Delete report")
    delete.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("dialog")).to_be_visible()
    page.keyboard.press("Escape")  # cancel
    page.reload()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Typo on the home page")

    page.get_by_role("button", name="Delete report").click()
    page.get_by_role("dialog").get_by_role("button", name="Delete report").click()
    expect(page).to_have_url(re.compile(r"/reports$"))
    expect(page.get_by_text("No reports yet")).to_be_visible()
    gone = page.request.get(f"/api/v1/reports/{report['id']}")
    assert gone.status == 404


def test_report_content_is_shown_as_text_never_run(page, base_url):
    sign_up(page)
    api_key = create_project(page)
    hostile = '<img src=x onerror="window.pwned=1">'
    report = file_report(
        base_url,
        api_key,
        title=hostile,
        severity="high",
        console_logs=[{"level": "error", "message": hostile, "timestamp": 1}],
        metadata={"note": hostile},
    )
    page.goto("/reports")
    expect(rows(page).first).to_contain_text(hostile)
    page.goto(f"/reports/{report['trackingId']}")
    expect(page.locator(".console-entry")).to_contain_text(hostile)
    assert page.evaluate("window.pwned") is None
    assert page.locator("main img").count() == 0


def test_pages_carry_a_restrictive_content_security_policy(base_url):
    for path in ("/", "/reports/WS-1", "/assets/js/app.js"):
        response = requests.get(f"{base_url}{path}")
        assert response.status_code == 200
        policy = response.headers["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
        assert "unsafe-inline" not in policy
    assert requests.get(f"{base_url}/nowhere").status_code == 404


def test_the_widget_is_set_up_and_tried_from_the_project_page(page, base_url):
    # The widget's dialog lives in a closed shadow root; open it for Playwright's locators.
    page.add_init_script(OPEN_SHADOW_ROOTS)
    sign_up(page)
    create_project(page)
    widget = page.get_by_role("form", name="Widget")
    widget.get_by_label("Button text").fill("Found a bug?")
    widget.get_by_label("Position").select_option("bottom-left")
    widget.get_by_label("Reporters' language").select_option("de")
    widget.get_by_label("Console messages and uncaught errors").uncheck()
    widget.get_by_role("button", name="Save widget").click()
    expect(widget.get_by_text("Widget saved.")).to_be_visible()
    save_screenshot(page, "project-widget")

    page.get_by_role("link", name="Try the widget").click()
    expect(page.get_by_role("heading", name="Try the widget")).to_be_visible()
    expect(page.get_by_role("button", name="Found a bug?")).to_be_visible()
    page.get_by_role("button", name="Open the reporter with a test report").click()
    # The project speaks German to every reporter: the widget's own words are German, the
    # project's own button text stays as written.
    reporter = page.get_by_role("dialog", name="Fehler melden")
    expect(reporter.get_by_label("Titel")).to_have_value("Test report from the dashboard")
    expect(reporter).not_to_contain_text("Konsolenmeldungen")  # switched off above
    reporter.get_by_role("button", name="Meldung senden").click()
    expect(reporter.get_by_role("status")).to_contain_text("Danke \u2013 WS-1")
    reporter.get_by_role("button", name="Schlie\u00dfen").first.click()

    go_to(page, "Reports")
    expect(page.get_by_role("link", name="Test report from the dashboard")).to_be_visible()
    cookies = {c["name"]: c["value"] for c in page.context.cookies()}
    report = requests.get(f"{base_url}/api/v1/reports/WS-1", cookies=cookies)
    assert report.json()["locale"] == "de"  # the project's one language, not the browser's
    # Leaving the page took the widget off the dashboard, hooks and all.
    expect(page.locator("[data-svc-widget]")).to_have_count(0)
    assert page.evaluate("String(window.fetch).includes('[native code]')")


def test_an_admin_deactivates_a_user_who_is_signed_out_at_once(page, browser, base_url):
    sign_up(page)  # the first user: the admin
    register_over_http(base_url, "Grace Hopper", "grace@example.com")
    graces = browser.new_context(base_url=base_url)
    grace = graces.new_page()
    grace.goto("/login")
    grace.get_by_label("E-mail").fill("grace@example.com")
    grace.get_by_label("Password").fill(PASSWORD)
    grace.get_by_role("button", name="Sign in").click()
    expect(grace.get_by_role("heading", name="Reports")).to_be_visible()
    expect(grace.get_by_role("link", name="Admin")).to_be_hidden()

    go_to(page, "Admin")
    expect(page.get_by_role("region", name="Mail")).to_contain_text("Mail is off")
    # What /admin/health knows, in words; no scheduler runs beside this app.
    health = page.get_by_role("region", name="Health")
    expect(health).to_contain_text("Schedulernone is active")
    expect(health).to_contain_text("Waiting0 webhook deliveries, 0 mails")
    expect(health).to_contain_text("Object storefolder: answering")
    accounts = page.locator("table.users tbody tr")
    expect(accounts).to_have_count(2)
    expect(accounts.nth(0)).to_contain_text("active · admin")
    # No second factor: nothing to reset is offered.
    expect(accounts.nth(1)).to_contain_text("password")
    expect(
        page.get_by_role("button", name="Reset the second factors of Grace Hopper")
    ).to_have_count(0)
    page.get_by_role("button", name="Deactivate Grace Hopper").click()
    page.get_by_role("dialog").get_by_role("button", name="Deactivate").click()
    expect(accounts.nth(1)).to_contain_text("deactivated")
    save_screenshot(page, "admin")

    grace.reload()
    expect(grace).to_have_url(re.compile(r"/login"))
    grace.get_by_label("E-mail").fill("grace@example.com")
    grace.get_by_label("Password").fill(PASSWORD)
    grace.get_by_role("button", name="Sign in").click()
    expect(grace.get_by_role("alert")).to_contain_text("deactivated")
    graces.close()

    page.reload()  # the audit log has both: the deactivation and her refused sign-in
    log = page.get_by_role("region", name="Audit log")
    entries = log.locator("table.audit tbody tr")
    log.get_by_label("Action").select_option("user_deactivated")
    expect(entries).to_have_count(1)
    expect(entries.first).to_contain_text("Ada Lovelace")
    log.get_by_label("Action").select_option("sign_in_failed")
    expect(entries).to_have_count(1)
    expect(entries.first).to_contain_text("reason: deactivated")
    log.get_by_label("Who").select_option(label="Grace Hopper")
    expect(log).to_contain_text("Nothing recorded for these filters.")
    log.get_by_label("Action").select_option("")
    expect(entries).to_have_count(3)  # signing up (which signs in), then signing in
    with page.expect_download() as download:
        log.get_by_role("link", name="Download as NDJSON").click()
    lines = Path(download.value.path()).read_text().splitlines()
    assert [json.loads(line)["action"] for line in lines] == [
        "account_created",
        "sign_in",
        "sign_in",
    ]


def test_mail_choices_on_the_account_page_and_the_unsubscribe_link(page, base_url, app):
    sign_up(page)
    create_project(page)
    go_to(page, "Account")
    choice = page.get_by_label("Mails about Web Shop")
    expect(choice).to_have_value("high_and_critical")
    choice.select_option("all")
    expect(page.get_by_role("status").filter(has_text="Saved")).to_be_visible()
    page.reload()
    expect(page.get_by_label("Mails about Web Shop")).to_have_value("all")

    # The link at the foot of a mail: opening it changes nothing, the button does.
    with app.app_context():
        user = User.query.filter_by(email="ada@example.com").one()
        project = Project.query.one()
        token = notification_mails.unsubscribe_token(user.id, project)
    page.goto(f"/unsubscribe/{token}")
    expect(page.get_by_role("heading", name="Unsubscribe")).to_be_visible()
    page.get_by_role("button", name="Stop these mails").click()
    expect(page.get_by_role("status")).to_contain_text(
        "ada@example.com gets no more mails about Web Shop"
    )
    go_to(page, "Account")
    expect(page.get_by_label("Mails about Web Shop")).to_have_value("none")


def test_a_comment_with_a_mention_and_the_timeline(page, browser, base_url):
    sign_up(page)
    api_key = create_project(page)
    link = invite(page, "grace@example.com")
    accepted = requests.post(
        f"{base_url}/api/v1/invitations/accept",
        json={"token": link.rsplit("/", 1)[1], "name": "Grace Hopper", "password": PASSWORD},
    )
    assert accepted.status_code == 201
    report = file_report(base_url, api_key, title="Cart empties itself", severity="medium")
    page.goto(f"/reports/{report['trackingId']}")
    page.get_by_label("Status").select_option("in_progress")
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_text("Changes saved.")).to_be_visible()
    # The save redraws the activity: typing while it is moved could lose the keystrokes (a
    # comment once went out empty, 422), so the redraw comes first.
    expect(page.locator("ol.activity > li")).to_have_count(2)

    page.get_by_role("textbox", name="Comment").fill(
        "@Grace Hopper see https://shop.example/cart?x=1 <b>not bold</b>"
    )
    page.get_by_role("button", name="Comment", exact=True).click()
    activity = page.locator("ol.activity > li")
    expect(activity).to_have_count(3)
    expect(activity.nth(0)).to_contain_text("The widget filed the report")
    expect(activity.nth(1)).to_contain_text("Ada Lovelace changed status new → in progress")
    comment = activity.nth(2)
    expect(comment).to_contain_text("Ada Lovelace commented")
    # Links are anchors; what looks like markup stays text.
    expect(comment.get_by_role("link", name="https://shop.example/cart?x=1")).to_have_attribute(
        "href", "https://shop.example/cart?x=1"
    )
    expect(comment.locator("b")).to_have_count(0)
    expect(comment).to_contain_text("<b>not bold</b>")
    save_screenshot(page, "report-activity")

    comment.get_by_role("button", name="Delete the comment of Ada Lovelace").click()
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()
    expect(activity.nth(2)).to_contain_text("Ada Lovelace deleted a comment")

    # A reply to the reporter (docs/reporter-updates.md) says so, and only it is public.
    page.get_by_role("textbox", name="Comment").fill("Fixed in today's release")
    page.get_by_role("checkbox", name="Reply to reporter").check()
    page.get_by_role("button", name="Comment", exact=True).click()
    expect(activity.nth(3)).to_contain_text("Ada Lovelace replied to the reporter")
    expect(activity.nth(3)).to_have_class(re.compile(r"\bpublic\b"))
    expect(page.get_by_role("checkbox", name="Reply to reporter")).not_to_be_checked()
    listed = requests.get(
        f"{base_url}/api/v1/reports/{report['trackingId']}/comments",
        cookies={c["name"]: c["value"] for c in page.context.cookies()},
    ).json()
    assert [(c["body"], c["public"]) for c in listed] == [("Fixed in today's release", True)]


def test_three_reports_are_resolved_at_once(page, base_url):
    sign_up(page)
    api_key = create_project(page)
    for title in ("One", "Two", "Three", "Four"):
        file_report(base_url, api_key, title=title, severity="low")
    go_to(page, "Reports")
    expect(rows(page)).to_have_count(4)
    bar = page.get_by_role("region", name="Selected reports")
    expect(bar).to_be_hidden()
    for ref in ("WS-1", "WS-2", "WS-4"):
        page.get_by_label(f"Select {ref}", exact=True).check()
    expect(bar).to_contain_text("3 selected")
    bar.get_by_label("Set the status of the selected reports").select_option("resolved")
    bar.get_by_role("button", name="Apply to selected").click()
    expect(rows(page).filter(has_text="resolved")).to_have_count(3)
    expect(rows(page).filter(has_text="Three")).to_contain_text("new")
    # Nothing the page leaves out shows as "null" (the blank line once under the table).
    expect(page.locator("main")).not_to_contain_text("null")

    page.get_by_label("Select every report on this page").check()
    expect(bar).to_contain_text("4 selected")
    bar.get_by_role("button", name="Delete selected").click()
    page.get_by_role("dialog").get_by_role("button", name="Delete reports").click()
    expect(page.get_by_text("No reports yet")).to_be_visible()


def test_assigned_to_me_and_the_new_filters_live_in_the_url(page, base_url):
    sign_up(page)
    api_key = create_project(page)
    for title in ("Mine", "Nobody's", "Old one"):
        reporter = f"{title}@shop.example"
        file_report(base_url, api_key, title=title, severity="low", reporter_identifier=reporter)
    page.goto("/reports/WS-1")
    page.get_by_label("Assignee").select_option(label="Ada Lovelace")
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_text("Changes saved.")).to_be_visible()

    go_to(page, "Reports")
    page.get_by_role("link", name="Assigned to me").click()
    expect(page).to_have_url(re.compile(r"/reports\?assignee=me$"))
    expect(rows(page)).to_have_count(1)
    expect(rows(page)).to_contain_text("Mine")
    page.get_by_label("Assignee").select_option("none")
    expect(rows(page)).to_have_count(2)
    page.get_by_label("Reporter", exact=True).fill("OLD")
    page.get_by_role("button", name="Search").click()
    expect(page).to_have_url(re.compile(r"assignee=none.*reporter=OLD"))
    expect(rows(page)).to_have_count(1)
    page.reload()
    expect(rows(page)).to_contain_text("Old one")
    expect(page.get_by_label("Reporter", exact=True)).to_have_value("OLD")
    # Several values in the URL show as one choice.
    page.goto("/reports?status=new,closed")
    expect(page.get_by_label("Status", exact=True)).to_have_value("new,closed")
    expect(rows(page)).to_have_count(3)


DASHBOARD_PAGE_SIZE = 20  # PAGE_SIZE of views/reports.js


def test_a_search_past_its_count_limit_says_more_than_and_pages_on(page, base_url):
    limit = _SERVED["app"].config["SVC_SEARCH_COUNT_LIMIT"]
    _SERVED["app"].config["SVC_SEARCH_COUNT_LIMIT"] = 2
    try:
        sign_up(page)
        api_key = create_project(page)
        for number in range(DASHBOARD_PAGE_SIZE + 5):
            file_report(base_url, api_key, title=f"Checkout {number}", severity="low")
        page.goto("/reports?search=checkout")
        # The first page's count stops at its end (the limit is lower): more than a page.
        expect(page.get_by_role("status").filter(has_text="reports")).to_have_text(
            f"More than {DASHBOARD_PAGE_SIZE} reports"
        )
        pages = page.get_by_role("navigation", name="Pages")
        expect(pages).to_contain_text("Page 1 of more than 1")
        pages.get_by_role("link", name="Next").click()
        # The last page is counted to its end: exact again, and no Next.
        expect(pages).to_contain_text("Page 2 of 2")
        expect(rows(page)).to_have_count(5)
        expect(page.get_by_role("status").filter(has_text="reports")).to_have_text(
            f"{DASHBOARD_PAGE_SIZE + 5} reports"
        )
        expect(pages.get_by_role("link", name="Next")).to_have_count(0)
    finally:
        _SERVED["app"].config["SVC_SEARCH_COUNT_LIMIT"] = limit


def test_the_filtered_reports_are_exported_as_csv(page, base_url):
    sign_up(page)
    api_key = create_project(page)
    for title, severity in (("Crash", "critical"), ("Typo", "low"), ("Freeze", "critical")):
        file_report(base_url, api_key, title=title, severity=severity)
    go_to(page, "Reports")
    page.get_by_label("Severity", exact=True).select_option("critical")
    expect(rows(page)).to_have_count(2)
    with page.expect_download() as download:
        page.get_by_role("link", name="Export CSV").click()
    saved = download.value
    assert saved.suggested_filename.startswith("svc-reports-")
    assert saved.suggested_filename.endswith(".csv")
    exported = list(csv.DictReader(io.StringIO(Path(saved.path()).read_text())))
    assert [row["title"] for row in exported] == ["Freeze", "Crash"]
    assert {row["severity"] for row in exported} == {"critical"}


def test_the_overview_page_draws_its_charts(page, base_url):
    sign_up(page)
    api_key = create_project(page)
    for title, severity in (("Crash", "critical"), ("Typo", "low"), ("Freeze", "critical")):
        file_report(base_url, api_key, title=title, severity=severity)
    page.goto("/reports/WS-2")
    page.get_by_label("Status").select_option("resolved")
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_text("Changes saved.")).to_be_visible()

    go_to(page, "Overview")
    expect(page.get_by_role("region", name="Open", exact=True)).to_contain_text("2")
    expect(page.get_by_role("region", name="Filed", exact=True)).to_contain_text("3")
    expect(page.get_by_role("region", name="Resolved", exact=True)).to_contain_text("1")
    severity = page.get_by_role("img", name=re.compile("critical: 2"))
    expect(severity).to_be_visible()
    expect(page.locator("svg.days rect.filed")).to_have_count(30)
    page.get_by_label("Period").select_option("7")
    expect(page).to_have_url(re.compile(r"/overview\?days=7"))
    expect(page.locator("svg.days rect.filed")).to_have_count(7)
    save_screenshot(page, "overview")


def test_a_duplicate_is_marked_from_similar_reports_and_the_list_groups_one_bug(page, base_url):
    """ "Similar reports" on the report page with one-click "Mark as duplicate", the undo, the
    list grouped by bug and the overview's bugs of the week."""
    sign_up(page)
    api_key = create_project(page)
    captured = {"console_logs": [CAPTURED["console_logs"][2]], "metadata": {"url": "/checkout"}}
    for title, reporter in (("Checkout fails with a 500", "ada@shop.example"),
                            ("Can't pay, order 2231", "grace@shop.example"),
                            ("Pay button dead", "linus@shop.example")):  # fmt: skip
        file_report(base_url, api_key, title=title, reporter_identifier=reporter, severity="high",
                    **captured)  # fmt: skip
    file_report(base_url, api_key, title="Logo is blurry", category="ui", severity="low",
                description="On my retina screen.")  # fmt: skip

    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base_url)
    page.goto("/reports/WS-2")
    page.get_by_role("button", name="Copy as Markdown").click()
    expect(page.get_by_text("Copied.")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()").startswith("# WS-2: Can't pay")
    duplicates = page.get_by_role("region", name="Duplicates")
    similar = duplicates.locator("ol.similar li")
    expect(similar).to_have_count(2)
    expect(similar.first).to_contain_text("same console error")
    expect(duplicates).not_to_contain_text("Logo is blurry")
    save_screenshot(page, "similar-reports")
    duplicates.get_by_role("button", name="Mark WS-2 a duplicate of WS-1").click()
    expect(duplicates).to_contain_text("A duplicate of WS-1")
    expect(page.locator(".badges")).to_contain_text("closed")
    activity = page.get_by_role("region", name="Activity")
    expect(activity).to_contain_text("duplicate of none → WS-1")

    # The primary counts it; a refusal says why, beside the field.
    page.goto("/reports/WS-1")
    duplicates = page.get_by_role("region", name="Duplicates")
    expect(duplicates).to_contain_text("1 duplicate: reported by 2 people.")
    expect(page.get_by_role("region", name="Activity")).to_contain_text(
        "marked WS-2 a duplicate of this report"
    )
    duplicates.get_by_role("textbox", name="Duplicate of").fill("WS-2")
    duplicates.get_by_role("button", name="Mark as duplicate", exact=True).click()
    expect(duplicates).to_contain_text("WS-2 is a duplicate of WS-1: undo that first.")

    # Undo from the duplicate's page.
    page.goto("/reports/WS-2")
    page.get_by_role("button", name="Not a duplicate").click()
    expect(page.locator(".badges")).to_contain_text("new")
    expect(page.get_by_role("region", name="Duplicates").locator("ol.similar li")).to_have_count(2)

    go_to(page, "Reports")
    page.get_by_role("link", name="Group by bug").click()
    expect(page).to_have_url(re.compile(r"group=bug"))
    group = page.locator("ol.groups li")
    expect(group).to_have_count(1)
    expect(group).to_contain_text("3 reports from 3 reporters, newest")
    # In one wording whatever the browser: the property alone, minified names out.
    expect(group).to_contain_text("console: typeerror: total is undefined")
    save_screenshot(page, "reports-by-bug")
    group.locator("a").first.click()
    expect(page).to_have_url(re.compile(r"signature="))
    expect(rows(page)).to_have_count(3)
    go_to(page, "Overview")
    expect(page.get_by_role("region", name="Bugs reported most this week")).to_contain_text(
        "3 reports from 3 reporters"
    )


def test_title_and_description_are_edited_in_place(page, base_url):
    sign_up(page)
    api_key = create_project(page)
    report = file_report(base_url, api_key, title="Cart empties", severity="low")
    page.goto(f"/reports/{report['trackingId']}")
    page.get_by_role("button", name="Edit the title").click()
    page.get_by_label("Title", exact=True).fill("Cart empties after login")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_have_text("WS-1 Cart empties after login")
    page.get_by_role("button", name="Edit the description").click()
    page.get_by_label("Description", exact=True).fill("1. Sign in\n2. <b>See</b> the cart")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator("p.description")).to_have_text("1. Sign in\n2. <b>See</b> the cart")
    page.reload()
    expect(page.get_by_role("heading", level=1)).to_have_text("WS-1 Cart empties after login")
    expect(page.locator("ol.activity > li").nth(1)).to_contain_text("changed the title")


def test_dark_mode_follows_the_system(browser, base_url):
    for scheme, background in (("dark", "rgb(17, 21, 28)"), ("light", "rgb(245, 246, 248)")):
        context = browser.new_context(base_url=base_url, color_scheme=scheme)
        tab = context.new_page()
        tab.goto("/login")
        expect(tab.get_by_role("heading", name="Sign in to svc")).to_be_visible()
        assert tab.evaluate("getComputedStyle(document.documentElement).backgroundColor") == (
            background
        )
        if scheme == "dark":
            save_screenshot(tab, "sign-in-dark")
        context.close()


def test_an_unknown_address_and_an_unknown_filter_have_pages_of_their_own(page, base_url):
    sign_up(page)
    page.goto("/reports?status=bogus")
    heading = page.get_by_role("heading", level=1)
    expect(heading).to_have_text("This address asks for something svc does not know")
    expect(page.get_by_role("alert")).to_contain_text("status: ")
    expect(page.get_by_text("highlighted")).to_have_count(0)

    answer = page.goto("/no/such/page")
    assert answer.status == 404 and "text/html" in answer.headers["content-type"]
    expect(heading).to_have_text("Page not found")
    expect(page.get_by_role("alert")).to_have_text("There is no page at this address.")
    # Scripts and programs still get the API's JSON.
    assert requests.get(f"{base_url}/no/such/page").json() == {"detail": "Not found"}
    assert requests.get(f"{base_url}/api/v1/nothing", headers={"Accept": "text/html"}).json()


def test_the_only_owner_is_told_before_any_question_that_they_cannot_leave(page):
    sign_up(page)
    create_project(page)
    page.get_by_role("button", name="Leave project").click()
    expect(page.get_by_role("alert")).to_contain_text("You are the only owner of Web Shop")
    expect(page.get_by_role("dialog")).to_have_count(0)


def test_a_signed_out_page_load_logs_no_error(context, base_url):
    tab = context.new_page()
    errors = []
    tab.on("console", lambda message: message.type == "error" and errors.append(message.text))
    tab.goto("/reports")
    expect(tab.get_by_role("button", name="Sign in")).to_be_visible()
    tab.goto("/signup")
    expect(tab.get_by_role("button", name="Create account")).to_be_visible()
    assert errors == []


def test_every_page_fits_a_phone_screen(browser, base_url):
    """At 390 px, no dashboard page is wider than the screen; the README's pictures at both
    sizes are taken here (make screenshots)."""
    phone = browser.new_context(base_url=base_url, viewport={"width": 390, "height": 844})
    try:
        page = phone.new_page()
        sign_up(page)
        api_key = create_project(page)
        project_path = page.url.removeprefix(base_url)
        report = file_report(
            base_url,
            api_key,
            title="A long title that a phone has to wrap somewhere sensible " * 2,
            severity="high",
            reporter_identifier="a.very.long.address.of.someone@subdomain.example.com",
            **CAPTURED,
        )
        pages = {
            "/reports": rows(page),
            f"/reports/{report['trackingId']}": page.get_by_role("heading", name="Details"),
            "/reports?status=bogus": page.get_by_role("heading", level=1),
            "/overview": page.get_by_role("heading", name="Overview"),
            "/projects": page.get_by_role("heading", name="Projects"),
            project_path: page.get_by_role("heading", name="Members"),
            f"{project_path}/try-widget": page.get_by_role("heading", level=1),
            "/account": page.get_by_role("heading", name="Account"),
            "/no/such/page": page.get_by_role("heading", name="Page not found"),
        }
        phone_pictures = {
            "/reports": "reports-phone",
            f"/reports/{report['trackingId']}": "report-phone",
            project_path: "project-settings-phone",
        }
        wide = {}
        for path, shown in pages.items():
            page.goto(path)
            expect(shown.first).to_be_visible()
            width = page.evaluate("document.documentElement.scrollWidth")
            if width > 390:
                wide[path] = width
            if path in phone_pictures:
                save_screenshot(page, phone_pictures[path])
        assert wide == {}
        # The settings page's link to the widget's documentation opens the document itself.
        page.goto(project_path)
        link = page.get_by_role("link", name="the widget's documentation")
        document = requests.get(base_url + link.get_attribute("href"))
        assert document.ok and document.text.startswith("# ")
    finally:
        phone.close()


def test_the_project_page_has_sections_to_jump_between(page):
    sign_up(page)
    create_project(page)
    sections = page.get_by_role("navigation", name="Sections of this page")
    members = page.get_by_role("region", name="Members")
    audit = page.get_by_role("region", name="Audit log")

    sections.get_by_role("link", name="Members").click()
    expect(page).to_have_url(re.compile(r"#members$"))
    expect(sections.get_by_role("link", name="Members")).to_have_attribute(
        "aria-current", "location"
    )
    expect(members).to_be_in_viewport()
    sections.get_by_role("link", name="Audit log").focus()  # and by keyboard
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"#audit$"))
    expect(audit).to_be_in_viewport()
    expect(sections.get_by_role("link", name="Members")).not_to_have_attribute(
        "aria-current", "location"
    )
    page.go_back()  # the page stays; the section before comes back
    expect(page).to_have_url(re.compile(r"#members$"))
    expect(members).to_be_in_viewport()
    page.reload()  # an address with an anchor opens at its section
    expect(members).to_be_in_viewport()
    expect(audit).not_to_be_in_viewport()

    page.set_viewport_size({"width": 390, "height": 844})  # on a phone: a row above
    sections.get_by_role("link", name="Audit log").click()
    expect(audit).to_be_in_viewport()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_a_settings_error_shows_beside_its_field_in_words_and_in_view(page):
    """A bad "Seconds kept" showed its error about 950 px above the Save button, naming the raw
    field `settings.widget.replay_seconds`."""
    sign_up(page)
    create_project(page)
    widget = page.get_by_role("form", name="Widget")
    seconds = widget.get_by_label("Seconds kept")
    seconds.fill("5")
    widget.get_by_role("button", name="Save widget").click()
    beside = page.locator(f"#{seconds.get_attribute('id')}-error")
    expect(beside).to_be_visible()
    expect(beside).to_contain_text("greater than or equal to 10")
    expect(seconds).to_have_attribute("aria-invalid", "true")
    expect(seconds).to_be_focused()
    expect(seconds).to_be_in_viewport()
    expect(widget.locator(".form-error")).not_to_contain_text("settings.widget")
    save_screenshot(page, "settings-error")
    # The project's other settings form: an origin that is none, beside its field.
    settings = page.get_by_role("form", name="Settings")
    origins = settings.get_by_label("Allowed origins")
    origins.fill("https://shop.example\nnot an origin")
    settings.get_by_role("button", name="Save settings").click()
    expect(page.locator(f"#{origins.get_attribute('id')}-error")).to_be_visible()
    expect(origins).to_be_focused()
    expect(origins).to_be_in_viewport()


def test_the_audit_log_is_read_a_page_at_a_time(page):
    sign_up(page)  # the first user: an administrator; two entries (account, sign-in)
    with _SERVED["app"].app_context():
        for _ in range(30):
            audit.record(audit.SIGN_OUT, None, ("user", None))
        db.session.commit()
    go_to(page, "Admin")
    log = page.get_by_role("region", name="Audit log")
    entries = log.locator("table.audit tbody tr")
    pages = log.get_by_role("navigation", name="Audit log pages")
    expect(pages).to_contain_text("Page 1 of 2")
    expect(entries).to_have_count(25)
    pages.get_by_role("button", name="Older").click()
    expect(pages).to_contain_text("Page 2 of 2")
    expect(entries).to_have_count(7)
    expect(entries.last).to_contain_text("account created")
    pages.get_by_role("button", name="Newer").click()
    expect(pages).to_contain_text("Page 1 of 2")
    expect(entries.first).to_contain_text("sign out")


def test_usage_retention_and_one_reporters_data_on_the_project_page(page, base_url):
    sign_up(page)  # the first user: an admin too
    api_key = create_project(page)
    for reporter in ("jo@example.com", "JO@example.com", "sam@example.com"):
        filed = {"title": f"From {reporter}", "reporter_identifier": reporter}
        file_report(base_url, api_key, severity="low", **filed)
    page.reload()
    page.get_by_role("navigation", name="Sections of this page").get_by_role(
        "link", name="Data and retention"
    ).click()
    data = page.get_by_role("region", name="Data and retention")
    expect(data.locator("dl.usage")).to_contain_text("Reports3")

    data.get_by_label("Delete reports after (days)").fill("90")
    data.get_by_label("closed").uncheck()
    data.get_by_role("button", name="Save retention").click()
    expect(data).to_contain_text("Reports resolved for 90 days are deleted.")

    data.get_by_role("textbox", name="Reporter").fill("jo@example.com")
    with page.expect_download() as download:
        data.get_by_role("link", name="Download their reports (NDJSON)").click()
    lines = Path(download.value.path()).read_text().splitlines()
    assert sorted(json.loads(line)["title"] for line in lines) == [
        "From JO@example.com",
        "From jo@example.com",
    ]
    data.get_by_role("button", name="Erase their reports").click()
    page.get_by_role("dialog").get_by_role("button", name="Erase").click()
    expect(data).to_contain_text("2 reports of jo@example.com erased")
    # Counted again at once, without a reload.
    expect(data.locator("dl.usage")).to_contain_text("Reports1")
    page.reload()
    expect(data.locator("dl.usage")).to_contain_text("Reports1")
    save_screenshot(page, "project-data")

    go_to(page, "Admin")
    usage = page.get_by_role("region", name="Usage")
    expect(usage).to_contain_text("1 report, 0 files")  # "1 report", never "1 reports"
    expect(usage.locator("table.usage tbody tr")).to_have_count(1)


def test_a_field_error_not_on_the_form_is_not_called_highlighted(page, base_url):
    """ "Correct the highlighted fields" with none highlighted."""
    sign_up(page)
    said = page.evaluate("""async () => {
      const { showError, formError } = await import("/assets/js/dom.js");
      const { ApiError } = await import("/assets/js/api.js");
      const form = document.createElement("form");
      form.append(formError());
      document.body.append(form);
      showError(new ApiError(422, { detail: "Validation failed",
        errors: { "settings.widget.locale": ["Unknown field."] } }), form);
      return form.querySelector(".form-error").textContent;
    }""")
    assert "highlighted" not in said
    # In words, not the API's path to it.
    assert said == "The service did not accept this: locale: Unknown field."


def test_captured_request_details_show_on_the_network_entry_as_text(page, base_url):
    """With captureNetworkDetails on, headers and bodies were stored but shown only inside the
    HAR and the cURL command: now under the request, closed until opened, JSON bodies
    pretty-printed, everything as text, a long body cut with "show all"."""
    sign_up(page)
    api_key = create_project(page)
    [project] = page.request.get("/api/v1/projects").json()
    token = next(c["value"] for c in page.context.cookies() if c["name"] == "svc_csrf_token")
    settings = {"settings": {"widget": {"capture_network_details": True}}}
    changed = page.request.patch(f"/api/v1/projects/{project['id']}", data=settings,
                                 headers={"X-CSRF-Token": token})  # fmt: skip
    assert changed.ok, changed.text()
    long_answer = json.dumps({"lines": [f"line {n}" for n in range(400)]})
    file_report(base_url, api_key, title="Checkout fails", severity="high", network_logs=[{
        "method": "POST", "url": "https://shop.example/api/checkout", "status": 500,
        "timestamp": 1763800001900, "duration": 120,
        "requestHeaders": {"content-type": "application/json",
                           "x-note": "<img src=x onerror=alert(1)>"},
        "requestBody": '{"items":[1,2],"note":"<b>bold</b>"}',
        "responseHeaders": {"content-type": "application/json"},
        "responseBody": long_answer,
    }])  # fmt: skip
    page.goto("/reports/WS-1")
    details = page.locator("table.network details")
    expect(details).to_have_count(1)
    expect(details.locator("pre").first).to_be_hidden()  # closed until asked for
    details.get_by_text("Request and response details").click()
    request_body, response_body = details.locator("pre.body").all()
    assert (
        request_body.inner_text()
        == '{\n  "items": [\n    1,\n    2\n  ],\n  "note": "<b>bold</b>"\n}'
    )
    expect(details.locator("dd").nth(1)).to_have_text("<img src=x onerror=alert(1)>")
    assert page.locator("table.network img, table.network b").count() == 0  # text, never markup
    pretty = json.dumps(json.loads(long_answer), indent=2)
    assert response_body.inner_text() == pretty[:2000] + "…"
    details.get_by_role("button", name=f"Show all {len(pretty):,} characters").click()
    assert response_body.inner_text() == pretty
    save_screenshot(page, "network-details")


def test_on_a_phone_every_table_is_cards_and_a_long_network_log_is_folded(page, base_url):
    """At 390 px every table is cards: the audit logs, account actions beside their label,
    "failed" beside its label, the time on one line, and 100 requests folded, not one
    23,600 px list."""
    page.set_viewport_size({"width": 390, "height": 800})
    sign_up(page)
    api_key = create_project(page)
    requests_made = [
        {"method": "GET", "url": f"https://shop.test/api/item/{number}",
         "status": 500 if number in (3, 45, 99) else 200, "timestamp": 1_767_225_600_000 + number}
        for number in range(100)
    ]  # fmt: skip
    report = file_report(base_url, api_key, title="Slow", severity="low",
                         network_logs=requests_made,
                         console_logs=[{"level": "error", "message": "x",
                                        "timestamp": 1_767_225_653_001}])  # fmt: skip
    page.goto(f"/reports/{report['id']}")
    rows = page.locator("table.network tbody tr")
    expect(rows).to_have_count(22)  # the first 20, and the two failures past them
    failed_cell = rows.nth(3).locator("td[data-label=Status] .failed-mark")
    assert failed_cell.evaluate("(mark) => getComputedStyle(mark).gridColumnStart") == "2"
    time = page.locator(".console-entry time").first
    assert time.evaluate("(t) => t.getBoundingClientRect().height") < 30  # one line
    page.get_by_role("button", name="Show all 100 requests (78 more)").click()
    expect(rows).to_have_count(100)

    go_to(page, "Admin")
    actions = page.locator("table.users tbody tr").first.locator('td[data-label=""]')
    assert actions.evaluate("(cell) => getComputedStyle(cell).display") == "flex"
    audit_rows = page.locator("table.audit tbody tr")
    expect(audit_rows.first).to_be_visible()
    assert audit_rows.first.evaluate("(row) => getComputedStyle(row).display") == "block"
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, width
    save_screenshot(page, "admin-phone")


def test_every_docs_link_of_the_dashboard_is_served(app):
    """The Integrations section linked /docs/integrations.md, a 404."""
    scripts = Path(__file__).resolve().parent.parent / "svc" / "dashboard" / "static" / "js"
    linked = {
        name
        for script in scripts.rglob("*.js")
        for name in re.findall(r"/docs/([\w.-]+\.md)", script.read_text())
    }
    assert {"widget.md", "integrations.md"} <= linked
    client = app.test_client()
    for name in sorted(linked):
        answer = client.get(f"/docs/{name}")
        assert answer.status_code == 200, name
        assert answer.headers["Content-Type"] == "text/plain; charset=utf-8", name
    assert client.get("/docs/security.md").status_code == 404  # only what the dashboard links
