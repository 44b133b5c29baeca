"""A report's status page (docs/reporter-updates.md), reached by its signed link without
signing in: what it shows of the report, the reporter's replies, and "Still happening?"."""

import uuid

from sqlalchemy import select

from svc.errors import Conflict
from svc.extensions import db
from svc.models import DONE_STATUSES, ActivityEntry, Comment, Report
from svc.models.activity import CHANGED, REOPENED
from svc.services import report_changes, reporter_mails


def page(token: str) -> dict:
    """What the status page shows, and nothing else of the report: no logs, metadata,
    screenshots, assignee or private comments."""
    return _page_of(reporter_mails.report_of(token))


def _page_of(report: Report) -> dict:
    comments = db.session.scalars(
        select(Comment)
        .where(Comment.report_id == report.id, Comment.public)
        .order_by(Comment.created_at, Comment.id)
    )
    return {
        "tracking_id": report.tracking_id,
        "project_name": report.project.name,
        "title": report.title,
        "status": report.status,
        "reopened": report.status == "new" and _was_done(report),
        "created_at": report.created_at,
        "updated_at": report.updated_at,
        "comments": [_shown(comment, report) for comment in comments],
    }


def _was_done(report: Report) -> bool:
    """Whether the report was resolved or closed once (it is open again now)."""
    changes = db.session.scalars(
        select(ActivityEntry.changes).where(
            ActivityEntry.report_id == report.id,
            ActivityEntry.kind.in_((CHANGED, REOPENED)),
        )
    )
    return any((change or {}).get("status", {}).get("from") in DONE_STATUSES for change in changes)


def _shown(comment: Comment, report: Report) -> dict:
    return {
        "body": comment.body,
        "author": "You" if comment.from_reporter else reporter_mails.name_of(comment, report),
        "from_reporter": comment.from_reporter,
        "created_at": comment.created_at,
    }


def reply(token: str, body: str) -> dict:
    """A public comment from the reporter: in the activity as theirs (no author, via
    `reporter`), a report.commented webhook like any comment."""
    report = reporter_mails.report_of(token)
    comment = Comment(
        id=uuid.uuid4(), report_id=report.id, body=body, public=True, from_reporter=True
    )
    comment.author = None
    db.session.add(comment)
    report_changes.commented(report, comment, report_changes.BY_REPORTER)
    db.session.commit()
    return _shown(comment, report)


def reopen(token: str) -> dict:
    """ "Still happening?": a resolved or closed report goes back to `new` (one report.updated,
    activity `reopened` via the reporter), its trackers' issues reopen, its assignee hears.
    What the page shows now."""
    report = reporter_mails.report_of(token)
    if report.status not in DONE_STATUSES:
        raise Conflict("Only a resolved or closed report can be reopened")
    report_changes.update(report, {"status": "new"}, report_changes.BY_REPORTER)
    db.session.commit()
    return _page_of(report)
