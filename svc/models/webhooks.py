import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from svc.extensions import db
from svc.models.base import UTCDateTime, new_id, same_as_created, utcnow

# The status words of every outbox (deliveries, tracker calls, mails: svc.outbox claims and
# settles rows by them); a mail's success is SENT (svc.models.mail).
PENDING = "pending"
SUCCEEDED = "succeeded"
FAILED = "failed"


class WebhookDelivery(db.Model):
    """One event to send to a project's webhook: the outbox row written in the same transaction
    as the change, and the record of every attempt. It is the source of truth for delivery: the
    scheduler claims due rows from here, and the delivery log reads it."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        # The claim's: each project's earliest due deliveries (svc.webhooks.delivery).
        Index("ix_webhook_deliveries_project_due", "status", "project_id", "next_attempt_at", "id"),
        Index("ix_webhook_deliveries_project_created", "project_id", "created_at"),
        # Deleting a report finds its deliveries (svc.webhooks.delivery.forget_reports).
        Index("ix_webhook_deliveries_report_id", "report_id"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    # No foreign key: the log keeps the event of a report deleted since.
    report_id: Mapped[uuid.UUID | None]
    event: Mapped[str] = mapped_column(String(32))
    # The JSON payload of docs/api.md §12, serialised once when the event happened.
    payload: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16), default=PENDING)
    attempts: Mapped[int] = mapped_column(default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_status_code: Mapped[int | None]
    last_error: Mapped[str | None] = mapped_column(String(500))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=same_as_created)
