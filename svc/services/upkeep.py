"""Database housekeeping that the scheduler runs: statistics every hour, SQLite's checkpoint
every second."""

import logging

from sqlalchemy import text

from svc.extensions import db

log = logging.getLogger(__name__)


def refresh_planner_statistics() -> None:
    """SQLite gathers no statistics by itself. Without them its planner cannot tell that walking
    the index on created_at for the first page beats fetching every report of the user's projects
    and sorting them, which at a million reports takes seconds. PostgreSQL's autovacuum analyses
    a table only once 50 rows and a tenth of it have changed, so the small tables (projects,
    members) of an install may never have statistics; without them its planner read page 50 of
    10,000 reports by scanning and sorting them all (27 ms instead of 6).

    On SQLite, a full ANALYZE: an approximate one (analysis_limit=1000) misjudged how selective a
    project is and kept the slow plan. It runs outside a transaction of ours, so that it reads
    without the write lock (about 0.3 s at 100,000 reports); if a write lands meanwhile it fails,
    and the next hour tries again. Web workers read new statistics when they open a connection:
    the pool recycles them hourly (svc.create_app)."""
    if db.engine.dialect.name == "postgresql":
        quote = db.engine.dialect.identifier_preparer.quote
        tables = ", ".join(quote(table.name) for table in db.metadata.sorted_tables)
        db.session.execute(text(f"ANALYZE {tables}"))
        db.session.commit()
        return
    try:
        _outside_our_transactions("ANALYZE")
    except db.engine.dialect.dbapi.OperationalError as error:
        log.warning("statistics not refreshed this time: %s", error)


def checkpoint_sqlite_log() -> tuple[int, int] | None:
    """Copy what SQLite's write-ahead log holds back into the database, without waiting for
    anyone: (frames in the log, frames copied), or None on PostgreSQL. Left to SQLite, the
    commit that finds the log over 1,000 pages does it, fsync included, while its request
    waits: with a report's 30 pages, one creation in 33 took 6 to 9 ms longer. Done here once a
    second, a page written by many commits is also copied once (docs/performance.md). PASSIVE
    leaves the frames a reader still needs for the next call."""
    if db.engine.dialect.name != "sqlite":
        return None
    _busy, log_frames, copied = _outside_our_transactions("PRAGMA wal_checkpoint(PASSIVE)")
    return log_frames, copied


def _outside_our_transactions(statement: str) -> tuple | None:
    """Run one SQLite statement on a pooled connection as it is, with no BEGIN of ours around
    it (the connection's driver opens none: svc.extensions); its first row."""
    connection = db.engine.raw_connection()
    try:
        return connection.cursor().execute(statement).fetchone()
    finally:
        connection.close()
