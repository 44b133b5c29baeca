import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from svc.extensions import db
from svc.models.base import UTCDateTime, new_id, utcnow

# What a notification tells (docs/api.md §4 and §8.7).
NEW_REPORT = "new_report"
ASSIGNED = "assigned"
MENTIONED = "mentioned"
# The reporter said "still happening" on the report's status page: its assignee hears.
REOPENED = "reopened"

# A person's choice of new-report mails per project (Membership.notify_new_reports).
ALL = "all"
HIGH_AND_CRITICAL = "high_and_critical"
ONLY_ASSIGNED = "assigned"
NONE = "none"
NEW_REPORT_CHOICES = (ALL, HIGH_AND_CRITICAL, ONLY_ASSIGNED, NONE)


class Notification(db.Model):
    """Something one person is to be told by mail. Written in the transaction of the change it
    tells of; svc.services.team.notifications turns it into a mail, or into a line of a summary when
    the person has had many mails lately."""

    __tablename__ = "notifications"
    __table_args__ = (Index("ix_notifications_user_mailed", "user_id", "mailed_at"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    # A deleted report takes its unsent notifications with it.
    report_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("reports.id", ondelete="CASCADE"), index=True
    )
    kind: Mapped[str] = mapped_column(String(20))
    # Who assigned or mentioned; None for a new report (the widget filed it).
    actor_name: Mapped[str | None] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    mailed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The mail it went out in: its own, or a summary shared with others (so that counting
    # distinct mail ids counts mails, for the burst limit).
    mail_id: Mapped[uuid.UUID | None] = mapped_column()
