import uuid
from datetime import datetime

from sqlalchemy import JSON, ForeignKey, String, Text, false
from sqlalchemy.orm import Mapped, mapped_column, relationship

from svc.extensions import db
from svc.models.base import UTCDateTime, new_id, same_as_created, utcnow
from svc.models.users import User

# The kinds of a report's activity (docs/api.md §8.8). "created" is not stored: the report's
# own created_at says it (svc.services.reporting.activity), so filing a report writes nothing more.
CREATED = "created"
CHANGED = "changed"
COMMENTED = "commented"
COMMENT_DELETED = "comment_deleted"
# An issue in a tracker was linked to the report (svc.services.trackers.integrations).
LINKED = "linked"
# A report was marked a duplicate of this one, or no longer is (svc.services.grouping.duplicates).
DUPLICATE = "duplicate"
# The reporter reopened the report from its status page (svc.services.reporters.status_page).
REOPENED = "reopened"
# The report's steps were run against the staging origin (svc.services.reproductions): the
# verdict, from the last run's to this one's; `via` "auto" when no one asked.
REPRODUCED = "reproduced"
# `via` of what the reporter did from the status page.
REPORTER = "reporter"


class Comment(db.Model):
    __tablename__ = "comments"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    report_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("reports.id", ondelete="CASCADE"), index=True
    )
    # None once the author's account is gone; the comment stays.
    author_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    body: Mapped[str] = mapped_column(Text)
    # Shown to the reporter on the report's status page (and mailed to them); private ones never.
    public: Mapped[bool] = mapped_column(default=False, server_default=false())
    # Written by the reporter from the status page (no author).
    from_reporter: Mapped[bool] = mapped_column(default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=same_as_created)

    author: Mapped[User | None] = relationship(lazy="joined")


class ActivityEntry(db.Model):
    """One change to a report: who (a user; None for the widget or a tracker, which `via`
    names), when, and what."""

    __tablename__ = "report_activity"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    report_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("reports.id", ondelete="CASCADE"), index=True
    )
    kind: Mapped[str] = mapped_column(String(20))
    actor_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    # The actor's name then, so that the history still says who when the account is gone.
    actor_name: Mapped[str | None] = mapped_column(String(100))
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # {"<camelCaseField>": {"from": ..., "to": ...}} for "changed".
    changes: Mapped[dict | None] = mapped_column(JSON)
    # The comment of "commented" and "comment_deleted" (no foreign key: it may be gone).
    comment_id: Mapped[uuid.UUID | None] = mapped_column()
    # The tracker a change came from ("github", ...), when no user made it.
    via: Mapped[str | None] = mapped_column(String(16))
