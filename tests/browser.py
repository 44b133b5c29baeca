"""What the browser tests share (the browser itself is a fixture in conftest.py)."""

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
    """Into docs/screenshots/, for the README: taken on every run, so they never go stale."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
