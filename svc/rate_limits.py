"""Rate-limit counters in the service's own database, as a storage of the `limits` library that
Flask-Limiter counts with: every gunicorn worker and every instance on the same database shares
them, with no extra server (docs/api.md §1.1). `SVC_RATE_LIMIT_STORAGE=redis://...` still
swaps in Redis.

Fixed windows only (Flask-Limiter's default strategy): one row per limit and client, counted up
by one upsert that starts a new window once the old one has expired. The scheduler deletes
expired rows hourly (`forget_expired`). `rate_limited` is the decorator views put a limit on
with (the API's and single sign-on's pages).

Counting is on the path of every limited request, so each thread keeps a connection of its own
for it and talks to the driver directly (docs/performance.md, "Rate limits and the
hardening"):
- PostgreSQL: the table `rate_limit_counters` of the service's database, one statement that
  commits by itself, without waiting for the disk;
- SQLite: the same table in a file of its own beside the database (`svc-rate-limits.sqlite3`
  beside `svc.sqlite3`), so that counting never queues for the database's write lock behind
  the reports being stored. A SQLite installation is one machine: the file is shared by every
  process of it.
"""

import contextlib
import functools
import hashlib
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

from flask import current_app, g
from limits.storage import Storage

from svc.database import SQLITE_BUSY_TIMEOUT_MS
from svc.extensions import db, limiter

SCHEME = "svc-database"


def key_part(value: str) -> str:
    """A value in a rate-limit key (an API key, an address, a status page's token): hashed, so
    that the counters' table holds none of them, and short."""
    return hashlib.sha256(value.encode()).hexdigest()[:24]


# The same statements on SQLite (3.35 and later) and PostgreSQL but for how each driver writes
# its parameters. SET sees the row as it was, so an expired window restarts at `amount`.
_COUNT = """
    INSERT INTO rate_limit_counters (bucket, hits, expires_at)
    VALUES ({bucket}, {amount}, {now} + {expiry})
    ON CONFLICT (bucket) DO UPDATE SET
        hits = CASE WHEN rate_limit_counters.expires_at <= {now} THEN {amount}
                    ELSE rate_limit_counters.hits + {amount} END,
        expires_at = CASE WHEN rate_limit_counters.expires_at <= {now} THEN {now} + {expiry}
                          ELSE rate_limit_counters.expires_at END
    RETURNING hits, expires_at
"""
_WINDOW = "SELECT hits, expires_at FROM rate_limit_counters WHERE bucket = {bucket}"
_FORGET = "DELETE FROM rate_limit_counters WHERE bucket = {bucket}"
_FORGET_ENDED = "DELETE FROM rate_limit_counters WHERE expires_at <= {now}"
_FORGET_ALL = "DELETE FROM rate_limit_counters"
# The migrations create the PostgreSQL table (svc.models.RateLimitCounter); this, the file's.
_SQLITE_TABLE = """
    CREATE TABLE IF NOT EXISTS rate_limit_counters (
        bucket TEXT PRIMARY KEY, hits INTEGER NOT NULL, expires_at REAL NOT NULL
    ) WITHOUT ROWID
"""
_PLACEHOLDER = {"sqlite": ":{}", "postgresql": "%({})s"}


