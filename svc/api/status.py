"""A report's status page, JSON side (docs/reporter-updates.md): read, reply and reopen with
the page's signed token, no sign-in; a member makes a new link. The HTML page is the
dashboard's (`/status/<token>`)."""

from flask import Blueprint, request

from svc import rate_limits
from svc.api.decorators import body, documents_role, rate_limited, response
from svc.auth.guard import current_user, login_required
from svc.models import MEMBER
from svc.schemas.comments import CommentIn
from svc.schemas.status import StatusCommentOut, StatusLinkOut, StatusPageOut
from svc.services.reporters import status_page
from svc.services.reporting import reports

bp = Blueprint("status", __name__, url_prefix="/api/v1")


def _page_token() -> str:
    """Rate-limit key: the status page, whichever address its visitors come from."""
    return "status|" + rate_limits.key_part(request.view_args["token"])


def _limited(view):
    """What a visitor writes: limited per page and per client address, one count for the
    reply and the reopen."""
    view = rate_limited("SVC_RATE_LIMIT_STATUS", key_func=_page_token, shared=True)(view)
    return rate_limited("SVC_RATE_LIMIT_STATUS_ADDRESS", shared=True)(view)


@bp.get("/status/<token>")
@response(StatusPageOut(), errors=(404,))
def show(token: str):
    """What the report's status page shows: its tracking id, title, status, dates and
    public comments, nothing else."""
    return status_page.page(token)


@bp.post("/status/<token>/replies")
@_limited
@body(CommentIn())
@response(StatusCommentOut(), 201, errors=(404,))
def reply(data, token: str):
    """The reporter adds to their report: a public comment, shown as theirs."""
    return status_page.reply(token, data["body"])


@bp.post("/status/<token>/reopen")
@_limited
@response(StatusPageOut(), errors=(404, 409))
def reopen(token: str):
    """ "Still happening?": a resolved or closed report goes back to `new`."""
    return status_page.reopen(token)


@bp.post("/reports/<report_ref>/status-link")
@login_required
@documents_role(MEMBER)
@response(StatusLinkOut(), 201)
def new_link(report_ref: str):
    """A new address for the report's status page; the old one answers 404 from now on."""
    return {"url": reports.new_status_link(current_user(), report_ref)}
