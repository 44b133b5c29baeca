"""Comments on reports (docs/api.md §8.7): members and owners write, everyone in the project
reads; authors edit and delete their own, owners delete any. `@Name` or `@email` of a project
member mentions them (a notification mail, by their choice), and each new comment is a
`report.commented` webhook event."""

import re
import uuid

from sqlalchemy import select

from svc.errors import Forbidden, not_found
from svc.extensions import db
from svc.models import MEMBER, OWNER, VIEWER, Comment, Membership, Report, User
from svc.models.activity import COMMENT_DELETED
from svc.models.base import utcnow
from svc.services import projects
from svc.services.reporting import activity, report_changes, reports

# An "@" that starts a mention: not inside a word or an address (ada@example.com mentions nobody).
_MENTION_START = re.compile(r"(?<![\w.+-])@")


def add(user: User, reference: str, body: str, public: bool = False) -> Comment:
    """`public`: shown on the report's status page and mailed to its reporter (by the project's
    setting, docs/reporter-updates.md)."""
    report = reports.workable_for(user, reference)
    comment = Comment(
        id=uuid.uuid4(), report_id=report.id, author_id=user.id, body=body, public=public
    )
    comment.author = user
    db.session.add(comment)
    report_changes.commented(
        report, comment, report_changes.member(user), mentioned(report, body, user)
    )
    db.session.commit()
    return comment


def list_for(user: User, reference: str) -> list[Comment]:
    report = reports.get_for(user, reference)
    return list(
        db.session.scalars(
            select(Comment)
            .where(Comment.report_id == report.id)
            .order_by(Comment.created_at, Comment.id)
        )
    )


def edit(user: User, comment_id: uuid.UUID, body: str) -> Comment:
    """Its author only (while a member or owner of the project)."""
    comment, report = _comment_for(user, comment_id)
    projects.access(user, report.project_id, at_least=MEMBER)
    if comment.author_id != user.id:
        raise Forbidden("Only its author can edit a comment")
    if comment.body != body:
        comment.body = body
        comment.updated_at = utcnow()
        db.session.commit()
    return comment


def delete(user: User, comment_id: uuid.UUID) -> None:
    """Its author (while a member or owner), or any owner of the project."""
    comment, report = _comment_for(user, comment_id)
    role = projects.access(user, report.project_id, at_least=MEMBER).role
    if comment.author_id != user.id and role != OWNER:
        raise Forbidden("Only its author or a project owner can delete a comment")
    db.session.delete(comment)
    activity.record(report, user, COMMENT_DELETED, comment_id=comment.id)
    db.session.commit()


def _comment_for(user: User, comment_id: uuid.UUID) -> tuple[Comment, Report]:
    """The comment and its report, if the user can see the report (404 otherwise)."""
    comment = db.session.get(Comment, comment_id)
    if comment is None:
        raise not_found("Comment not found")
    report = db.session.get(Report, comment.report_id)
    if not projects.has_role(report.project_id, user.id, VIEWER):
        raise not_found("Comment not found")
    return comment, report


def mentioned(report: Report, body: str, author: User) -> set[uuid.UUID]:
    """The project members a body mentions, by `@Name` or `@email` (case-insensitive; where
    two names fit, the longer: "@Ada Lovelace" is Ada Lovelace, not Ada). Never the author."""
    members = db.session.execute(
        select(User.id, User.name, User.email)
        .join(Membership, Membership.user_id == User.id)
        .where(Membership.project_id == report.project_id)
    ).all()
    handles = sorted(
        ((handle.lower(), user_id) for user_id, name, email in members for handle in (name, email)),
        key=lambda pair: -len(pair[0]),
    )
    lowered = body.lower()
    found = set()
    for start in _MENTION_START.finditer(lowered):
        rest = lowered[start.end() :]
        for handle, user_id in handles:
            if rest.startswith(handle) and not rest[len(handle) : len(handle) + 1].isalnum():
                found.add(user_id)
                break
    found.discard(author.id)
    return found
