import hashlib
import uuid
from datetime import datetime

from sqlalchemy import (
    JSON,
    Float,
    ForeignKey,
    Index,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    inspect,
)
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import Mapped, mapped_column, relationship
from sqlalchemy.sql.functions import FunctionElement

from svc.extensions import db
from svc.models.base import UTCDateTime, new_id, same_as_created, utcnow
from svc.models.projects import Project

SEVERITIES = ("low", "medium", "high", "critical")  # in rank order
CATEGORIES = ("bug", "ui", "performance", "crash", "other")
STATUSES = ("new", "in_progress", "resolved", "closed")
# A report in one of these is done: its reporter hears of it, a tracker's issue is closed.
DONE_STATUSES = ("resolved", "closed")
OPEN_STATUSES = ("new", "in_progress")  # counted as open by the overview
SEVERITY_RANK = {severity: rank for rank, severity in enumerate(SEVERITIES)}


class Report(db.Model):
    """What a list page needs. The large captured arrays live in `ReportDetail`, so listing and
    searching never read them."""

    __tablename__ = "reports"
    __table_args__ = (
        UniqueConstraint("project_id", "number"),
        # One index per list filter, each ending in the default sort key, so that a page stops
        # after page_size rows and a filtered total counts index entries only.
        Index("ix_reports_project_created", "project_id", "created_at"),
        Index("ix_reports_project_status_created", "project_id", "status", "created_at"),
        Index(
            "ix_reports_project_status_severity_created",
            "project_id",
            "status",
            "severity_rank",
            "created_at",
        ),
        Index("ix_reports_project_severity_created", "project_id", "severity_rank", "created_at"),
        Index("ix_reports_project_category_created", "project_id", "category", "created_at"),
        Index("ix_reports_project_updated", "project_id", "updated_at"),
        # Search indexes (SQLite FTS5, PostgreSQL pg_trgm) are made by the migrations only: see
        # svc.services.reporting.search.
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    # The n of the tracking id <prefix>-<n>: 1, 2, 3... per project (Project.last_report_number).
    number: Mapped[int]
    title: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text)
    severity: Mapped[str] = mapped_column(String(16))
    # SEVERITY_RANK[severity], kept beside it so that sorting by severity can use an index.
    severity_rank: Mapped[int] = mapped_column(SmallInteger)
    category: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16), default="new")
    reporter_identifier: Mapped[str | None] = mapped_column(String(320))
    screenshot_key: Mapped[str | None] = mapped_column(String(255))
    annotated_screenshot_key: Mapped[str | None] = mapped_column(String(255))
    meta: Mapped[dict] = mapped_column("metadata", JSON, default=dict)
    assignee_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), index=True
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=same_as_created)
    # When the report last went from open (new, in progress) to resolved or closed; None while
    # it is open. The overview's time to resolve reads it (svc.services.reporting.stats).
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Signs the address of the report's status page (svc.services.reporters.status_page); raised by
    # one when a member makes a new link, which ends the old one at once.
    status_link_version: Mapped[int] = mapped_column(default=0, server_default="0")

    project: Mapped[Project] = relationship(lazy="joined", innerjoin=True)
    detail: Mapped["ReportDetail"] = relationship(
        back_populates="report", cascade="all, delete-orphan", passive_deletes=True, uselist=False
    )
    # Its issues in trackers (svc.services.trackers.integrations); read only for the full report.
    external_issues: Mapped[list["ExternalIssue"]] = relationship(  # noqa: F821
        viewonly=True, order_by="ExternalIssue.created_at"
    )
    # Its signature, once the fan-out has made it; loaded where an answer shows it.
    signature_row: Mapped["ReportSignature | None"] = relationship(viewonly=True, uselist=False)
    # What it is a duplicate of (svc.services.grouping.duplicates), and the reports marked
    # duplicates of it: read where an answer shows them (listing.REPORT_ANSWER), lazily elsewhere.
    duplicate_row: Mapped["ReportDuplicate | None"] = relationship(
        viewonly=True, uselist=False, foreign_keys="ReportDuplicate.report_id"
    )
    duplicate_rows: Mapped[list["ReportDuplicate"]] = relationship(
        viewonly=True, foreign_keys="ReportDuplicate.primary_id"
    )
    # Its last finished run on the staging origin (svc.services.reproductions); read only for
    # the full report.
    last_reproduction: Mapped["Reproduction | None"] = relationship(  # noqa: F821
        viewonly=True,
        uselist=False,
        primaryjoin="and_(Reproduction.report_id == Report.id, Reproduction.is_last)",
    )

    @property
    def signature(self) -> str | None:
        """The signature when it was loaded with the report (the list, the full report); None
        otherwise (a report just filed has none yet), never a query of its own."""
        loaded = inspect(self).dict.get("signature_row")
        return loaded.signature if isinstance(loaded, ReportSignature) else None

    @property
    def primary(self) -> "Report":
        """The report a duplicate was merged into; any other report itself. Where new work on a
        duplicate goes: its reporter's page follows it, a tracker issue is made for it."""
        row = self.duplicate_row
        return self if row is None else row.primary

    @property
    def duplicate_of(self) -> dict | None:
        """{id, tracking_id} of the report this one is a duplicate of; None if it is none."""
        row = self.duplicate_row
        if row is None:
            return None
        return {"id": row.primary.id, "tracking_id": row.primary.tracking_id}

    @property
    def duplicate_count(self) -> int:
        return len(self.duplicate_rows)

    @property
    def reporter_count(self) -> int:
        """The distinct people who reported it: its reporter and its duplicates' (a report
        without a reporter's identifier counts as one of its own)."""
        own = reporter_key(self.reporter_identifier, self.id)
        return len({own, *(row.reporter_key for row in self.duplicate_rows)})

    @property
    def tracking_id(self) -> str:
        return tracking_id_of(self.project.tracking_prefix, self.number)


