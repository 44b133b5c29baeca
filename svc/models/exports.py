import uuid
from datetime import datetime

from sqlalchemy import JSON, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from svc.extensions import db
from svc.models.base import DONE, QUEUED, RUNNING, UTCDateTime, new_id, utcnow  # noqa: F401

# An export job's states (docs/api.md §8.3.1): QUEUED, RUNNING, DONE (svc.models.base), or:
FAILED = "failed"


class ExportJob(db.Model):
    """A large export written by the scheduler into the object store (svc.services.reporting.
    export_jobs), gzipped, for its requester to download until it expires."""

    __tablename__ = "export_jobs"
    __table_args__ = (
        Index("ix_export_jobs_status_created", "status", "created_at"),
        Index("ix_export_jobs_expires", "expires_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    format: Mapped[str] = mapped_column(String(8))
    # The list's filters, as the query string gave them (svc.schemas.reports.ExportQuery).
    filters: Mapped[dict] = mapped_column(JSON, default=dict)
    status: Mapped[str] = mapped_column(String(10), default=QUEUED)
    # Reports matching when the job started, and written so far.
    total: Mapped[int | None] = mapped_column()
    written: Mapped[int] = mapped_column(default=0, server_default="0")
    key: Mapped[str | None] = mapped_column(String(255))
    size: Mapped[int | None] = mapped_column()
    error: Mapped[str | None] = mapped_column(String(500))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The file (and the row) go then.
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
