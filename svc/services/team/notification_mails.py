"""What the notification mails say (svc.services.team.notifications decides who gets which, and
when): one report's mail, the summary of a burst, and the footer with its one-click
unsubscribe link (RFC 8058), whose signed token this module makes and reads."""

import uuid

from flask import current_app
from itsdangerous import URLSafeSerializer

from svc.config import public_url, report_url
from svc.models import Notification, Project, Report, User
from svc.models.notifications import ASSIGNED, MENTIONED, NEW_REPORT, REOPENED
from svc.wire import one_line

# A title in a Subject header: long enough to tell reports apart, short of what mail clients cut.
SUBJECT_TITLE_LIMIT = 120


def single(user: User, item: Notification, report: Report) -> tuple[str, str, dict]:
    project = report.project
    link = report_url(report.tracking_id)
    title = title_line(report.title)
    if item.kind == NEW_REPORT:
        subject = f"[{report.tracking_id}] New {report.severity} report: {title}"
        opening = f"A new {report.severity} report came into {project.name}:"
    elif item.kind == ASSIGNED:
        subject = f"[{report.tracking_id}] Assigned to you: {title}"
        opening = f"{item.actor_name} assigned a report of {project.name} to you:"
    elif item.kind == REOPENED:
        subject = f"[{report.tracking_id}] Reopened by its reporter: {title}"
        opening = f"The person who reported it says it still happens ({project.name}):"
    else:  # MENTIONED
        subject = f"[{report.tracking_id}] {item.actor_name} mentioned you: {title}"
        opening = f"{item.actor_name} mentioned you on a report of {project.name}:"
    text = f"{opening}\n\n{report.tracking_id} {title}\n\n{link}"
    return _with_footer(user, subject, text, project)


def summary(
    user: User, items: list[Notification], reports: dict[uuid.UUID, Report]
) -> tuple[str, str, dict]:
    """One mail for `items`; `reports` holds the report of each, by id."""
    lines = []
    for item in items:
        report = reports[item.report_id]
        what = {
            NEW_REPORT: f"new {report.severity} report",
            ASSIGNED: f"assigned to you by {item.actor_name}",
            MENTIONED: f"{item.actor_name} mentioned you",
            REOPENED: "reopened by its reporter",
        }[item.kind]
        link = report_url(report.tracking_id)
        lines.append(f"{report.tracking_id} ({what}): {title_line(report.title)}\n{link}")
    subject = f"{len(items)} updates from svc"
    text = (
        f"So much happened at once that it comes in one mail, {len(items)} updates:\n\n"
        + "\n\n".join(lines)
    )
    return _with_footer(user, subject, text, None)


def title_line(text: str) -> str:
    """A title fit for a Subject header: one line, and not too long."""
    return one_line(text, SUBJECT_TITLE_LIMIT)


def _with_footer(user: User, subject: str, text: str, project: Project | None):
    link = public_url(f"/unsubscribe/{unsubscribe_token(user.id, project)}")
    about = f"about {project.name}" if project else "about any project"
    text += (
        f"\n\n--\nYou get this mail because of your notification settings: "
        f"{public_url('/account')}\nNo more mails {about}: {link}"
    )
    return subject, text, one_click_unsubscribe(link)


def one_click_unsubscribe(link: str) -> dict:
    """The headers of a one-click unsubscribe (RFC 8058): mail programs POST to the link."""
    return {
        "List-Unsubscribe": f"<{link}>",
        "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
    }


def _serializer() -> URLSafeSerializer:
    return URLSafeSerializer(current_app.config["SECRET_KEY"], salt="svc-unsubscribe")


def unsubscribe_token(user_id: uuid.UUID, project: Project | None) -> str:
    """Signed, not stored: a link in an old mail keeps working; it names the user and the
    project (None: every project)."""
    return _serializer().dumps([str(user_id), str(project.id) if project else None])


def unsubscribe_target(token: str) -> list:
    """[user id, project id or None] of a token; BadSignature for one svc did not sign."""
    return _serializer().loads(token)