def tracking_id_of(prefix: str, number: int) -> str:
    """A report's tracking id, `WS-12`: its project's prefix and its number in the project."""
    return f"{prefix}-{number}"


def failed_request(entry) -> bool:
    """Whether a captured request (an entry of a report's network log) failed: it got no
    answer (no status, or 0: blocked, offline, refused by CORS) or an error (400 and up). The
    one rule of the service; the dashboard's report.js and the `svc` CLI keep copies that
    tests/test_copies.py holds to it."""
    status = entry.get("status") if isinstance(entry, dict) else None
    try:
        number = float(status)
    except (TypeError, ValueError):
        return True
    return not number or number >= 400 or number != number  # NaN: no number at all


def reporter_key(identifier: str | None, report_id: uuid.UUID) -> str:
    """Who filed a report, as ReportDuplicate keeps it: a hash of the identifier (no second copy
    of an address), or the report's own id when the widget sent none."""
    identifier = (identifier or "").strip().lower()
    if not identifier:
        return report_id.hex
    return hashlib.sha256(identifier.encode()).hexdigest()[:32]


# Lists across all of a user's projects walk these in sort order. Each holds the whole ORDER BY
# of a descending sort (ties: newest first, then id): with only a prefix of it, SQLite's planner
# prefers to fetch and sort every report of the user's projects.
Index("ix_reports_created", Report.created_at.desc(), Report.id)
Index("ix_reports_updated", Report.updated_at.desc(), Report.created_at.desc(), Report.id)


class HoursBetween(FunctionElement):
    """Hours from the first timestamp to the second, as the database computes them."""

    type = Float()
    inherit_cache = True


@compiles(HoursBetween, "sqlite")
def _hours_on_sqlite(element, compiler, **kw) -> str:
    start, end = (compiler.process(clause, **kw) for clause in element.clauses)
    return f"((julianday({end}) - julianday({start})) * 24)"


@compiles(HoursBetween, "postgresql")
def _hours_on_postgresql(element, compiler, **kw) -> str:
    # date_part is a double; EXTRACT is a numeric since PostgreSQL 14, and sorting the
    # window's numerics for the median was five times slower (docs/performance.md).
    start, end = (compiler.process(clause, **kw) for clause in element.clauses)
    return f"(date_part('epoch', {end} - {start}) / 3600)"


def hours_to_resolve():
    """A report's hours from filed to resolved (NULL while it is open)."""
    return HoursBetween(Report.created_at, Report.resolved_at)


# Only the resolved: an index of every report's (project, NULL), deduplicated to a few pages,
# was PostgreSQL's cheapest walk by project, ahead of the sort's own index. created_at and the
# hours too, so that the overview's median reads the index alone and SQLite does not compute
# every resolved report's hours again (docs/performance.md, "The median in a band").
Index(
    "ix_reports_project_resolved",
    Report.project_id,
    Report.resolved_at,
    Report.created_at,
    hours_to_resolve(),
    sqlite_where=Report.resolved_at.is_not(None),
    postgresql_where=Report.resolved_at.is_not(None),
)
Index(
    "ix_reports_severity_created",
    Report.severity_rank.desc(),
    Report.created_at.desc(),
    Report.id,
)


