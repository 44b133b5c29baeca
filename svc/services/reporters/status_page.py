"""A report's status page (docs/reporter-updates.md), reached by its signed link without
signing in: what it shows of the report, the reporter's replies, and "Still happening?". Its
address and words: svc.services.reporters.status_links."""

import uuid

from sqlalchemy import and_, or_, select

from svc import i18n
from svc.errors import Conflict
from svc.extensions import db
from svc.models import DONE_STATUSES, ActivityEntry, Comment, Report
from svc.models.activity import CHANGED, REOPENED
from svc.services.reporters.status_links import name_of, report_of, speaker_of
from svc.services.reporting import report_changes

# --- the page ------------------------------------------------------------------------------------


def page(token: str) -> dict:
    """What the status page shows, and nothing else of the report: no logs, metadata,
    screenshots, assignee or private comments."""
    return _page_of(report_of(token))


def _page_of(report: Report) -> dict:
    """A duplicate's page (docs/api.md §8.11) shows its primary's status and the team's public
    replies there beside its own: that is where its problem is worked now. What the primary's
    reporter wrote stays theirs (contract v6): a page shows reporter replies of its own report
    alone."""
    primary = report.primary
    speak = speaker_of(report)
    comments = db.session.scalars(
        select(Comment)
        .where(
            Comment.public,
            or_(
                Comment.report_id == report.id,
                and_(Comment.report_id == primary.id, Comment.from_reporter.is_(False)),
            ),
        )
        .order_by(Comment.created_at, Comment.id)
    )
    return {
        "tracking_id": report.tracking_id,
        "project_name": report.project.name,
        "title": report.title,
        "status": primary.status,
        "merged": primary is not report,
        "reopened": primary.status == "new" and _was_done(primary),
        "created_at": report.created_at,
        "updated_at": max(report.updated_at, primary.updated_at),
        "comments": [_shown(comment, report, speak) for comment in comments],
        "language": speak.language,
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


def _shown(comment: Comment, report: Report, speak: i18n.Speaker) -> dict:
    return {
        "body": comment.body,
        "author": speak("You") if comment.from_reporter else name_of(comment, report, speak),
        "from_reporter": comment.from_reporter,
        "created_at": comment.created_at,
    }


def reply(token: str, body: str) -> dict:
    """A public comment from the reporter: in the activity as theirs (no author, via
    `reporter`), a report.commented webhook like any comment."""
    report = report_of(token)
    comment = Comment(
        id=uuid.uuid4(), report_id=report.id, body=body, public=True, from_reporter=True
    )
    comment.author = None
    db.session.add(comment)
    report_changes.commented(report, comment, report_changes.BY_REPORTER)
    db.session.commit()
    return _shown(comment, report, speaker_of(report))


def reopen(token: str) -> dict:
    """ "Still happening?": a resolved or closed report goes back to `new` (one report.updated,
    activity `reopened` via the reporter), its trackers' issues reopen, its assignee hears.
    What the page shows now."""
    report = report_of(token)
    worked = report.primary  # a duplicate's reporter reopens what they follow
    if worked.status not in DONE_STATUSES:
        raise Conflict("Only a resolved or closed report can be reopened")
    report_changes.update(worked, {"status": "new"}, report_changes.BY_REPORTER)
    db.session.commit()
    return _page_of(report)
