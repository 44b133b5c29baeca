"""Operations benchmark: how long backup, restore and copy-to take on a large installation.

Fills a SQLite installation with synthetic reports (bench.scale's bulk load: 10 projects,
60-character titles, 500-character descriptions), then runs the operator commands as an
operator does, `flask --app svc ...` in a subprocess, and times each:

    backup_sqlite       backup of the SQLite installation
    restore_sqlite      that archive into an empty SQLite installation
    copy_to_postgresql  copy-to into an empty PostgreSQL schema
    backup_postgresql   backup of the PostgreSQL installation copy-to made
    restore_postgresql  that archive into an empty PostgreSQL schema

    .venv/bin/python -m bench.operations                      # 100,000 reports
    .venv/bin/python -m bench.operations --reports 1000000
    .venv/bin/python -m bench.operations --database sqlite    # the SQLite steps alone

Writes bench/results/operations.json.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from bench.common import (
    DATABASES,
    fresh_database,
    print_table,
    running_service,
    service_settings,
    write_result,
)
from bench.scale import Corpus, bulk_load_engine, database_bytes, fill, set_up
from harness.service import ROOT

FLASK = str(Path(sys.executable).with_name("flask"))


def flask(settings: dict, *arguments: str) -> float:
    """Run an operator command; the seconds it took."""
    started = time.perf_counter()
    finished = subprocess.run(
        [FLASK, "--app", "svc", *arguments],
        cwd=ROOT,
        env={**os.environ, **settings},
        capture_output=True,
        text=True,
    )
    if finished.returncode:
        raise SystemExit(f"flask {' '.join(arguments)} failed:\n{finished.stderr[-3000:]}")
    return time.perf_counter() - started


def run(reports: int, databases: list[str]) -> dict:
    row = {"reports": reports}
    with tempfile.TemporaryDirectory() as folder:
        workdir = Path(folder)
        source = workdir / "source"
        source.mkdir()
        with fresh_database("sqlite", source) as url:
            with running_service(url, source) as base_url:
                projects, _ = set_up(base_url)
            engine = bulk_load_engine(url)
            fill(engine, [uuid.UUID(p) for p in projects], 0, reports, Corpus())
            row["database_mb"] = database_bytes(engine, url) / 2**20
            engine.dispose()
            settings = service_settings(url, source)
            archive = workdir / "sqlite.tar.gz"
            row["backup_sqlite_s"] = flask(settings, "backup", str(archive))
            row["archive_mb"] = _megabytes(archive)
            restored = workdir / "restored"
            restored.mkdir()
            with fresh_database("sqlite", restored) as empty:
                row["restore_sqlite_s"] = flask(
                    service_settings(empty, restored), "restore", str(archive)
                )
            if "postgresql" in databases:
                row.update(_on_postgresql(settings, workdir))
    return {name: round(value, 1) for name, value in row.items()}


def _on_postgresql(sqlite_settings: dict, workdir: Path) -> dict:
    """copy-to into PostgreSQL, a backup of what it made, that backup restored."""
    row = {}
    archive = workdir / "postgresql.tar.gz"
    with fresh_database("postgresql", workdir) as postgresql:
        row["copy_to_postgresql_s"] = flask(sqlite_settings, "copy-to", postgresql)
        moved = {**sqlite_settings, "SVC_DATABASE_URL": postgresql}
        row["backup_postgresql_s"] = flask(moved, "backup", str(archive))
    restored = workdir / "restored-postgresql"
    restored.mkdir()
    with fresh_database("postgresql", workdir) as empty:
        row["restore_postgresql_s"] = flask(
            service_settings(empty, restored), "restore", str(archive)
        )
    return row


def _megabytes(path: Path) -> float:
    return path.stat().st_size / 2**20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reports", type=int, default=100_000)
    parser.add_argument("--database", action="append", choices=DATABASES)
    arguments = parser.parse_args()
    row = run(arguments.reports, arguments.database or list(DATABASES))
    print_table([row])
    write_result("operations", [row])
    return 0


if __name__ == "__main__":
    sys.exit(main())
