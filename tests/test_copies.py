"""What the browser's JavaScript keeps a copy of, kept equal to the Python it copies: read by
Node from the scripts as they are served, so that a change on one side fails here until the
other follows."""

import json
import re
import subprocess

from harness.service import ROOT
from svc import i18n
from svc.dashboard import PAGES
from svc.models.projects import WIDGET_DEFAULTS
from svc.services.reporting.redaction import SECRET_PARAMETERS, canonical
from svc.widget import SCRIPT

DASHBOARD_JS = ROOT / "svc" / "dashboard" / "static" / "js"


def evaluated(declarations: str, expression: str):
    """`expression`'s value as JSON, after `declarations`, in Node."""
    program = f"{declarations}\nconsole.log(JSON.stringify({expression}));\n"
    done = subprocess.run(["node", "--input-type=module"], input=program, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def declaration(source: str, name: str) -> str:
    """The `const NAME = ...;` statement of a script, whole: one line, or up to the line that
    closes its object or list (`};` or `];` at the declaration's own indentation)."""
    found = re.search(rf"^\s*(?:export )?const {name} = [^\n{{\[]*;$", source, re.M)
    found = found or re.search(
        rf"^(\s*)(?:export )?const {name} = [\s\S]*?^\1[}}\]];", source, re.M
    )
    assert found, name
    return found.group().strip().removeprefix("export ")


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def test_the_widgets_defaults_are_the_services():
    """Widget.js's CONFIG_DEFAULTS (what it uses before its config arrives, or without one)
    and WIDGET_DEFAULTS (what GET /widget/config answers for a project that changed nothing)."""
    source = SCRIPT.read_text()
    defaults = evaluated(
        "const N_ = (text) => text;\n"
        + declaration(source, "DEFAULT_MAX_SCREENSHOT")
        + "\n"
        + declaration(source, "CONFIG_DEFAULTS"),
        "CONFIG_DEFAULTS",
    )
    served = {camel(name): value for name, value in WIDGET_DEFAULTS.items()}
    served.pop("locale")  # the widget's is the page's, or Svc.init's (docs/widget.md)
    defaults.pop("maxScreenshotBytes")  # the service's upload limit, not a project setting
    assert defaults == served


def test_the_dashboards_reporter_languages_are_those_svc_speaks():
    source = (DASHBOARD_JS / "constants.js").read_text()
    languages = evaluated(declaration(source, "REPORTER_LANGUAGES"), "REPORTER_LANGUAGES")
    assert [tag for tag, _ in languages] == ["auto", *i18n.LANGUAGES]


def test_the_dashboards_pages_are_its_routes():
    """Each address the service serves the dashboard at (PAGES) is a route of app.js, and each
    route of app.js an address the service serves (or the reporter's unsubscribe page's)."""
    source = (DASHBOARD_JS / "app.js").read_text()
    patterns = re.findall(r"\{ pattern: /(.+?)/, view:", source)
    assert len(patterns) > 10

    def example(page: str) -> str:
        return re.sub(r"<[^>]+>", "x1", page)

    routes = [re.compile(pattern.replace("\\/", "/")) for pattern in patterns]
    for page in PAGES:
        if page != "/":  # the root redirects to the reports
            assert any(route.fullmatch(example(page)) for route in routes), page
    served = [example(page) for page in (*PAGES, "/unsubscribe/<token>")]
    for route in routes:
        assert any(route.fullmatch(page) for page in served), route.pattern


def test_the_widgets_secret_names_are_redacted_by_the_service_too():
    """The widget's SECRET_NAME and the server's SECRET_PARAMETERS (contract v6): the server
    redacts at least what the widget would have, whatever client sent the report."""
    [names] = re.findall(r"const SECRET_NAME = /\^\(\?:([^)]*)\)", SCRIPT.read_text())
    assert {canonical(name) for name in names.split("|")} <= SECRET_PARAMETERS


STATUSES = [None, 0, 200, 204, 301, 399, 400, 404, 429, 500, 503, "500", "200", "", "abc", 0.0]


def test_what_a_failed_request_is_one_rule_in_every_copy():
    """A request failed when it got no answer (no status, 0) or an error (400 and up): the
    service's rule (svc.models.failed_request), the CLI's copy and the dashboard's."""
    from svc.client.main import failed_request as the_clis
    from svc.models import failed_request

    entries = [{} if status is None else {"status": status} for status in STATUSES]
    services = [failed_request(entry) for entry in entries]
    assert services[:4] == [True, True, False, False] and services[7] is True
    assert [the_clis(entry) for entry in entries] == services
    source = (DASHBOARD_JS / "views" / "report.js").read_text()
    [function] = re.findall(r"^function failed\(entry\) \{\n[\s\S]*?^\}", source, re.M)
    assert evaluated(function, f"{json.dumps(entries)}.map(failed)") == services


def test_the_bridge_asks_for_writes_as_the_server_reads_the_ask():
    """`svc mcp --allow-writes` sends a header the service's MCP server reads: one spelling
    (the CLI may not import the service)."""
    from svc.client.mcp_bridge import ALLOW_WRITES_HEADER as the_clis
    from svc.mcp.server import ALLOW_WRITES_HEADER

    assert the_clis == ALLOW_WRITES_HEADER