class ReportDetail(db.Model):
    """The captured diagnostics of a report, as sent (after redaction)."""

    __tablename__ = "report_details"

    report_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("reports.id", ondelete="CASCADE"), primary_key=True
    )
    console_logs: Mapped[list] = mapped_column(JSON, default=list)
    network_logs: Mapped[list] = mapped_column(JSON, default=list)
    user_actions: Mapped[list] = mapped_column(JSON, default=list)
    # A DOM replay (docs/replay.md): an upload like a screenshot, gzipped rrweb events. Kept
    # here, with the rest of what was captured: a wider reports row changed SQLite's plan for
    # a sort of the list (tests/test_reports_list.py).
    replay_key: Mapped[str | None] = mapped_column(String(255))
    # The reporter's language, a BCP 47 tag (docs/api.md §8.1): the widget's, else the request's
    # Accept-Language, else "en". Here beside the captured rest, so the list's row stays narrow.
    locale: Mapped[str] = mapped_column(String(35), default="en", server_default="en")

    report: Mapped[Report] = relationship(back_populates="detail")

    @property
    def replay_url(self) -> str | None:
        return f"/api/v1/replays/{self.replay_key}" if self.replay_key else None


class Screenshot(db.Model):
    """An uploaded image. `report_id` is set when a report takes it; until then it is an orphan,
    swept away after a day."""

    __tablename__ = "screenshots"
    __table_args__ = (Index("ix_screenshots_orphans", "report_id", "created_at"),)

    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    report_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("reports.id", ondelete="SET NULL")
    )
    content_type: Mapped[str] = mapped_column(String(32))
    size: Mapped[int]
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class ObjectDeletion(db.Model):
    """An object of the store to delete: written in the transaction that deleted its row, gone
    once the store confirmed (svc.services.reporting.screenshots.remove_files), so that a store
    that is down, or a crash between the commit and the delete, leaves nothing erased in it."""

    __tablename__ = "object_deletions"

    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class IdempotencyKey(db.Model):
    """A report creation's Idempotency-Key, so that a retried request finds its first answer."""

    __tablename__ = "idempotency_keys"

    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    # SHA-256 of the request body, so that the same key with another body is told apart.
    body_hash: Mapped[str] = mapped_column(String(64))
    report_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("reports.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class ReportSignature(db.Model):
    """A report's signature (svc.services.grouping.signatures): reports of one project with one
    signature are a group. A table of its own, written by the fan-out after the report: the
    ingest's row stays as narrow as it was, and the list's plans with it."""

    __tablename__ = "report_signatures"
    __table_args__ = (
        # A group (the list's `signature=`), and for similar reports
        # (svc.services.grouping.similar) a
        # project's newest and the newest sharing a part with a report.
        Index("ix_report_signatures_signature_project", "signature", "project_id", "created_at"),
        Index("ix_report_signatures_project_created", "project_id", "created_at"),
        Index("ix_report_signatures_error_project", "error_key", "project_id", "created_at"),
        Index("ix_report_signatures_request_project", "request_key", "project_id", "created_at"),
        # Rows made by older rules, oldest first (the sign-reports job makes them again).
        Index("ix_report_signatures_version_created", "version", "created_at"),
        # A report's signature without its row: an export joins one to every report, and the
        # rows (their terms) are far wider than the index (docs/performance.md).
        Index("ix_report_signatures_report_signature", "report_id", "signature"),
    )

    report_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("reports.id", ondelete="CASCADE"), primary_key=True
    )
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    signature: Mapped[str] = mapped_column(String(64))
    # The report's own, so that a project's newest are read here alone.
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # svc.services.grouping.signatures.Parts: keys of the first console error, the first failed
    # request and the page, each None when the report has none.
    error_key: Mapped[str | None] = mapped_column(String(16))
    request_key: Mapped[str | None] = mapped_column(String(16))
    page_key: Mapped[str | None] = mapped_column(String(16))
    # The stems of its words (signatures.terms_of), separated by spaces.
    terms: Mapped[str] = mapped_column(String(1000), default="")
    # What the signature is made from, in words (signatures.source_of): a group's name.
    label: Mapped[str] = mapped_column(String(400), default="")
    # Which rules made the row (signatures.VERSION); 1 for rows from before the version.
    version: Mapped[int] = mapped_column(SmallInteger, default=1, server_default="1")


class ReportDuplicate(db.Model):
    """A report marked a duplicate of another of its project, its primary (docs/api.md
    §8.11). A table of its own, as signatures: the reports row stays as narrow as the list's
    plans need. A primary is never itself a duplicate (svc.services.grouping.duplicates keeps it
    so);
    deleting the primary removes the rows, and its duplicates stay closed."""

    __tablename__ = "report_duplicates"

    report_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("reports.id", ondelete="CASCADE"), primary_key=True
    )
    primary_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("reports.id", ondelete="CASCADE"), index=True
    )
    # reporter_key() of the duplicate: the primary's distinct reporters, counted without
    # reading every duplicate's row.
    reporter_key: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    primary: Mapped[Report] = relationship(foreign_keys=[primary_id], viewonly=True)
