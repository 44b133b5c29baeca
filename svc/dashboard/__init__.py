"""The dashboard: one HTML page and its static ES modules. Everything it shows it fetches from
the JSON API with the session cookies, so the dashboard needs nothing the API does not offer.

Each page of the dashboard has a real URL (a view can be shared or reloaded); they all serve the
same page, whose script renders the view the URL names.
"""

from flask import Blueprint, Response, current_app, render_template

bp = Blueprint(
    "dashboard",
    __name__,
    static_folder="static",
    static_url_path="/assets",
    template_folder="templates",
)

PAGES = (
    "/",
    "/login",
    "/signup",
    "/forgot-password",
    "/reset-password/<token>",
    "/invite/<token>",
    "/unsubscribe/<token>",
    "/reports",
    "/overview",
    "/reports/<ref>",
    "/projects",
    "/projects/<project_id>",
    "/projects/<project_id>/try-widget",
    "/account",
    "/admin",
)

# Scripts, styles and images come only from this origin (no inline script, no eval); the page
# cannot be framed, and forms and links cannot be pointed elsewhere by injected markup.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)


def page(**_path_values) -> Response:
    response = current_app.make_response(render_template("dashboard.html"))
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response.headers["Cache-Control"] = "no-cache"
    return response


for rule in PAGES:
    bp.add_url_rule(rule, view_func=page, methods=["GET"])


@bp.after_request
def protect_assets(response: Response) -> Response:
    response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    return response
