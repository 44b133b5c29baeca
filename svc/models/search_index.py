"""SQLite's search index of reports: `report_search_rows` and the FTS5 table `reports_fts`
(migrations 7c1e4a9d2b35, b4f81d2c6e07, 6c2e9f1a4b87, c8d2f4a6b1e3, e5a7c9b1d3f4), which no
model declares. New reports are indexed here by whoever writes them: the fan-out, a restore or
a copy into SQLite, the benchmarks' fills; triggers keep indexed reports in step with edits and
deletions. How a search reads it: svc.services.reporting.search."""

from sqlalchemy import Integer, String, column, func, insert, literal, select, table, text
from sqlalchemy.engine import Connection

from svc.models.base import UTCDateTime
from svc.models.events import REPORT_CREATED, ReportEvent
from svc.models.reports import Report

SEARCH_ROWS = table(
    "report_search_rows",
    column("rowid", Integer),
    column("report_id", Report.id.type),
    column("project_id"),
    column("title", String),
    column("description", String),
    # The newest filing time of this row's report and of every row before it (migration
    # c8d2f4a6b1e3): what a search reading the newest rows first knows of those it did not read.
    column("filed_by", UTCDateTime()),
    # The report's own filing time (migration e5a7c9b1d3f4): a search sorts its matches by it
    # without looking each one up among the reports.
    column("created_at", UTCDateTime()),
)
# The reports not indexed yet: those whose created event still waits (the fan-out indexes a
# report in the transaction that deletes its event).
NOT_INDEXED = select(ReportEvent.report_id).where(ReportEvent.kind == REPORT_CREATED)
_LAST_ROW = (
    select(SEARCH_ROWS.c.rowid, SEARCH_ROWS.c.filed_by)
    .order_by(SEARCH_ROWS.c.rowid.desc())
    .limit(1)
)
_INDEX_FTS = text(
    "INSERT INTO reports_fts (rowid, title, description)"
    " SELECT rowid, title, description FROM report_search_rows WHERE rowid > :last"
)


def index_new(executor, report_ids) -> None:
    """Index reports on SQLite (on PostgreSQL a report's search column is part of its row); a
    report indexed already, or deleted since, is left as it is. Two statements for any number
    of reports: FTS5 flushes its pending terms at every statement, so a report to a statement
    cost it twice the work (docs/performance.md). `executor`: a session or a connection."""
    ids = list(report_ids)
    if ids and _on_sqlite(executor):
        _index(executor, Report.id.in_(ids))


# FTS5's settings for a bulk load (index_all), and its defaults, set again after. FTS5 writes a
# segment each time its hash of pending terms fills and merges segments as they pile up: at
# 10,000,000 reports its defaults' merges did not finish in 71 minutes, and segments left
# unmerged cost every search a seek in each for each trigram (docs/performance.md, "SQLite's
# search index in a few segments"). A 64 MiB hash writes few, large segments and no merges;
# larger hashes were slower (their writes miss the CPU's caches).
BULK_SETTINGS = {"automerge": 0, "crisismerge": 1999, "hashsize": 64 * 1024 * 1024}
FTS5_DEFAULTS = {"automerge": 4, "crisismerge": 16, "hashsize": 1024 * 1024}
_SET_FTS = text("INSERT INTO reports_fts (reports_fts, rank) VALUES (:name, :value)")


def index_all(executor) -> None:
    """Every report not indexed yet, in the same two statements: for bulk loads, after their
    rows, with FTS5 set for a bulk load meanwhile (BULK_SETTINGS). FTS5 filled from empty in one
    statement cost less than half of what adding the same reports to a large index a batch at a
    time did, at 3,000,000 (docs/performance.md, "SQLite at ten million")."""
    if not _on_sqlite(executor):
        return
    configure(executor, BULK_SETTINGS)
    _index(executor, None)
    configure(executor, FTS5_DEFAULTS)


def configure(executor, settings: dict[str, int]) -> None:
    """FTS5 settings of reports_fts (kept in the database, so for every connection)."""
    for name, value in settings.items():
        executor.execute(_SET_FTS, {"name": name, "value": value})


def _on_sqlite(executor) -> bool:
    bind = executor if isinstance(executor, Connection) else executor.get_bind()
    return bind.dialect.name == "sqlite"


def _index(executor, which) -> None:
    last, filed_by = executor.execute(_LAST_ROW).first() or (0, None)
    rows = SEARCH_ROWS.c
    # In created_at's order, so each row's running maximum is its own time or the last row's.
    newest = func.max(Report.created_at, func.coalesce(literal(filed_by), Report.created_at))
    reports = select(
        Report.id, Report.project_id, Report.title, Report.description, newest, Report.created_at
    )
    if which is not None:
        reports = reports.where(which)
    executor.execute(
        insert(SEARCH_ROWS)
        .from_select(
            [
                rows.report_id,
                rows.project_id,
                rows.title,
                rows.description,
                rows.filed_by,
                rows.created_at,
            ],
            reports.order_by(Report.created_at),
        )
        .prefix_with("OR IGNORE")
    )
    # The rows just added: a new rowid is always past the largest (no AUTOINCREMENT needed).
    executor.execute(_INDEX_FTS, {"last": last})
