"""The dashboard in a real browser: headless Chromium (Debian's package) driven by Playwright,
against the app served over real HTTP. Widget traffic goes to the same server with the API key.

The pages it passes through are saved into docs/screenshots/ for the README.
"""

import re
from urllib.parse import quote

import pytest
import requests
from playwright.sync_api import Page, expect

from harness.client import register
from harness.service import sign_up as register_over_http
from tests.browser import OPEN_SHADOW_ROOTS, save_screenshot

PASSWORD = "correct horse battery"

pytestmark = pytest.mark.browser


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


def file_report(base_url: str, api_key: str, **fields) -> dict:
    """What a widget does: POST the report with the project's API key."""
    body = {"description": "Steps to reproduce…", "category": "bug", **fields}
    response = requests.post(
        f"{base_url}/api/v1/reports", json=body, headers={"X-API-Key": api_key}
    )
    assert response.status_code == 201, response.text
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

    page.get_by_label("Severity").select_option("critical")
    expect(page).to_have_url(re.compile(r"severity=critical"))
    expect(rows(page)).to_have_count(1)
    page.get_by_label("Severity").select_option("")
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
    page.reload()
    expect(page.get_by_label("Status")).to_have_value("in_progress")
    expect(page.locator(".badges")).to_contain_text("in progress")


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
    expect(page.get_by_role("link", name="Mobile App")).to_be_visible()
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
    register_over_http(base_url, "Grace Hopper", "grace@example.com")
    sign_up(page)
    api_key = create_project(page)

    page.get_by_label("Add a member by e-mail").fill("grace@example.com")
    page.get_by_role("button", name="Add member").click()
    expect(page.locator("ul.members li")).to_have_count(2)
    page.get_by_label("Add a member by e-mail").fill("nobody@example.com")
    page.get_by_role("button", name="Add member").click()
    expect(page.locator("section[aria-label=Members] .field-error:visible")).to_contain_text("user")

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
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_text("Changes saved.")).to_be_visible()
    page.reload()
    expect(page.locator(".facts")).to_contain_text("Grace Hopper")


def test_roles_are_changed_and_a_viewer_cannot_triage(page, browser, base_url):
    register_over_http(base_url, "Grace Hopper", "grace@example.com")
    sign_up(page)
    api_key = create_project(page)
    page.get_by_label("Add a member by e-mail").fill("grace@example.com")
    page.get_by_label("Role", exact=True).select_option("viewer")
    page.get_by_role("button", name="Add member").click()
    grace_role = page.get_by_label("Role of Grace Hopper")
    expect(grace_role).to_have_value("viewer")
    # The last owner cannot step down: the API's answer is shown, the choice undone.
    page.get_by_label("Role of Ada Lovelace").select_option("member")
    expect(page.locator("section[aria-label=Members] > .form-error")).to_contain_text("owner")
    expect(page.get_by_label("Role of Ada Lovelace")).to_have_value("owner")
    report = file_report(base_url, api_key, title="Cart empties itself", severity="medium")

    graces = browser.new_context(base_url=base_url)
    grace = graces.new_page()
    grace.goto("/login")
    grace.get_by_label("E-mail").fill("grace@example.com")
    grace.get_by_label("Password").fill(PASSWORD)
    grace.get_by_role("button", name="Sign in").click()
    expect(grace.get_by_role("heading", name="Reports")).to_be_visible()
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


def test_the_list_fits_a_phone_screen(browser, base_url):
    phone = browser.new_context(base_url=base_url, viewport={"width": 390, "height": 844})
    try:
        page = phone.new_page()
        sign_up(page)
        api_key = create_project(page)
        for index in range(3):
            file_report(base_url, api_key, title=f"Broken layout number {index}", severity="medium")
        page.goto("/reports")
        expect(rows(page)).to_have_count(3)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        save_screenshot(page, "reports-phone")
    finally:
        phone.close()


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
    widget.get_by_label("Console messages and uncaught errors").uncheck()
    widget.get_by_role("button", name="Save widget").click()
    expect(widget.get_by_text("Widget saved.")).to_be_visible()
    save_screenshot(page, "project-widget")

    page.get_by_role("link", name="Try the widget").click()
    expect(page.get_by_role("heading", name="Try the widget")).to_be_visible()
    expect(page.get_by_role("button", name="Found a bug?")).to_be_visible()
    page.get_by_role("button", name="Open the reporter with a test report").click()
    reporter = page.get_by_role("dialog", name="Report a bug")
    expect(reporter.get_by_label("Title")).to_have_value("Test report from the dashboard")
    expect(reporter).not_to_contain_text("Console messages")  # switched off above
    reporter.get_by_role("button", name="Send report").click()
    expect(reporter.get_by_role("status")).to_contain_text("Thanks — WS-1")
    reporter.get_by_role("button", name="Close").click()

    go_to(page, "Reports")
    expect(page.get_by_role("link", name="Test report from the dashboard")).to_be_visible()
    # Leaving the page took the widget off the dashboard, hooks and all.
    expect(page.locator("[data-svc-widget]")).to_have_count(0)
    assert page.evaluate("String(window.fetch).includes('[native code]')")
