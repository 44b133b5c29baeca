"""A report's statuses, severities and categories are written down in four places that cannot
import one another: the models (svc/models/reports.py, which the API validates against), the
command line (svc/client, which imports nothing of the service), the dashboard's constants and
the widget (JavaScript). This test keeps the copies in step with the models, in the same order,
as tests/test_config.py keeps the README's settings table in step with svc/config.py."""

import re
from pathlib import Path

import pytest

from svc import audit
from svc.client import main as cli
from svc.models import reports as models
from svc.models.integrations import KINDS

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


def test_the_dashboard_offers_every_kind_of_tracker():
    assert javascript_list(DASHBOARD, "TRACKERS") == KINDS


def test_the_dashboard_knows_every_audited_action():
    assert javascript_list(DASHBOARD, "AUDIT_ACTIONS") == audit.ACTIONS
