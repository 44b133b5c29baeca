"""The dashboard: one HTML page and its static ES modules. Everything it shows it fetches from
the JSON API with the session cookies, so the dashboard needs nothing the API does not offer.

Each page of the dashboard has a real URL (a view can be shared or reloaded); they all serve the
same page, whose script renders the view the URL names.
"""

from pathlib import Path

from flask import Blueprint, Response, current_app, render_template, request, send_file
from werkzeug.exceptions import NotFound

from svc import i18n
from svc.errors import NotFound as ReportNotFound
from svc.errors import error_response
from svc.models import DONE_STATUSES
from svc.services import reporter_mails, status_page

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


# A report's status page (docs/reporter-updates.md): read without any script; its script only
# sends a reply or a reopening to the API, on this origin. Nothing is kept by caches, the
# address (a credential) goes to no one, search engines stay out.
STATUS_PAGE_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


@bp.get("/status/<token>")
def status(token: str) -> Response:
    try:
        report, code = status_page.page(token), 200
        speak = i18n.speaker(report["language"])
    except ReportNotFound:
        # No report to ask: the visitor's own language.
        report, code = None, 404
        speak = i18n.speaker(request.accept_languages.best)
    done = report is not None and report["status"] in DONE_STATUSES
    shown = report and ("reopened" if report["reopened"] else report["status"])
    words = status_page.status_in_words(shown, speak) if report else None
    html = render_template("status.html", report=report, done=done, status_words=words, _=speak)
    return _reporters_page(html, code, speak)


def _reporters_page(html: str, code: int, speak: i18n.Speaker) -> Response:
    """A page a reporter opens from a mail: its address is a credential (never cached, never
    sent on as a referrer, never indexed); in their language, said by Content-Language."""
    response = current_app.make_response((html, code))
    response.headers["Content-Language"] = speak.language
    response.headers["Content-Security-Policy"] = STATUS_PAGE_POLICY
    response.headers["Cache-Control"] = "no-store"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["X-Robots-Tag"] = "noindex, nofollow"
    return response


@bp.get("/unsubscribe/<token>")
def unsubscribe(token: str) -> Response:
    """A member's link opens the dashboard's page; a reporter's, a page of its own in the
    visitor's language (docs/reporter-updates.md): nothing is stored of which report it was."""
    if not reporter_mails.is_unsubscribe_token(token):
        return page()
    speak = i18n.speaker(request.accept_languages.best)
    return _reporters_page(render_template("unsubscribe.html", _=speak), 200, speak)


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
