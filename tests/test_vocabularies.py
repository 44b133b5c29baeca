"""A report's statuses, severities and categories are written down in four places that cannot
import one another: the models (svc/models/reports.py, which the API validates against), the
command line (svc/client, which imports nothing of the service), the dashboard's constants and
the widget (JavaScript). This test keeps the copies in step with the models, in the same order,
as tests/test_config.py keeps the README's settings table in step with svc/config.py."""

import inspect
import re
from pathlib import Path

import pytest

from svc import audit
from svc.client import main as cli
from svc.integrations import TRACKERS
from svc.integrations.base import Tracker
from svc.models import reports as models
from svc.models.integrations import KINDS
from svc.schemas import integrations as integration_schemas
from svc.schemas.reports import SORTS
from svc.services.reporting.redaction import SECRET_KEY_PARTS

SVC = Path(__file__).resolve().parent.parent / "svc"
DASHBOARD = SVC / "dashboard" / "static" / "js" / "constants.js"
WIDGET = SVC / "widget" / "widget.js"


def javascript_list(path: Path, name: str) -> tuple[str, ...]:
    """The values of `const NAME = [...]` in a script: its strings, or for a list of
    [value, label] pairs, the first string of each pair."""
    source = path.read_text()
    found = re.search(rf"\b{name} = \[(.*?)\];", source, re.DOTALL)
    assert found, f"{name} is not in {path.name}"
    body = found.group(1)
    if body.lstrip().startswith("["):
        return tuple(re.findall(r'\[\s*"([^"]*)"', body))
    return tuple(re.findall(r'"([^"]*)"', body))


@pytest.mark.parametrize("name", ["STATUSES", "SEVERITIES", "CATEGORIES"])
def test_the_command_line_and_the_dashboard_know_the_models_values(name):
    expected = getattr(models, name)
    assert getattr(cli, name) == expected, "svc/client/main.py"
    assert javascript_list(DASHBOARD, name) == expected, DASHBOARD.name


@pytest.mark.parametrize("name", ["SEVERITIES", "CATEGORIES"])
def test_the_widget_offers_the_models_values(name):
    assert javascript_list(WIDGET, name) == getattr(models, name)


def test_the_reader_of_the_scripts_reads_both_shapes():
    assert javascript_list(WIDGET, "SEVERITIES")[0] == "low"
    assert javascript_list(DASHBOARD, "STATUSES")[1] == "in_progress"


INTEGRATIONS_VIEW = SVC / "dashboard" / "static" / "js" / "views" / "integrations.js"


def test_every_list_of_trackers_names_the_same_ones():
    """The kinds the models accept, the modules behind them, the schemas of their settings, the
    dashboard's list and its settings form: the same trackers, in the same order."""
    form = re.search(r"CONFIG_FIELDS = \{(.*?)\n\};", INTEGRATIONS_VIEW.read_text(), re.DOTALL)
    form_kinds = tuple(re.findall(r"^  (\w+): \[", form.group(1), re.MULTILINE))
    assert tuple(TRACKERS) == KINDS
    assert tuple(integration_schemas.CONFIGS) == KINDS
    assert javascript_list(DASHBOARD, "TRACKERS") == KINDS
    assert form_kinds == KINDS
    for kind, schema in integration_schemas.CONFIGS.items():
        section = re.search(rf"^  {kind}: (.*?)\]\],?$", form.group(1), re.MULTILINE | re.DOTALL)
        keys = re.findall(r'\["(\w+)", "', section.group(1))
        assert sorted(keys) == sorted(schema().fields), kind


@pytest.mark.parametrize("kind", KINDS)
def test_each_tracker_module_is_a_tracker(kind):
    """Every function of svc.integrations.base.Tracker, with its parameters."""
    module = TRACKERS[kind]
    assert isinstance(module.NAME, str)
    for name, member in inspect.getmembers(Tracker, inspect.isfunction):
        if name.startswith("_"):
            continue
        wanted = list(inspect.signature(member).parameters)[1:]  # without self
        assert list(inspect.signature(getattr(module, name)).parameters) == wanted, name


def test_every_list_of_sorts_offers_the_same_ones():
    """The API's sorts, the command line's and the dashboard's (in the clients' own order)."""
    assert sorted(cli.SORTS) == sorted(SORTS)
    assert javascript_list(DASHBOARD, "SORTS") == cli.SORTS


def test_the_widget_hides_what_the_server_hides():
    """The widget's secret-looking names (it masks them before sending) are the server's
    (svc.services.reporting.redaction masks them again on arrival)."""
    found = re.search(r"const SECRET_KEY = /(.*?)/;", WIDGET.read_text())
    assert tuple(found.group(1).split("|")) == SECRET_KEY_PARTS


def test_the_dashboard_knows_every_audited_action():
    assert javascript_list(DASHBOARD, "AUDIT_ACTIONS") == audit.ACTIONS
