import uuid
from datetime import datetime

from sqlalchemy import String, Text
from sqlalchemy.orm import Mapped, mapped_column

from svc.extensions import db
from svc.models.base import UTCDateTime, new_id

# The kinds of report event (svc.services.reporting.fanout says what each sets off).
REPORT_CREATED = "report.created"


class ReportEvent(db.Model):
    """Something that happened to a report, for the fan-out (svc.services.reporting.fanout):
    written in the report's own transaction, taken by a scheduler under a lease, and deleted in the
    transaction that does everything it sets off, so that each effect happens exactly once.

    It holds what the effects need of the report as it was then (the counters count it even if
    the report is deleted before the fan-out), and no foreign keys: the fan-out skips what is
    gone."""

    __tablename__ = "report_events"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    kind: Mapped[str] = mapped_column(String(20))
    report_id: Mapped[uuid.UUID] = mapped_column()
    project_id: Mapped[uuid.UUID] = mapped_column()
    severity: Mapped[str] = mapped_column(String(16))
    category: Mapped[str] = mapped_column(String(16))
    # The webhook's payload as of the event; None when the project had no webhook then.
    payload: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    # Set by the scheduler that took the event, until it is done or its lease ends.
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    lease_token: Mapped[uuid.UUID | None] = mapped_column()
