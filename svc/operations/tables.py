"""Every table of an installation, read and written alike on SQLite and PostgreSQL: what backup,
restore and copy-to move, and the counts and checksums that show a copy whole."""

import hashlib
import json
import sqlite3
import uuid
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

from flask import current_app
from sqlalchemy import Engine, Table, create_engine, delete, func, insert, inspect, select, text

from svc import extensions, json_codec
from svc.extensions import db
from svc.models import JOBSTORE_TABLE, RateLimitCounter, Report, SchedulerLease, search_index

BATCH_ROWS = 1000  # x 17 columns at most (reports) stays under SQLite's 32,766 parameters
# Rows that hold nothing of the installation's own: a target may have them from a first start,
# and the copy replaces them.
TRANSIENT_TABLES = frozenset(
    {RateLimitCounter.__tablename__, SchedulerLease.__tablename__, JOBSTORE_TABLE}
)
_CHECKSUM_MODULUS = 2**256


class OperationFailed(Exception):
    """What an operator command says before it stops, without a traceback."""


def open_database(url: str) -> Engine:
    """An engine of our own for a database that is not the running app's."""
    return create_engine(url, json_serializer=json_codec.dumps)


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


def snapshot_sqlite(source: Path, target: Path) -> None:
    """A consistent copy of a live SQLite database, by SQLite's online backup: writers go on
    meanwhile; the copy is the database as it was when the backup began."""
    reader = sqlite3.connect(source)
    writer = sqlite3.connect(target)
    try:
        reader.backup(writer)
    finally:
        writer.close()
        reader.close()


def tables_to_move(connection) -> list[Table]:
    """The models' tables, parents before children, then the scheduler's job store where it
    exists (APScheduler creates it when the scheduler first starts)."""
    tables = list(db.metadata.sorted_tables)
    if inspect(connection).has_table(JOBSTORE_TABLE):
        tables.append(_jobstore_table())
    return tables


def _jobstore_table() -> Table:
    # APScheduler's own definition, so that the copy writes the types it reads back; imported
    # here: a web process loads this module and never runs the scheduler.
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore

    return SQLAlchemyJobStore(url="sqlite://", tablename=JOBSTORE_TABLE).jobs_t


def copy_rows(source, target, tables: list[Table]) -> None:
    """Every row of `tables` from one connection to the other, in batches. The target's
    transient rows go first; the job store is created where the target lacks it."""
    for table in tables:
        if table.name == JOBSTORE_TABLE:
            table.create(target, checkfirst=True)
        if table.name in TRANSIENT_TABLES:
            target.execute(delete(table))
        rows = source.execute(_streamed(table))
        for batch in rows.partitions():
            target.execute(insert(table).values([dict(row._mapping) for row in batch]))
        if table.name == Report.__tablename__:  # into SQLite's search index, empty till now
            search_index.index_all(target)


def _streamed(table: Table):
    # On the statement, not the connection: a connection's options would hold for every later
    # statement on it (on PostgreSQL, a server-side cursor for an UPDATE).
    return select(table).execution_options(yield_per=BATCH_ROWS)


def summary(connection, tables: list[Table]) -> dict[str, dict]:
    """{table: {"rows": n, "checksum": hex}}, alike on both databases for the same rows. The
    checksum is the sum of the rows' SHA-256, so that the databases' row orders do not matter."""
    return {table.name: _count_and_checksum(connection, table) for table in tables}


def _count_and_checksum(connection, table: Table) -> dict:
    rows, total = 0, 0
    for row in connection.execute(_streamed(table)):
        canonical = json.dumps([_canonical(value) for value in row], sort_keys=True, default=str)
        total += int.from_bytes(hashlib.sha256(canonical.encode()).digest(), "big")
        rows += 1
    return {"rows": rows, "checksum": f"{total % _CHECKSUM_MODULUS:064x}"}


def _canonical(value):
    if isinstance(value, uuid.UUID):
        return value.hex
    if isinstance(value, datetime):
        naive = value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value
        return naive.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bytes | memoryview):
        return bytes(value).hex()
    if isinstance(value, Decimal):
        return str(value)
    return value


def differences(expected: dict[str, dict], found: dict[str, dict]) -> list[str]:
    """The tables whose rows differ between two summaries, said for an operator."""
    return [
        f"{name}: {expected.get(name)} expected, {found.get(name)} found"
        for name in sorted(expected.keys() | found.keys())
        if expected.get(name) != found.get(name)
    ]


def revision_of(connection) -> str | None:
    """The database's migration revision; None for a database never migrated."""
    if not inspect(connection).has_table("alembic_version"):
        return None
    return connection.execute(text("SELECT version_num FROM alembic_version")).scalar()


def head_revision() -> str:
    from alembic.script import ScriptDirectory  # only where migrations run (svc.extensions)

    return ScriptDirectory.from_config(_alembic_config()).get_current_head()


def migrate(engine: Engine, revision: str = "head") -> None:
    """Run the migrations on a database other than the app's (migrations/env.py takes it from
    the config's attributes)."""
    from alembic import command

    config = _alembic_config()
    config.attributes["engine"] = engine
    command.upgrade(config, revision)


def upgrade_snapshot(snapshot: Path) -> str | None:
    """Migrate a SQLite snapshot to this code's revision; the revision it had, if older."""
    engine = open_database(sqlite_url(snapshot))
    try:
        with engine.connect() as connection:
            revision = revision_of(connection)
        if revision == head_revision():
            return None
        migrate(engine)
        return revision
    finally:
        engine.dispose()


def copy_database(snapshot: Path, target: Engine) -> dict[str, dict]:
    """Every row of a SQLite snapshot into an empty database, both migrated to this code's
    revision, in one transaction, then compared table by table: nothing is kept if they
    differ. Returns the tables' counts and checksums."""
    source_engine = open_database(sqlite_url(snapshot))
    try:
        migrate(target)
        with source_engine.connect() as source, target.connect() as copy:
            moved = tables_to_move(source)
            expected = summary(source, moved)
            with copy.begin():
                copy_rows(source, copy, moved)
                wrong = differences(expected, summary(copy, moved))
                if wrong:
                    raise OperationFailed("the copy differs: " + "; ".join(wrong))
        return expected
    finally:
        source_engine.dispose()


def _alembic_config():
    return extensions.migrate.bound(current_app).migrate.get_config()


def refuse_unless_empty(engine: Engine, what: str) -> None:
    """Stop unless the models' tables hold no rows but transient ones, naming those that do."""
    with engine.connect() as connection:
        existing = set(inspect(connection).get_table_names())
        held = {
            table.name: count
            for table in db.metadata.sorted_tables
            if table.name not in TRANSIENT_TABLES and table.name in existing
            if (count := connection.execute(select(func.count()).select_from(table)).scalar())
        }
    if held:
        listed = ", ".join(f"{name} ({count} rows)" for name, count in held.items())
        raise OperationFailed(f"{what} is not empty: {listed}")
