"""Mail notifications (docs/api.md §4): each user's choices, and the one-click
unsubscribe link every notification mail carries."""

from flask import Blueprint

from svc.api.decorators import body, response
from svc.auth.guard import current_user, login_required
from svc.schemas.notifications import NotificationChoiceIn, NotificationChoiceOut, UnsubscribedOut
from svc.services.reporters import reporter_mails
from svc.services.team import notifications

bp = Blueprint("notifications", __name__)


@bp.get("/api/v1/auth/me/notifications")
@login_required
@response(NotificationChoiceOut(many=True))
def get_choices():
    """Which new reports of each of the caller's projects they hear of by mail."""
    return notifications.preferences(current_user())


@bp.put("/api/v1/auth/me/notifications")
@login_required
@body(NotificationChoiceIn(many=True))
@response(NotificationChoiceOut(many=True), errors=(404,))
def set_choices(data):
    """Set the choice of the projects named (an array); the others keep theirs."""
    return notifications.set_preferences(current_user(), data)


# Not rate limited: the token is signed (nothing to guess), and mail providers send these
# POSTs for many users from few addresses.
@bp.post("/unsubscribe/<token>")
@response(UnsubscribedOut(), errors=(404,))
def unsubscribe(token: str):
    """One click from a mail (RFC 8058: mail programs POST here, whatever the body): no more
    mails about the link's project (or, from a summary, any project). A reporter's link
    (docs/reporter-updates.md): no more mails to that address about that project."""
    if reporter_mails.is_unsubscribe_token(token):
        return reporter_mails.unsubscribe(token)
    return notifications.unsubscribe(token)
