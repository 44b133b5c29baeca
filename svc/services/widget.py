"""The widget's settings as a project has them in force (docs/api.md §7.3): the defaults,
overlaid with what the project's owner changed."""

from svc.models import Project
from svc.models.projects import WIDGET_DEFAULTS


def settings_in_force(project: Project) -> dict:
    """Every widget setting, the owner's where set, else the default."""
    changed = project.widget_settings or {}
    return {name: changed.get(name, default) for name, default in WIDGET_DEFAULTS.items()}


def merged(project: Project, changes: dict) -> dict:
    """The stored overrides after a PATCH: keys not sent keep their values."""
    return {**(project.widget_settings or {}), **changes}
