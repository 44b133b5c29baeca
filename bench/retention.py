"""Retention while reports arrive (docs/api.md §7.4): ten projects with 100,000 reports, 60 % of
them resolved and a year old; the scheduler of `make run` deletes them in its pass at start
while wrk files reports into an eleventh project. Ingest's p99 during the pass against its p99
without one (goal: at most twice), and a check that exactly the eligible reports went.

    .venv/bin/python -m bench.retention [--reports 100000] [--seconds 15] [--database sqlite]
"""

import argparse
import json
import tempfile
import time
import uuid
from pathlib import Path

import requests
from sqlalchemy import text

from bench.common import DATABASES, fresh_database, running_service, write_result
from bench.ingest import report_body, run_wrk
from bench.scale import Corpus, bulk_load_engine, fill, set_up
from svc.services.reporting import stats

GOAL_RATIO = 2.0
RETENTION = {"days": 365, "statuses": ["resolved", "closed"]}
CONNECTIONS = 16
NOT_ARRIVALS = "project_id IN (SELECT id FROM projects WHERE name != 'Arrivals')"


def _count(engine, where: str) -> int:
    with engine.connect() as connection:
        return connection.execute(text(f"SELECT count(*) FROM reports WHERE {where}")).scalar()


def run(database: str, reports: int, seconds: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="svc-bench-retention-") as workdir:
        workdir = Path(workdir)
        body = workdir / "report.json"
        body.write_text(json.dumps(report_body()))
        with fresh_database(database, workdir) as url:
            with running_service(url, workdir) as base_url:
                projects, token = set_up(base_url)
                ingest = requests.post(
                    f"{base_url}/api/v1/projects",
                    json={"name": "Arrivals"},
                    headers={"Authorization": f"Bearer {token}"},
                ).json()
            engine = bulk_load_engine(url)
            fill(engine, [uuid.UUID(p) for p in projects], 0, reports, Corpus())
            with engine.begin() as connection:
                # 60 % resolved a year and more ago (eligible), the rest new and recent.
                connection.execute(
                    text(
                        "UPDATE reports SET"
                        " status = CASE WHEN number % 10 < 6 THEN 'resolved' ELSE 'new' END,"
                        " updated_at = CASE WHEN number % 10 < 6"
                        "   THEN :old ELSE :recent END,"
                        " resolved_at = CASE WHEN number % 10 < 6 THEN :old ELSE NULL END"
                    ),
                    {"old": "2024-01-01 00:00:00", "recent": "2026-11-01 00:00:00"},
                )
                stats.recount_all(connection)
            eligible = _count(engine, "status = 'resolved'")
            kept = _count(engine, "status = 'new'")

            with running_service(url, workdir) as base_url:
                without = run_wrk(f"{base_url}/api/v1/reports", body, ingest["apiKey"],
                                  CONNECTIONS, seconds)  # fmt: skip
            with engine.begin() as connection:
                connection.execute(
                    text("UPDATE projects SET retention = :retention WHERE name != 'Arrivals'"),
                    {"retention": json.dumps(RETENTION)},
                )
            started = time.monotonic()
            with running_service(url, workdir) as base_url:  # its scheduler's pass runs at start
                during = run_wrk(f"{base_url}/api/v1/reports", body, ingest["apiKey"],
                                 CONNECTIONS, seconds)  # fmt: skip
                left_after_wrk = _count(engine, "status = 'resolved'")
                while _count(engine, "status = 'resolved'"):
                    time.sleep(0.5)
                retention_s = time.monotonic() - started
            remaining_kept = _count(engine, f"status = 'new' AND {NOT_ARRIVALS}")
            engine.dispose()
    return {
        "database": database,
        "reports": reports,
        "eligible": eligible,
        "kept": kept,
        "kept_after": remaining_kept,
        "retention_s": round(retention_s, 1),
        "pass_still_running_after_wrk": left_after_wrk > 0,
        "p99_without_ms": without["p99_ms"],
        "p99_during_ms": during["p99_ms"],
        "requests_per_s_without": without["requests_per_s"],
        "requests_per_s_during": during["requests_per_s"],
        # None when wrk saw no answer without retention (a smoke pass's second, on a busy host):
        # then there is nothing to compare, not a ratio of infinity.
        "p99_ratio": round(during["p99_ms"] / without["p99_ms"], 2) if without["p99_ms"] else None,
        "goal": GOAL_RATIO,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reports", type=int, default=100_000)
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--database", choices=DATABASES, action="append")
    options = parser.parse_args()
    rows = [run(database, options.reports, options.seconds) for database in
            options.database or ["sqlite"]]  # fmt: skip
    for row in rows:
        print(row)
        if row["kept_after"] != row["kept"]:
            raise SystemExit("retention deleted reports it should have kept")
    write_result("retention", rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
