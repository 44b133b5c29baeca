"""`flask --app svc copy-to URL`: a SQLite installation, every table, into an empty PostgreSQL
database (docs/operations.md, "Moving to PostgreSQL")."""

import tempfile
from pathlib import Path

from flask import current_app
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError

from svc.extensions import db
from svc.operations import tables
from svc.operations.tables import OperationFailed


def copy_to(url: str) -> dict[str, dict]:
    """Copy this SQLite installation into the PostgreSQL database at `url` (migrated here if it
    is not yet); returns the copied tables' counts and checksums, equal on both sides."""
    if db.engine.dialect.name != "sqlite":
        raise OperationFailed("copy-to moves a SQLite installation; this one is not on SQLite")
    target = _postgresql(url)
    try:
        tables.refuse_unless_empty(target, "the target database")
        with tempfile.TemporaryDirectory(
            prefix=".svc-copy-", dir=current_app.instance_path
        ) as staging:
            snapshot = Path(staging) / "snapshot.sqlite3"
            tables.snapshot_sqlite(Path(db.engine.url.database), snapshot)
            tables.upgrade_snapshot(snapshot)
            return tables.copy_database(snapshot, target)
    finally:
        target.dispose()


def _postgresql(url: str):
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise OperationFailed(f"not a database URL: {url}") from None
    # SQLite too, for a copy into another file; PostgreSQL is what it is for.
    if parsed.get_backend_name() not in ("postgresql", "sqlite"):
        raise OperationFailed("the target must be a PostgreSQL URL (postgresql+psycopg://...)")
    if parsed.get_backend_name() == "sqlite" and _same_file(parsed.database):
        raise OperationFailed("the target is this installation's own database")
    engine = tables.open_database(url)
    try:
        engine.connect().close()
    except DBAPIError as exc:
        engine.dispose()
        raise OperationFailed(
            f"cannot connect to {parsed.render_as_string()}: {exc.orig}"
        ) from None
    return engine


def _same_file(database: str | None) -> bool:
    """Whether a SQLite target is this installation's own file."""
    own = db.engine.url.database
    return bool(database and own) and Path(database).resolve() == Path(own).resolve()
