"""Databases of their own for the tests and the benchmarks."""

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import quote

from sqlalchemy import create_engine, text

# One key for every process that prepares the shared database at once (parallel test workers).
_PREPARING = 0x5C7E57


@contextmanager
def postgresql_schema(base_url: str, prefix: str, drop: bool = True) -> Iterator[str]:
    """A new schema in the PostgreSQL database at base_url, dropped afterwards unless `drop` is
    false (a benchmark's database kept for another run); yields the URL whose connections work
    in it.

    The search index's extensions (pg_trgm, btree_gin) are installed once per database, in
    `public`, under a lock: an extension lives in one schema, and dropping that schema with
    CASCADE would drop it, and the search indexes of every other schema (another test
    worker's) with it; two workers' migrations creating one at once would collide. The URL
    names the schema as the connections' application_name, so that the drop can end whatever
    connection a test left open in it."""
    schema = f"{prefix}_{uuid.uuid4().hex[:8]}"
    engine = create_engine(base_url)
    with engine.begin() as connection:
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PREPARING})
        for extension in ("pg_trgm", "btree_gin"):
            connection.execute(text(f"CREATE EXTENSION IF NOT EXISTS {extension} SCHEMA public"))
            connection.execute(text(f"ALTER EXTENSION {extension} SET SCHEMA public"))
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    separator = "&" if "?" in base_url else "?"
    options = quote(f"-csearch_path={schema}")
    try:
        yield f"{base_url}{separator}options={options}&application_name={schema}"
    finally:
        if drop:
            with engine.begin() as connection:
                connection.execute(
                    text(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                        " WHERE application_name = :schema AND pid <> pg_backend_pid()"
                    ),
                    {"schema": schema},
                )
                connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        engine.dispose()