class DatabaseStorage(Storage):
    """Each count is a transaction of its own, committed before the view runs: a refused
    request counts too."""

    STORAGE_SCHEME = [SCHEME]

    def __init__(self, uri: str | None = None, wrap_exceptions: bool = False, **options):
        super().__init__(uri, wrap_exceptions, **options)
        self._local = threading.local()

    @property
    def base_exceptions(self) -> tuple[type[Exception], ...]:
        return (sqlite3.Error, db.engine.dialect.dbapi.Error)

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        values = {"bucket": key, "amount": amount, "now": time.time(), "expiry": expiry}
        hits, expires_at = self._run(_COUNT, values, writes=True)[0]
        # Flask-Limiter reads the window back for the X-RateLimit headers of this response:
        # the counts this request just saw answer it without two more queries.
        _seen()[key] = (hits, expires_at)
        return hits

    def get(self, key: str) -> int:
        hits, expires_at = self._window(key)
        return hits if expires_at > time.time() else 0

    def get_expiry(self, key: str) -> float:
        _hits, expires_at = self._window(key)
        return expires_at if expires_at > time.time() else time.time()

    def _window(self, key: str) -> tuple[int, float]:
        if key not in _seen():
            rows = self._run(_WINDOW, {"bucket": key})
            return tuple(rows[0]) if rows else (0, 0.0)
        return _seen()[key]

    def check(self) -> bool:
        try:
            self._run("SELECT 1", {})
        except self.base_exceptions:
            return False
        return True

    def clear(self, key: str) -> None:
        self._run(_FORGET, {"bucket": key}, writes=True)
        _seen().pop(key, None)

    def reset(self) -> int:
        return self._run(_FORGET_ALL, {}, writes=True)

    def forget_expired(self) -> int:
        return self._run(_FORGET_ENDED, {"now": time.time()}, writes=True)

    def _run(self, statement: str, values: dict, writes: bool = False):
        """One statement in a transaction of its own: the rows it returns, or for a statement
        that returns none, how many rows it changed. A connection that died with its server
        is replaced once."""
        try:
            return self._run_once(statement, values, writes)
        except (sqlite3.OperationalError, db.engine.dialect.dbapi.OperationalError):
            self._forget_connection()
            return self._run_once(statement, values, writes)

    def _run_once(self, statement: str, values: dict, writes: bool):
        connection, dialect = self._connection()
        cursor = connection.cursor()
        try:
            if writes and dialect == "sqlite":
                cursor.execute("BEGIN IMMEDIATE")  # svc.database: no deferred write locks
            cursor.execute(_in_style(statement, dialect, tuple(values)), values)
            result = cursor.fetchall() if cursor.description else cursor.rowcount
            connection.commit()
            return result
        except BaseException:
            connection.rollback()
            raise
        finally:
            cursor.close()

    def _connection(self):
        """This thread's counting connection for the app's database, and its dialect."""
        engine = db.engine
        if getattr(self._local, "engine", None) is not engine:
            self._forget_connection()
            if engine.dialect.name == "sqlite":
                connection = _open_sqlite_file(engine.url.database)
            else:
                connection = _open_postgresql(engine)
            self._local.engine, self._local.connection = engine, connection
        return self._local.connection, engine.dialect.name

    def _forget_connection(self) -> None:
        connection = getattr(self._local, "connection", None)
        self._local.engine = self._local.connection = None
        if connection is not None:
            with contextlib.suppress(Exception):  # thrown away, dead or alive
                connection.close()


@functools.cache
def _in_style(statement: str, dialect: str, names: tuple[str, ...]) -> str:
    """The statement with its parameters written as the dialect's driver wants them."""
    placeholder = _PLACEHOLDER[dialect]
    return statement.format(**{name: placeholder.format(name) for name in names})


def counters_file(database: str) -> Path:
    """Where a SQLite installation keeps its counters: beside its database."""
    path = Path(database)
    return path.with_name(f"{path.stem}-rate-limits.sqlite3")


def _open_sqlite_file(database: str) -> sqlite3.Connection:
    connection = sqlite3.connect(counters_file(database), isolation_level=None)
    connection.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    connection.execute("PRAGMA journal_mode=WAL")
    # Counters are worth nothing after a crash of the machine: no waiting for the disk.
    connection.execute("PRAGMA synchronous=OFF")
    connection.execute(_SQLITE_TABLE)
    return connection


def _open_postgresql(engine):
    """A connection of the engine's own, taken out of its pool for good: each statement
    commits by itself, one round trip a count, and without waiting for the disk (a counter
    need not outlive a crash of the server)."""
    pooled = engine.raw_connection()
    connection = pooled.driver_connection
    pooled.detach()
    connection.autocommit = True
    cursor = connection.cursor()
    cursor.execute("SET synchronous_commit TO off")
    cursor.close()
    return connection


def forget_expired() -> int:
    """Delete the windows that have ended (the scheduler, hourly); how many."""
    storage = limiter.storage
    return storage.forget_expired() if isinstance(storage, DatabaseStorage) else 0


def forget_all() -> None:
    """Start every limit afresh (the tests, between apps on one database)."""
    storage = limiter.storage
    if isinstance(storage, DatabaseStorage):
        storage.reset()


def _seen() -> dict[str, tuple[int, float]]:
    """The windows this request counted in, by key."""
    if "rate_limit_windows" not in g:
        g.rate_limit_windows = {}
    return g.rate_limit_windows


def rate_limited(
    setting_name: str, key_func: Callable[[], str] | None = None, shared: bool = False
) -> Callable:
    """Apply the limit configured in `setting_name` (e.g. SVC_RATE_LIMIT_AUTH); `off` disables.
    By default the limit is per client address, and per endpoint; `shared`: one count for every
    endpoint that names the same setting (sending and resending invitations)."""

    def limit_value() -> str:
        # Flask-Limiter parses the limit before it asks exempt_when, and logs an error for "off";
        # any valid limit does here, since an exempt request is never counted against it.
        return "1/second" if disabled() else current_app.config[setting_name]

    def disabled() -> bool:
        return current_app.config[setting_name] == "off"

    def decorator(view):
        if shared:
            limit = limiter.shared_limit(
                limit_value, scope=setting_name, key_func=key_func, exempt_when=disabled
            )
        else:
            limit = limiter.limit(limit_value, key_func=key_func, exempt_when=disabled)
        limited = limit(view)
        limited.rate_limited = True
        return limited

    return decorator
