import uuid
from datetime import date

from sqlalchemy import Date, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from svc.extensions import db


class ReportTally(db.Model):
    """How many reports of a project have this status, severity and category now: kept in the
    transaction of every creation, change and deletion (svc.services.reporting.stats), so the
    overview reads a few rows per project instead of counting every report."""

    __tablename__ = "report_tallies"

    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    status: Mapped[str] = mapped_column(String(16), primary_key=True)
    severity: Mapped[str] = mapped_column(String(16), primary_key=True)
    category: Mapped[str] = mapped_column(String(16), primary_key=True)
    count: Mapped[int] = mapped_column(default=0)


class ReportDay(db.Model):
    """Per project and UTC day: how many of its reports were created that day, and how many
    were resolved that day (their resolved_at falls in it), as the reports stand now."""

    __tablename__ = "report_days"

    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    created: Mapped[int] = mapped_column(default=0)
    resolved: Mapped[int] = mapped_column(default=0)
