"""What the widget reads with the project's API key before it files anything (docs/api.md
§7.3): its look and captures, and the console-log quota older widgets ask for."""

from flask import Blueprint, current_app

from svc import replay
from svc.api.cors import widget_cors
from svc.api.decorators import response
from svc.auth.guard import api_key_required, current_project
from svc.schemas.widget import ConsoleLogQuotaOut, WidgetConfigOut
from svc.services.widget import settings_in_force

bp = Blueprint("widget_api", __name__, url_prefix="/api/v1/projects")

# The project lists allowed origins and the request's Origin is not one of them.
ORIGIN_REFUSED = (403,)


@bp.get("/widget-config")
@widget_cors
@api_key_required
@response(WidgetConfigOut(), errors=ORIGIN_REFUSED)
def widget_config():
    """The widget's settings in force for the API key's project."""
    config = settings_in_force(current_project())
    config["max_screenshot_bytes"] = current_app.config["SVC_MAX_SCREENSHOT_BYTES"]
    # Where rrweb is not installed the widget loads no replay script (docs/replay.md).
    config["enable_replay"] = config["enable_replay"] and replay.unavailable() is None
    config["mails_reporters"] = current_project().reporter_updates_in_force["enabled"]
    return config


@bp.get("/console-log-quota")
@widget_cors
@api_key_required
@response(ConsoleLogQuotaOut(), errors=ORIGIN_REFUSED)
def console_log_quota():
    """Always allowed: svc keeps no console-log quota."""
    return {"allowed": True, "remaining": None, "limit": None}
