"""Debian's headless Chromium, as the tests and the benchmarks launch it through Playwright
(Playwright's own browser download is never used)."""

from svc.services.reproductions import browser

# Chromium's headless shell drives every page: it renders as Chromium does, for much less CPU
# (docs/performance.md, "Where a run's CPU goes"). The full browser only where the shell lacks
# something: capturing the tab (getDisplayMedia), the widget's screenshot.
HEADLESS_SHELL = "/usr/bin/chromium-headless-shell"
CHROMIUM = "/usr/bin/chromium"
# svc's own flags for its runs (no background networking: Chromium would keep dialling Google,
# which this closed network refuses); --no-sandbox because CI runs as root. The last one
# accepts the widget's request to capture the current tab, as a person would in the prompt.
CHROMIUM_ARGS = [*browser.CHROMIUM_ARGS, "--no-sandbox", "--auto-accept-this-tab-capture"]


def launch_chromium(playwright, executable: str = HEADLESS_SHELL):
    """Debian's Chromium, headless, through a started Playwright."""
    return playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
