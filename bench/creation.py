"""What one report's creation costs in-process: CPU of the service's own Python per request,
the WSGI application called directly with the ingest benchmark's 20 KB body and settings, on
SQLite and PostgreSQL.
No gunicorn, no wrk, no scheduler: the figure that carries to a host with more cores
(issue 53's goal: at most 2.0 ms). On SQLite the database's work is in the process and counted;
PostgreSQL's server is not (its round trips show in the wall time).

    .venv/bin/python -m bench.creation [--requests 300] [--rounds 8] [--against DIR]
    .venv/bin/python -m bench.creation --profile N [--database sqlite]

Each round files --requests reports; the figure is the best round's, the median beside it.
This host's speed drifts by a quarter within minutes, so two commits are compared by turns:
--against DIR runs the same rounds in another checkout (a worktree of the commit to compare
with, holding this file), one round there, one here, alternately, both warmed up first.
--profile N prints the N functions with the most cumulative time (cProfile, which inflates
the times about 1.8 times).
Writes bench/results/creation.json.
"""

import argparse
import cProfile
import io
import json
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from werkzeug.test import EnvironBuilder

from bench.common import DATABASES, fresh_database, print_table, write_result
from bench.ingest import report_body
from harness.client import create_project, csrf, register
from svc import create_app
from svc.extensions import db, migrate


class Filing:
    """A test client on a migrated database of its own, set up as bench.ingest sets up the
    service (every report counted against an ingest limit too high to refuse any; the project
    keeps requests' headers, redacted), and the project's widget headers; `round()` files
    reports and returns its figures."""

    def __init__(self, database: str, requests: int, warmup: int, stack: ExitStack):
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="svc-bench-")))
        url = stack.enter_context(fresh_database(database, workdir))
        self.app = create_app(
            {
                "SVC_DATABASE_URL": url,
                "SVC_INSTANCE_PATH": str(workdir / "instance"),
                "SVC_UPLOAD_DIR": str(workdir / "uploads"),
                "SVC_SECRET_KEY": "bench",
                "SVC_RATE_LIMIT_INGEST": "1000000/minute",
                "SVC_RATE_LIMIT_AUTH": "off",
            }
        )
        with self.app.app_context():
            migrate.upgrade()
        stack.callback(self._dispose)
        self.client = self.app.test_client()
        register(self.client)
        project = create_project(self.client)
        capture = {"settings": {"widget": {"capture_network_details": True}}}
        changed = self.client.patch(
            f"/api/v1/projects/{project['id']}", json=capture, headers=csrf(self.client)
        )
        assert changed.status_code == 200, changed.get_data(as_text=True)
        # The request is made once: encoding the body and building the environ are the client's
        # work, not the service's (a tenth of the figure when the test client made each).
        self.environ = EnvironBuilder(
            path="/api/v1/reports",
            method="POST",
            data=json.dumps(report_body()),
            content_type="application/json",
            headers={"X-API-Key": project["apiKey"]},
            environ_base={"REMOTE_ADDR": "127.0.0.1"},  # as gunicorn sets it
        ).get_environ()
        self.body, self.requests = self.environ["wsgi.input"].read(), requests
        self.file(warmup)

    def _dispose(self) -> None:
        with self.app.app_context():
            db.engine.dispose()

    def file(self, requests: int) -> None:
        statuses = []

        def start_response(status, headers, exc_info=None):
            statuses.append(status)

        for _ in range(requests):
            answer = self.app({**self.environ, "wsgi.input": io.BytesIO(self.body)}, start_response)
            text = b"".join(answer)
            answer.close()
            assert statuses.pop() == "201 CREATED", text

    def round(self) -> tuple[float, float]:
        """CPU and wall milliseconds per creation over one round."""
        started_cpu, started = time.process_time(), time.perf_counter()
        self.file(self.requests)
        cpu, wall = time.process_time() - started_cpu, time.perf_counter() - started
        return cpu * 1000 / self.requests, wall * 1000 / self.requests


def figures(database: str, checkout: str, rounds: list[tuple[float, float]]) -> dict:
    cpu, wall = [each[0] for each in rounds], [each[1] for each in rounds]
    return {
        "database": database,
        "checkout": checkout,
        "rounds": len(rounds),
        "cpu_ms_per_creation": round(min(cpu), 3),
        "cpu_ms_median_round": round(statistics.median(cpu), 3),
        "wall_ms_per_creation": round(min(wall), 3),
    }


def by_turns(options) -> int:
    """The other side of --against: a round each time a line comes on stdin, its figures back."""
    with ExitStack() as stack:
        filing = Filing(options.database[0], options.requests, options.warmup, stack)
        print("ready", flush=True)
        for _ in sys.stdin:
            print(json.dumps(filing.round()), flush=True)
    return 0


def measure(database: str, options) -> list[dict]:
    here = str(Path.cwd())
    with ExitStack() as stack:
        other = None
        if options.against:
            command = [sys.executable, "-m", "bench.creation", "--by-turns"]
            command += ["--database", database, "--requests", str(options.requests)]
            other = subprocess.Popen(
                [*command, "--warmup", str(options.warmup)],
                cwd=options.against,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            stack.callback(other.wait)
            stack.callback(other.stdin.close)
            assert other.stdout.readline().strip() == "ready"
        filing = Filing(database, options.requests, options.warmup, stack)
        ours, theirs = [], []
        for _ in range(options.rounds):
            if other:
                other.stdin.write("go\n")
                other.stdin.flush()
                theirs.append(tuple(json.loads(other.stdout.readline())))
            ours.append(filing.round())
        if options.profile:
            profiler = cProfile.Profile()
            profiler.runcall(filing.file, options.requests)
            print(f"\n{database}: the {options.profile} functions with the most cumulative time")
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(options.profile)
    rows = [figures(database, here, ours)]
    if other:
        rows.insert(0, figures(database, options.against, theirs))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--against", metavar="DIR")
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    parser.add_argument("--database", choices=DATABASES, action="append")
    parser.add_argument("--by-turns", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    options.database = options.database or list(DATABASES)
    if options.by_turns:
        return by_turns(options)
    rows = []
    for database in options.database:
        rows += measure(database, options)
        print_table(rows[-2:] if options.against else rows[-1:])
    write_result("creation", rows)
    print()
    print_table(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
