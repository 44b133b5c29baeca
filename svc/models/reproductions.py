import uuid
from datetime import datetime

from sqlalchemy import JSON, ForeignKey, Index, String, false
from sqlalchemy.orm import Mapped, mapped_column, relationship

from svc.extensions import db
from svc.models.base import DONE, QUEUED, RUNNING, UTCDateTime, new_id, utcnow  # noqa: F401
from svc.models.users import User

# A run's states are a job's (svc.models.base: QUEUED, RUNNING, DONE); its verdicts
# (docs/api.md §20, contract v6 §25):
REPRODUCED = "reproduced"
NOT_REPRODUCED = "not_reproduced"
INCONCLUSIVE = "inconclusive"
FAILED = "failed"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, FAILED)


class Reproduction(db.Model):
    """One run of a report's steps in a browser against the project's staging origin
    (svc.services.reproductions): queued by a member or, with `auto`, by the fan-out; taken by
    the scheduler's runner once (never retried), then done with a verdict."""

    __tablename__ = "reproductions"
    __table_args__ = (
        Index("ix_reproductions_report_created", "report_id", "created_at"),
        # The runner's queue, and the list filter `reproduced=` (the last run's verdict).
        Index("ix_reproductions_status_created", "status", "created_at"),
        Index("ix_reproductions_last_verdict", "is_last", "verdict", "report_id"),
        # What `auto` counts against its hourly limit.
        Index("ix_reproductions_project_created", "project_id", "created_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    report_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("reports.id", ondelete="CASCADE"))
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    # None for a run `auto` queued, or once the member's account is gone.
    requested_by_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL")
    )
    auto: Mapped[bool] = mapped_column(default=False, server_default=false())
    status: Mapped[str] = mapped_column(String(10), default=QUEUED)
    verdict: Mapped[str | None] = mapped_column(String(16))
    # The last finished run of its report: what the list's filter and the report's
    # `lastReproduction` read.
    is_last: Mapped[bool] = mapped_column(default=False, server_default=false())
    # What recurred ("console: typeerror: ...", "request: POST /api/pay -> 500").
    evidence: Mapped[list] = mapped_column(JSON, default=list)
    # {index, reason} of the step that could not run; None when every step ran.
    failed_step: Mapped[dict | None] = mapped_column(JSON(none_as_null=True))
    steps_run: Mapped[int] = mapped_column(default=0, server_default="0")
    requests_blocked: Mapped[int] = mapped_column(default=0, server_default="0")
    duration_ms: Mapped[int | None] = mapped_column()
    # Objects of the store, kept as the report's uploads (Screenshot rows), so they go with it.
    trace_key: Mapped[str | None] = mapped_column(String(255))
    screenshot_key: Mapped[str | None] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Until when the runner that took it may still finish it; past it the run is failed.
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime)

    requested_by: Mapped[User | None] = relationship(lazy="joined")
