"""Flask extensions, created unbound and bound to the app in `create_app`.

Imports nothing of svc.
"""

import sqlite3

from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_migrate import Migrate
from flask_sqlalchemy import SQLAlchemy
from sqlalchemy import MetaData, event
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase
from sqlalchemy.pool import Pool


class Base(DeclarativeBase):
    # Named constraints: Alembic's batch mode (SQLite) can only alter constraints that have names.
    metadata = MetaData(
        naming_convention={
            "ix": "ix_%(column_0_label)s",
            "uq": "uq_%(table_name)s_%(column_0_name)s",
            "ck": "ck_%(table_name)s_%(constraint_name)s",
            "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
            "pk": "pk_%(table_name)s",
        }
    )


# Objects stay loaded after a commit: a response that reads a report just created would otherwise
# select its whole row again, and the guard's commit (svc.auth.guard) would unload the caller.
db = SQLAlchemy(model_class=Base, session_options={"expire_on_commit": False})
# render_as_batch: SQLite cannot ALTER most things; batch mode rebuilds the table instead.
migrate = Migrate(render_as_batch=True, compare_type=True)
limiter = Limiter(key_func=get_remote_address, headers_enabled=True)

SQLITE_BUSY_TIMEOUT_MS = 10_000
SQLITE_MMAP_BYTES = 0x7FFF0000  # SQLITE_MAX_MMAP_SIZE, the most SQLite maps unless built otherwise
# SQLite copies its write-ahead log back into the database (a checkpoint, with an fsync) in the
# commit that finds the log longer than this. The scheduler checkpoints every second instead
# (svc.services.upkeep.checkpoint_sqlite_log), off the requests' path; this larger threshold
# (SQLite's default is 1,000 pages) bounds the log when no scheduler runs, or when a second
# brings more than this: at about 400 reports a second of the benchmark's size.
SQLITE_WAL_AUTOCHECKPOINT_PAGES = 16_384
# Execution option of a connection whose transaction only reads (see `begin_read_only`).
READ_ONLY = "svc_read_only"
_QUERY_ONLY = "svc_query_only"  # whether the connection's PRAGMA query_only is on


@event.listens_for(Engine, "connect")
def configure_sqlite(dbapi_connection, _record=None):
    if not isinstance(dbapi_connection, sqlite3.Connection):
        return
    # We issue BEGIN ourselves (see below); pysqlite's own transaction handling would defer it.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA wal_autocheckpoint={SQLITE_WAL_AUTOCHECKPOINT_PAGES}")
    # Reads of a large database through the memory map and page cache instead of read() calls:
    # as much mapped as SQLite allows by default (SQLITE_MAX_MMAP_SIZE, 2 GiB; address space, not
    # memory: the pages are the kernel's file cache), 64 MiB of cache per connection (negative
    # cache_size means KiB). A one-word search at 1,000,000 reports read 14,000 rows in 128 ms
    # with 256 MiB mapped, in 88 ms with 2 GiB.
    cursor.execute(f"PRAGMA mmap_size={SQLITE_MMAP_BYTES}")
    cursor.execute("PRAGMA cache_size=-65536")
    cursor.close()


@event.listens_for(Engine, "begin")
def _begin_sqlite_immediately(connection):
    # A deferred transaction that reads and then writes fails at once with "database is locked"
    # when another process wrote in between (the busy timeout does not apply to that upgrade).
    # Taking the write lock at BEGIN makes concurrent workers wait their turn instead. A
    # transaction that only reads needs no lock in WAL mode, and need not wait for one.
    if connection.dialect.name == "sqlite":
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


@event.listens_for(Pool, "checkin")
def _writable_again(dbapi_connection, record):
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
