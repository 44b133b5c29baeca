"""What SQLite's own work costs when a report is stored: the floor under the ingest rate.

The write transaction of one real creation (the ingest benchmark's 20 KB body, filed in-process
through the Flask test client) is captured through SQLAlchemy's events, then replayed many times
through Python's sqlite3 module alone, with the service's pragmas and a checkpoint every second
as the scheduler runs it: the same statements, a new report id, tracking number and timestamps
each time. The CPU time per report counts the checkpoints' too. Replayed four ways: the schema
as it is, without the search triggers (FTS5 and the search rows; since the fan-out indexes new
reports, a filing fires none of them: the two differ by the host's noise alone), without the
list indexes on reports, and without either, to tell what each costs.

    .venv/bin/python -m bench.store [--reports 3000]

Writes bench/results/store.json.
"""

import argparse
import re
import sqlite3
import statistics
import tempfile
import threading
import time
import uuid
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path

from flask import Flask
from sqlalchemy import event

from bench.common import milliseconds, percentile, print_table, write_result
from bench.ingest import report_body
from harness.client import create_project, register, sqlite_app
from svc import database
from svc.database import configure_sqlite
from svc.extensions import db, migrate
from svc.scheduler import CHECKPOINT_SECONDS

VARIANTS = ("as built", "no search triggers", "no list indexes", "neither")
_INSERT_COLUMNS = re.compile(r"INSERT INTO \w+ \(([^)]*)\)")


def captured_creation(workdir: Path) -> tuple[Flask, Path, list[tuple[str, tuple]]]:
    """The app on a migrated SQLite database holding one project, the database, and the
    statements of the write transaction in which the service stored a report there."""
    app = sqlite_app(workdir)
    with app.app_context():
        migrate.upgrade()
        engine = db.engine
    client = app.test_client()
    register(client)
    headers = {"X-API-Key": create_project(client)["apiKey"]}
    statements = []

    def record(connection, cursor, statement, parameters, context, executemany):
        statements.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", record)
    response = client.post("/api/v1/reports", json=report_body(), headers=headers)
    event.remove(engine, "before_cursor_execute", record)
    assert response.status_code == 201, response.get_data(as_text=True)
    with app.app_context():
        db.engine.dispose()
    begin = next(i for i, (statement, _) in enumerate(statements) if statement == "BEGIN IMMEDIATE")
    return app, workdir / "svc.sqlite3", statements[begin + 1 :]


def connect(database: Path) -> sqlite3.Connection:
    """A connection with the service's pragmas, which issues no BEGIN of its own."""
    connection = sqlite3.connect(database, check_same_thread=False)
    configure_sqlite(connection)
    return connection


def strip(connection: sqlite3.Connection, variant: str) -> None:
    """Drop what the variant goes without."""
    if variant in ("no search triggers", "neither"):
        query = "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'reports'"
        for (name,) in connection.execute(query).fetchall():
            connection.execute(f'DROP TRIGGER "{name}"')
    if variant in ("no list indexes", "neither"):
        query = (
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'reports'"
            " AND sql IS NOT NULL"  # the primary key's and unique constraints' stay
        )
        for (name,) in connection.execute(query).fetchall():
            connection.execute(f'DROP INDEX "{name}"')


def _columns(statement: str) -> list[str] | None:
    """The columns an INSERT names, in the order of its parameters."""
    columns = _INSERT_COLUMNS.match(statement)
    return [name.strip() for name in columns.group(1).split(",")] if columns else None


def replay(connection, statements, reports: int) -> dict:
    """Each report in its own BEGIN IMMEDIATE ... COMMIT, as the service writes it; a new
    report id, tracking number and timestamps each time. The statements are read once, before
    the timing, so that the loop spends its Python on the calls alone."""
    steps = [
        (statement, parameters, _columns(statement), statement.startswith("UPDATE projects"))
        for statement, parameters in statements
    ]
    timings = []
    started_cpu = time.process_time()
    for _ in range(reports):
        # As the service stores them: UTC without an offset, the id as 32 hex digits.
        now = datetime.now(UTC).replace(tzinfo=None).isoformat(" ")
        report_id = uuid.uuid4().hex
        values = {"created_at": now, "updated_at": now, "id": report_id, "report_id": report_id}
        started = time.perf_counter()
        connection.execute("BEGIN IMMEDIATE")
        for statement, parameters, names, numbers in steps:
            if names:
                parameters = tuple(
                    values.get(name, value) for name, value in zip(names, parameters, strict=True)
                )
            row = connection.execute(statement, parameters).fetchone()
            if numbers:
                values["number"] = row[0]
        connection.execute("COMMIT")
        timings.append(time.perf_counter() - started)
    cpu_ms = (time.process_time() - started_cpu) * 1000 / reports
    return {
        "cpu_ms_per_report": round(cpu_ms, 3),
        "mean_ms": milliseconds(statistics.mean(timings)),
        "p50_ms": milliseconds(percentile(timings, 0.50)),
        "p99_ms": milliseconds(percentile(timings, 0.99)),
    }


@contextmanager
def checkpoints_every_second(app: Flask):
    """The scheduler's checkpoint job, run as often, in a thread of its own."""
    stop = threading.Event()

    def run():
        with app.app_context():
            while not stop.wait(CHECKPOINT_SECONDS):
                database.checkpoint_sqlite_log()
            db.engine.dispose()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def run(reports: int) -> list[dict]:
    rows = []
    for variant in VARIANTS:
        with tempfile.TemporaryDirectory(prefix="svc-bench-store-") as workdir:
            app, database, statements = captured_creation(Path(workdir))
            with closing(connect(database)) as connection, checkpoints_every_second(app):
                strip(connection, variant)
                figures = replay(connection, statements, reports)
        rows.append({"schema": variant, "reports": reports, **figures})
        print_table(rows[-1:])
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reports", type=int, default=3000)
    options = parser.parse_args()
    rows = run(options.reports)
    write_result("store", rows)
    print()
    print_table(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
