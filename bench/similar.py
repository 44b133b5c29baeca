"""How well GET /reports/{id}/similar finds the same bug reported in other words: the labelled
set of bench/similar_set.py (twelve bugs reported five ways each, twenty bugs met once), filed
through the API in a shuffled order among `--noise` reports made of the set's own words in
random order (so that every word is common, as in a real project), signed by the fan-out. For
each report of a bug, its similar reports are asked for: a hit when a report of the same bug
is first, and when one is among the first three. The lookup's time is measured beside it.

    .venv/bin/python -m bench.similar [--database sqlite|postgresql ...] [--noise 300]

Writes bench/results/similar.json. Goals (issue 50): a true duplicate first for at least 80 %
of the grouped reports, among the first three for at least 90 %.
"""

import argparse
import random
import tempfile
import time
from pathlib import Path

from bench.common import (
    DATABASES,
    fresh_database,
    milliseconds,
    percentile,
    print_table,
    write_result,
)
from bench.similar_set import BUGS, ONCE
from harness.client import create_project, register
from svc import create_app
from svc.extensions import db, migrate
from svc.services.reporting import fanout

TOP1_GOAL, TOP3_GOAL = 0.8, 0.9


def body(report: tuple) -> dict:
    title, description, page, error, failed = report
    sent = {
        "title": title,
        "description": description,
        "severity": "medium",
        "category": "bug",
        "metadata": {"url": page, "userAgent": "Mozilla/5.0"},
        "console_logs": [{"level": "log", "message": "app started", "timestamp": 1}],
        "network_logs": [
            {"method": "GET", "url": page, "status": 200, "duration": 40, "timestamp": 2}
        ],
    }
    if error:
        message, stack = error
        sent["console_logs"].append(
            {
                "level": "error",
                "message": message,
                "timestamp": 3,
                **({"stack": stack} if stack else {}),
            }
        )
    if failed:
        method, url, status = failed
        sent["network_logs"].append(
            {"method": method, "url": url, "status": status, "duration": 90, "timestamp": 4}
        )
    return sent


def noise(rng: random.Random, count: int) -> list[tuple]:
    """Reports of no bug of the set, in the set's own words shuffled."""
    reports = [*ONCE, *(report for variants in BUGS.values() for report in variants)]
    words = [word for report in reports for word in f"{report[0]} {report[1]}".split()]
    pages = [report[2] for report in reports]
    return [
        (
            " ".join(rng.sample(words, 5)).capitalize(),
            " ".join(rng.sample(words, 14)),
            rng.choice(pages),
            None,
            None,
        )
        for _ in range(count)
    ]


def run(database: str, noise_count: int) -> dict:
    rng = random.Random(50)
    filed = [(bug, report) for bug, variants in BUGS.items() for report in variants]
    filed += [(None, report) for report in [*ONCE, *noise(rng, noise_count)]]
    rng.shuffle(filed)
    with tempfile.TemporaryDirectory() as workdir, fresh_database(database, Path(workdir)) as url:
        app = create_app(
            {
                "SVC_DATABASE_URL": url,
                "SVC_INSTANCE_PATH": str(Path(workdir) / "instance"),
                "SVC_SECRET_KEY": "bench",
                "SVC_RATE_LIMIT_INGEST": "off",
                "SVC_RATE_LIMIT_AUTH": "off",
            }
        )
        with app.app_context():
            migrate.upgrade()
        client = app.test_client()
        register(client)
        key = create_project(client)["apiKey"]
        bug_of = {}
        for bug, report in filed:
            answer = client.post("/api/v1/reports", json=body(report), headers={"X-API-Key": key})
            assert answer.status_code == 201, answer.get_json()
            bug_of[answer.get_json()["id"]] = bug
        with app.app_context():
            while fanout.run():
                pass
        first = three = 0
        times, misses = [], []
        grouped = [report_id for report_id, bug in bug_of.items() if bug is not None]
        for report_id in grouped:
            started = time.perf_counter()
            answer = client.get(f"/api/v1/reports/{report_id}/similar?limit=3")
            times.append(time.perf_counter() - started)
            found = [item["report"]["id"] for item in answer.get_json()["items"]]
            same = [bug_of[other] == bug_of[report_id] for other in found]
            first += bool(same[:1] and same[0])
            three += any(same)
            if not any(same):
                misses.append(bug_of[report_id])
        with app.app_context():
            db.engine.dispose()
    return {
        "database": database,
        "grouped_reports": len(grouped),
        "reports": len(bug_of),
        "top1": round(first / len(grouped), 3),
        "top3": round(three / len(grouped), 3),
        "lookup_p50_ms": milliseconds(percentile(times, 0.5)),
        "lookup_p95_ms": milliseconds(percentile(times, 0.95)),
        "missed_bugs": sorted(set(misses)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", choices=DATABASES, action="append")
    parser.add_argument("--noise", type=int, default=300)
    options = parser.parse_args()
    rows = [run(database, options.noise) for database in options.database or DATABASES]
    write_result("similar", rows)
    print_table(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
