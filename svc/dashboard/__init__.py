"""The dashboard: one HTML page and its static ES modules. Everything it shows it fetches from
the JSON API with the session cookies, so the dashboard needs nothing the API does not offer.

Each page of the dashboard has a real URL (a view can be shared or reloaded); they all serve the
same page, whose script renders the view the URL names.
"""

from pathlib import Path

from flask import Blueprint, Response, current_app, render_template, request, send_file
from werkzeug.exceptions import NotFound

from svc.errors import error_response

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


# The docs a deployed user is pointed to from the dashboard, served from the checkout svc runs
# from, as plain text.
DOCS = Path(__file__).resolve().parent.parent.parent / "docs"
SERVED_DOCS = ("widget.md", "integrations.md")  # every /docs/ link of the dashboard


@bp.get("/docs/<name>")
def document(name: str) -> Response:
    if name not in SERVED_DOCS or not (DOCS / name).is_file():
        raise NotFound()
    # "text/plain": werkzeug adds the charset itself (given here too, it was sent twice).
    answer = send_file(DOCS / name, mimetype="text/plain", conditional=True)
    answer.headers["Cache-Control"] = "no-cache"
    return answer


@bp.app_errorhandler(404)
def no_such_page(error: NotFound):
    """An address with no route: a browser asking for a page gets the dashboard, whose script
    says there is no page here (still a 404); everything else the API's JSON error."""
    wanted = request.accept_mimetypes.best_match(["application/json", "text/html"])
    if request.path.startswith("/api/") or wanted != "text/html":
        return error_response(404, "Not found")
    response = page()
    response.status_code = 404
    return response


@bp.after_request
def protect_assets(response: Response) -> Response:
    response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    return response
