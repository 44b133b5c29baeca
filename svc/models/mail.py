import uuid
from datetime import datetime

from sqlalchemy import JSON, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from svc.extensions import db
from svc.models.base import UTCDateTime, new_id, utcnow

# Every outbox's words, re-exported for the mail's own modules.
from svc.models.webhooks import FAILED as FAILED
from svc.models.webhooks import PENDING as PENDING

SENT = "sent"
# A reporter mail over its daily limits: recorded (for /admin/health), never sent.
LIMITED = "limited"


class OutgoingMail(db.Model):
    """One mail to send: written in the same transaction as what it tells of (a reset link, an
    invitation), claimed and sent by the scheduler like a webhook delivery (svc.mail.outbox)."""

    __tablename__ = "mail_outbox"
    __table_args__ = (
        Index("ix_mail_outbox_due", "status", "next_attempt_at"),
        Index("ix_mail_outbox_to_address_created_at", "to_address", "created_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    to_address: Mapped[str] = mapped_column(String(320))
    subject: Mapped[str] = mapped_column(String(200))
    text_body: Mapped[str] = mapped_column(Text)
    html_body: Mapped[str] = mapped_column(Text)
    # Headers beyond From, To, Subject, Date and Message-ID (List-Unsubscribe, ...).
    headers: Mapped[dict] = mapped_column(JSON, default=dict)
    status: Mapped[str] = mapped_column(String(16), default=PENDING)
    attempts: Mapped[int] = mapped_column(default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_error: Mapped[str | None] = mapped_column(String(500))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # The project a mail to a reporter is about (docs/reporter-updates.md): their daily limits
    # count these rows. None for every other mail.
    reporter_project_id: Mapped[uuid.UUID | None] = mapped_column()
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class ReporterMailCount(db.Model):
    """One mail queued to a reporter, counted for their daily limits (docs/reporter-updates.md)
    apart from the mail itself: erasing the reporter's data deletes their mails, and must not
    reset the count (contract v6). `address_key`: a keyed hash of the address as the limits
    compare it (svc.services.reporters.reporter_mails.address_key), never the address. Kept a
    day."""

    __tablename__ = "reporter_mail_counts"
    __table_args__ = (Index("ix_reporter_mail_counts_key_created_at", "address_key", "created_at"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    address_key: Mapped[str] = mapped_column(String(64))
    project_id: Mapped[uuid.UUID] = mapped_column()
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
