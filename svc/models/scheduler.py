from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from svc.extensions import db
from svc.models.base import UTCDateTime


class SchedulerLease(db.Model):
    """The one row that says which scheduler process is active (svc.services.instance.leadership).
    The epoch goes up with every new holder: a holder acts only while the row still has its epoch,
    which fences off a process that was paused while another took over."""

    __tablename__ = "scheduler_lease"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    holder: Mapped[str | None] = mapped_column(String(200))
    epoch: Mapped[int] = mapped_column(default=0)
    since: Mapped[datetime | None] = mapped_column(UTCDateTime)
    renewed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class InstanceMarker(db.Model):
    """That a one-time piece of work of the scheduler's is done, and when: its jobs look here
    rather than over every report again (svc.services.grouping.signatures.backfill)."""

    __tablename__ = "instance_markers"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime)
