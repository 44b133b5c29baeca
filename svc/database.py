"""How the service uses its database, in one place: SQLite's pragmas, write transactions that
take the lock at BEGIN, transactions that only read, and the housekeeping the scheduler runs
(SQLite's checkpoint every second, the planner's statistics every hour).

`init_app` attaches the listeners to the app's own engine, never to SQLAlchemy's global classes:
another engine in the same process (a benchmark's, a test's) keeps SQLAlchemy's defaults. Why
each setting is what it is, with the measurements: docs/performance.md, "What made it fast".
"""

import logging
import sqlite3
import time

from flask import Flask
from sqlalchemy import event, func, select, text

from svc.extensions import db

log = logging.getLogger(__name__)

SQLITE_BUSY_TIMEOUT_MS = 10_000
SQLITE_MMAP_BYTES = 0x7FFF0000  # SQLITE_MAX_MMAP_SIZE, the most SQLite maps unless built otherwise
# The commit that finds the write-ahead log longer than this copies it back, fsync included;
# the scheduler checkpoints every second instead, off the requests' path, so this only bounds
# the log when no scheduler runs (SQLite's default is 1,000 pages).
SQLITE_WAL_AUTOCHECKPOINT_PAGES = 16_384
SQLITE_CACHE_KIB = 65_536
# Execution option of a connection whose transaction only reads (see `begin_read_only`).
READ_ONLY = "svc_read_only"
_QUERY_ONLY = "svc_query_only"  # whether the connection's PRAGMA query_only is on


def init_app(app: Flask) -> None:
    """Attach the SQLite rules to the app's engine (after db.init_app)."""
    with app.app_context():
        engine = db.engine
    if engine.dialect.name != "sqlite":
        return
    event.listen(engine, "connect", _on_connect)
    event.listen(engine, "begin", _begin_sqlite_immediately)
    event.listen(engine, "checkin", _writable_again)


def _on_connect(dbapi_connection, _record) -> None:
    configure_sqlite(dbapi_connection)


def configure_sqlite(connection: sqlite3.Connection) -> None:
    """The service's pragmas on a SQLite connection, which then issues no BEGIN of its own."""
    # We issue BEGIN ourselves (see below); pysqlite's own transaction handling would defer it.
    connection.isolation_level = None
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    # Statement journals in memory: a report's INSERT (then with its search triggers) journalled
    # past SQLite's 64 KiB spill, which made a temporary file to create, write and delete per
    # report (docs/performance.md); the fan-out's batches still would. Large sorts keep to
    # memory too; lists and exports read in index order.
    cursor.execute("PRAGMA temp_store=MEMORY")
    cursor.execute(f"PRAGMA wal_autocheckpoint={SQLITE_WAL_AUTOCHECKPOINT_PAGES}")
    # Reads of a large database through the memory map and page cache rather than read() calls
    # (address space, not memory: the pages are the kernel's file cache).
    cursor.execute(f"PRAGMA mmap_size={SQLITE_MMAP_BYTES}")
    cursor.execute(f"PRAGMA cache_size=-{SQLITE_CACHE_KIB}")
    cursor.close()


def _begin_sqlite_immediately(connection) -> None:
    # A deferred transaction that reads and then writes fails at once with "database is locked"
    # when another process wrote in between (the busy timeout does not apply to that upgrade).
    # Taking the write lock at BEGIN makes concurrent workers wait their turn instead. A
    # transaction that only reads needs no lock in WAL mode, and need not wait for one.
    read_only = connection.get_execution_options().get(READ_ONLY, False)
    _set_query_only(connection.info, connection.exec_driver_sql, read_only)
    connection.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")


def _set_query_only(info: dict, execute, query_only: bool) -> None:
    # A write in a read-only transaction would upgrade its lock, and fail at once with "database
    # is locked" whenever another worker wrote since it began: rare, so it would show up only in
    # production, under load. With query_only every such write fails, in the tests too.
    if info.get(_QUERY_ONLY, False) != query_only:
        execute(f"PRAGMA query_only={int(query_only)}")
        info[_QUERY_ONLY] = query_only


def _writable_again(dbapi_connection, record) -> None:
    # Whoever checks the connection out next (a migration, the scheduler's ANALYZE through a raw
    # connection) may write without a transaction of ours.
    if dbapi_connection is not None and record.info.get(_QUERY_ONLY):
        _set_query_only(record.info, dbapi_connection.execute, False)


def begin_read_only(session) -> None:
    """Begin the session's transaction as one that only reads, if none is open: on SQLite it
    then does not wait behind a writer, and cannot write. It must end before anything is
    written."""
    if not session.in_transaction():
        session.connection(execution_options={READ_ONLY: True})


def end_transaction(then_read_only: bool) -> None:
    """End the transaction a credential check began, before the view parses the body: on SQLite
    a transaction holds the write lock from its BEGIN, and kept through the view's validation
    and redaction it made concurrent requests queue one behind another. What was loaded stays
    usable: the session does not expire objects on commit. A view that only reads then reads in
    a transaction that takes no lock (a search through a million reports would otherwise hold
    SQLite's write lock, and every report filed, for its duration)."""
    if db.session().in_transaction():  # none after a credential this process remembered
        db.session.commit()
    if then_read_only:
        begin_read_only(db.session())


