"""A report's status page (docs/reporter-updates.md), reached by its signed link without
signing in: what it shows of the report, the reporter's replies, and "Still happening?".

Its address is signed, not stored: the report's id and an HMAC of it and of the report's
`status_link_version` under the secret key. Filing a report writes nothing for it, every mail
can carry the link, and a new link (the version raised by one) ends the old one at once.
Rotating the secret key ends every link, as it ends every session.
"""

import base64
import binascii
import hashlib
import hmac
import uuid

from flask import current_app
from sqlalchemy import and_, or_, select

from svc import i18n
from svc.auth import tokens
from svc.config import public_url
from svc.errors import Conflict, not_found
from svc.extensions import db
from svc.i18n import N_
from svc.models import (
    DEFAULT_REPORTER_UPDATES,
    DONE_STATUSES,
    ActivityEntry,
    Comment,
    Project,
    Report,
)
from svc.models.activity import CHANGED, REOPENED
from svc.services import duplicates, report_changes

INVALID_LINK = "This status page does not exist"
ENGLISH = i18n.speaker(i18n.DEFAULT)
_STATUS_WORDS = {
    "new": N_("received, not yet looked at"),
    # new again, after it was resolved or closed
    "reopened": N_("open again, waiting to be looked at"),
    "in_progress": N_("being worked on"),
    "resolved": N_("resolved"),
    "closed": N_("closed"),
}


def reporter_updates_of(project: Project) -> dict:
    """The project's reporter updates in force: whether reporters get mails and status pages
    at all (`enabled`), and which mails."""
    return project.reporter_updates or DEFAULT_REPORTER_UPDATES


def name_of(comment: Comment, report: Report, speak: i18n.Speaker = ENGLISH) -> str:
    """Who wrote a comment, as the reporter sees it."""
    if comment.author:
        return comment.author.name
    return speak("The {project} team", project=report.project.name)


def status_in_words(status: str, speak: i18n.Speaker = ENGLISH) -> str:
    return speak(_STATUS_WORDS[status])


# --- the status page's address -------------------------------------------------------------------


def _mac(report_id: uuid.UUID, version: int) -> bytes:
    message = b"svc-status-page|" + report_id.bytes + version.to_bytes(8, "big")
    key = current_app.config["SECRET_KEY"].encode()
    return hmac.new(key, message, hashlib.sha256).digest()[:16]


def _encode(raw: bytes) -> str:
    return tokens.base64url(raw)


def token_of(report: Report) -> str:
    return _encode(report.id.bytes + _mac(report.id, report.status_link_version))


def status_url(report: Report) -> str:
    return public_url(f"/status/{token_of(report)}")


def report_of(token: str) -> Report:
    """The report a status page token names; 404 for any other string, an old link's too."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (ValueError, binascii.Error):
        raise not_found(INVALID_LINK) from None
    # Decoding skips stray characters: only the one spelling of a token is that token.
    if len(raw) != 32 or _encode(raw) != token:
        raise not_found(INVALID_LINK)
    report = db.session.get(Report, uuid.UUID(bytes=raw[:16]))
    if report is None or not hmac.compare_digest(
        raw[16:], _mac(report.id, report.status_link_version)
    ):
        raise not_found(INVALID_LINK)
    # Reporter updates turned off: the page goes dark with the mails (turned on again, the
    # same links work again: nothing about them is stored).
    if not reporter_updates_of(report.project)["enabled"]:
        raise not_found(INVALID_LINK)
    return report


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
    primary = duplicates.primary_of(report)
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


def speaker_of(report: Report) -> i18n.Speaker:
    """The report's reporter's language (docs/api.md §8.1), for their page and mails."""
    return i18n.speaker(report.detail.locale)


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
    worked = duplicates.primary_of(report)  # a duplicate's reporter reopens what they follow
    if worked.status not in DONE_STATUSES:
        raise Conflict("Only a resolved or closed report can be reopened")
    report_changes.update(worked, {"status": "new"}, report_changes.BY_REPORTER)
    db.session.commit()
    return _page_of(report)
