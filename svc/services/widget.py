"""The widget's settings as a project has them in force (contract section 11): the defaults,
overlaid with what the project's owner changed."""

from svc.models import Project

POSITIONS = ("bottom-right", "bottom-left", "top-right", "top-left")
DEFAULTS = {
    "primary_color": "#2563eb",
    "button_text": "Report a bug",
    "modal_title": "Report a bug",
    "logo_url": None,
    "position": "bottom-right",
    "enable_screenshot": True,
    "enable_session_recording": True,
    "show_watermark": False,
    "capture_console": True,
    "capture_network": True,
    "capture_actions": True,
}


def settings_in_force(project: Project) -> dict:
    """Every widget setting, the owner's where set, else the default."""
    changed = project.widget_settings or {}
    return {name: changed.get(name, default) for name, default in DEFAULTS.items()}


def merged(project: Project, changes: dict) -> dict:
    """The stored overrides after a PATCH: keys not sent keep their values."""
    return {**(project.widget_settings or {}), **changes}