# --- the scheduler's housekeeping ------------------------------------------------------------


def newest_first(model, condition, page: int, page_size: int) -> tuple[list, int]:
    """A page of `model`'s rows where `condition` holds, newest first (created_at, then id for
    rows made in one instant), and how many there are: the logs of deliveries and calls."""
    total = db.session.scalar(select(func.count()).select_from(model).where(condition))
    items = db.session.scalars(
        select(model)
        .where(condition)
        .order_by(model.created_at.desc(), model.id)
        .limit(page_size)
        .offset((page - 1) * page_size)
    ).all()
    return list(items), total


def refresh_planner_statistics() -> None:
    """ANALYZE, hourly. SQLite gathers no statistics by itself, and PostgreSQL's autovacuum may
    never analyse tables as small as projects and members; without them both planners chose
    slow plans for the report list (docs/performance.md).

    On SQLite an ANALYZE holds the write lock while it reads: the whole database's held it
    2.2 to 6.9 s at 1,000,000 reports, and every filing waited (past the busy timeout on a
    cold start). So each index, and each table without one, is analysed by an ANALYZE of its
    own outside a transaction of ours, with a pause as long after it: the same statistics
    (tested), the lock held 0.18 s at most there (1.7 s with nothing in the OS's cache), and
    the writes go in between. If one fails, the next hour tries again. Web workers read new
    statistics when they open a connection: the pool recycles them hourly (svc.create_app)."""
    if db.engine.dialect.name == "postgresql":
        quote = db.engine.dialect.identifier_preparer.quote
        tables = ", ".join(quote(table.name) for table in db.metadata.sorted_tables)
        db.session.execute(text(f"ANALYZE {tables}"))
        db.session.commit()
        return
    try:
        for (name,) in _outside_our_transactions(_ANALYSED_ONE_BY_ONE, all_rows=True):
            started = time.monotonic()
            _outside_our_transactions(f'ANALYZE "{name}"')
            # A writer waiting in SQLite's busy handler looks again after about as long as it
            # has waited (100 ms at most): a next ANALYZE at once would take the lock back first.
            time.sleep(min(time.monotonic() - started, _MOST_PAUSE_SECONDS))
    except db.engine.dialect.dbapi.OperationalError as error:
        log.warning("statistics not refreshed this time: %s", error)


def has_planner_statistics() -> bool:
    """Whether the reports have planner statistics: not in a database the reports were just
    copied into, nor before the first refresh; on SQLite, for each of their indexes (one a
    migration added has none) but the partial ones, which have none while they hold nothing."""
    begin_read_only(db.session())
    if db.engine.dialect.name == "postgresql":
        query = (
            "SELECT coalesce(last_analyze, last_autoanalyze) IS NOT NULL"
            " FROM pg_stat_user_tables WHERE relid = 'reports'::regclass"
        )
    elif db.session.scalar(text("SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'")):
        query = (
            "SELECT NOT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'index'"
            " AND tbl_name = 'reports' AND coalesce(sql, '') NOT LIKE '% WHERE %'"
            " AND name NOT IN (SELECT idx FROM sqlite_stat1"
            " WHERE tbl = 'reports' AND idx IS NOT NULL))"
        )
    else:
        query = "SELECT 0"
    analysed = bool(db.session.scalar(text(query)))
    db.session.commit()
    return analysed


_MOST_PAUSE_SECONDS = 0.1
# What a plain ANALYZE analyses, one by one: every index, and every table without one (FTS5's
# virtual tables are analysed through their shadow tables, as ANALYZE does).
_ANALYSED_ONE_BY_ONE = """
    SELECT m.name FROM sqlite_master m
    WHERE m.type IN ('table', 'index') AND m.name NOT LIKE 'sqlite_stat%'
      AND coalesce(m.sql, '') NOT LIKE 'CREATE VIRTUAL TABLE%'
      AND (m.type = 'index'
           OR NOT EXISTS (SELECT 1 FROM sqlite_master i WHERE i.type = 'index'
                          AND i.tbl_name = m.name))
"""


def checkpoint_sqlite_log() -> tuple[int, int] | None:
    """Copy what SQLite's write-ahead log holds back into the database, without waiting for
    anyone, every second: (frames in the log, frames copied), or None on PostgreSQL. Left to
    SQLite, the commit that finds the log over its threshold does it, fsync included, while its
    request waits (docs/performance.md). PASSIVE leaves the frames a reader still needs for the
    next call."""
    if db.engine.dialect.name != "sqlite":
        return None
    _busy, log_frames, copied = _outside_our_transactions("PRAGMA wal_checkpoint(PASSIVE)")
    return log_frames, copied


def _outside_our_transactions(statement: str, all_rows: bool = False):
    """Run one SQLite statement on a pooled connection as it is, with no BEGIN of ours around
    it (the connection's driver opens none: `configure_sqlite`); its first row, or all."""
    connection = db.engine.raw_connection()
    try:
        cursor = connection.cursor().execute(statement)
        return cursor.fetchall() if all_rows else cursor.fetchone()
    finally:
        connection.close()
