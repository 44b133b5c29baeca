import uuid
from datetime import datetime

from sqlalchemy import JSON, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from svc.extensions import db
from svc.models.base import UTCDateTime, new_id, utcnow


class AuditEntry(db.Model):
    """Who did what to what, and from where (svc.audit). Append-only, and kept apart from the
    rows it names: no foreign keys, so that an entry outlives the account, project or report it
    is about, with the names it had then."""

    __tablename__ = "audit_log"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)
    # None for the operator's commands and a failed sign-in.
    actor_id: Mapped[uuid.UUID | None] = mapped_column()
    actor_name: Mapped[str | None] = mapped_column(String(100))
    action: Mapped[str] = mapped_column(String(40))
    target_type: Mapped[str] = mapped_column(String(20))
    target_id: Mapped[str | None] = mapped_column(String(64))
    project_id: Mapped[uuid.UUID | None] = mapped_column()
    # The client's address as the proxy rules see it; None from the command line.
    ip: Mapped[str | None] = mapped_column(String(45))
    detail: Mapped[dict] = mapped_column(JSON)

    __table_args__ = (Index("ix_audit_log_project_id_at", "project_id", "at"),)

    @property
    def actor(self) -> dict | None:
        return None if self.actor_id is None else {"id": self.actor_id, "name": self.actor_name}

    @property
    def target(self) -> dict:
        return {"type": self.target_type, "id": self.target_id}
