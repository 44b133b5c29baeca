"""The pages a reporter opens from a mail, without an account (docs/reporter-updates.md): a
report's status page and the unsubscribe page, rendered here in the reporter's language from
the services' answers. (The dashboard, for the team, fetches everything from the JSON API.)"""

from flask import Blueprint, Response, current_app, render_template, request

from svc import dashboard, i18n
from svc.errors import NotFound as ReportNotFound
from svc.models import DONE_STATUSES
from svc.services.reporters import reporter_mails, status_links, status_page

# Its templates (status.html, unsubscribe.html) and assets are the dashboard's.
bp = Blueprint("reporter_pages", __name__)

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
    words = status_links.status_in_words(shown, speak) if report else None
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
        return dashboard.page()
    speak = i18n.speaker(request.accept_languages.best)
    return _reporters_page(render_template("unsubscribe.html", _=speak), 200, speak)
