import uuid
from datetime import date

from sqlalchemy import Date, ForeignKey, SmallInteger, String, case, literal_column
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


# The bands of hours to resolve that ReportHours counts by: band b holds the reports resolved
# BANDS[b - 1] <= hours < BANDS[b] after they were filed (band 0 below an hour, the last a
# year and over). Finer where teams resolve most.
BANDS = (
    1, 2, 3, 4, 6, 8, 10, 12, 16, 20,
    *range(24, 337, 12),  # every half day of the first two weeks
    408, 504, 600, 720, 1080, 1440, 2160, 2880, 4320, 8760,
)  # fmt: skip


def band_of(hours):
    """The band (an index of BANDS) of an SQL expression of hours, computed by the database:
    the median compares the same expression with the same bounds (svc.services.reporting.
    stats), so a report near a bound is in the same band for both."""
    return case(
        *((hours < literal_column(str(bound)), literal_column(str(band)))
          for band, bound in enumerate(BANDS)),
        else_=literal_column(str(len(BANDS))),
    )  # fmt: skip


class ReportHours(db.Model):
    """Per project, UTC day of resolution and band of hours from filed to resolved: how many of
    its reports are resolved so, as the reports stand now. The overview's median finds its
    band here and sorts that band's reports alone."""

    __tablename__ = "report_hours"

    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    band: Mapped[int] = mapped_column(SmallInteger, primary_key=True, autoincrement=False)
    count: Mapped[int] = mapped_column(default=0)
