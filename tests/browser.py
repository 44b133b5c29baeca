"""What the browser tests share (the browser itself is a fixture in conftest.py)."""

import os
from pathlib import Path

from playwright.sync_api import Page

SCREENSHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
# The widget's UI lives in a closed shadow root, which Playwright's locators cannot enter: as an
# init script, this makes attachShadow open for the tests that click through that UI.
OPEN_SHADOW_ROOTS = """
const attach = Element.prototype.attachShadow;
Element.prototype.attachShadow = function (init) {
  return attach.call(this, { ...init, mode: "open" });
};
"""


def save_screenshot(page: Page, name: str) -> None:
    """Taken on every run, so that they can always be made; written into docs/screenshots/, for
    the README, only when asked (`make screenshots` sets SVC_SCREENSHOTS=1), so that running the
    suite leaves the work tree as it was."""
    picture = page.screenshot(full_page=True)
    assert picture.startswith(b"\x89PNG")
    if os.environ.get("SVC_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        (SCREENSHOTS / f"{name}.png").write_bytes(picture)


def signed_in_context(browser, client, live_server: str, **options):
    """A browser context with the test client's session: its cookies on the live server."""
    context = browser.new_context(**options)
    context.add_cookies([
        {"name": name, "value": client.get_cookie(name).value, "url": live_server}
        for name in ("svc_access_token", "svc_csrf_token")
    ])  # fmt: skip
    return context
