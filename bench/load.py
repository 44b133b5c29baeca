"""Load test: many concurrent clients creating reports against the service as `make run` starts
it, on loopback, for a bounded time, ended by SIGKILL to every process of the service (web
workers and scheduler, whatever they were doing); then the service is started again until the
fan-out has done every report's effects. The database is read directly: it must hold exactly
as many reports as got a 201, with tracking numbers 1..n and none missing or doubled, each
counted once in the overview and each notified once to the owner.

    .venv/bin/python -m bench.load --database sqlite --clients 200 --seconds 60
    .venv/bin/python -m bench.load --database postgresql

Prints a table and writes bench/results/load-<database>.json. Exits 1 when a request got a 5xx
or the counts disagree (a broken promise, not a slow run: times are only reported).
"""

import argparse
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import requests
from sqlalchemy import create_engine, text

from bench.common import fresh_database, percentile, service_settings, write_result
from harness.service import kill_service, set_up_project, start_service, wait_until

# A widget's report of ordinary size: a few logs, actions and some metadata (about 4 KB).
REPORT = {
    "title": "Checkout button does nothing on the payment step",
    "description": "Clicked pay, the spinner showed for a second, then nothing happened. " * 5,
    "severity": "high",
    "category": "bug",
    "console_logs": [
        {"level": "error", "message": f"TypeError: cart.total is undefined ({i})", "timestamp": i}
        for i in range(10)
    ],
    "network_logs": [
        {
            "method": "POST",
            "url": f"https://shop.example/api/cart/{i}",
            "status": 500,
            "duration": 120 + i,
            "timestamp": i,
        }
        for i in range(5)
    ],
    "user_actions": [
        {"type": "click", "target": f"button#step-{i}", "timestamp": i} for i in range(10)
    ],
    "metadata": {
        "url": "https://shop.example/checkout",
        "viewport": {"width": 1440, "height": 900},
    },
}


class Load:
    def __init__(self, base_url: str, api_key: str, clients: int):
        self.statuses: Counter = Counter()
        self.failures: Counter = Counter()
        self.latencies: list[float] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._client, args=(base_url, api_key), daemon=True)
            for _ in range(clients)
        ]

    def run(self, seconds: float) -> float:
        started = time.monotonic()
        for thread in self._threads:
            thread.start()
        time.sleep(seconds)
        self._stop.set()
        for thread in self._threads:
            thread.join()
        return time.monotonic() - started

    def _client(self, base_url: str, api_key: str) -> None:
        session = requests.Session()
        url = f"{base_url}/api/v1/reports"
        headers = {"X-API-Key": api_key}
        while not self._stop.is_set():
            sent = time.perf_counter()
            try:
                status = session.post(url, json=REPORT, headers=headers, timeout=120).status_code
            except requests.RequestException as error:
                with self._lock:
                    self.failures[type(error).__name__] += 1
                continue
            with self._lock:
                self.statuses[status] += 1
                self.latencies.append(time.perf_counter() - sent)


def stored_numbers(url: str, project_id: str) -> list[int]:
    engine = create_engine(url)
    with engine.connect() as connection:
        rows = connection.execute(
            text("SELECT number FROM reports WHERE project_id = :project"),
            {"project": project_id if url.startswith("postgresql") else uuid.UUID(project_id).hex},
        )
        numbers = sorted(row[0] for row in rows)
    engine.dispose()
    return numbers


def fanned_out(url: str, project_id: str) -> dict:
    """What the fan-out has done for the project: events waiting, reports counted,
    notifications (and for how many reports), reports in the search index."""
    project = project_id if url.startswith("postgresql") else uuid.UUID(project_id).hex
    engine = create_engine(url)
    with engine.connect() as connection:

        def one(sql):
            return connection.execute(text(sql), {"project": project}).scalar() or 0

        found = {
            "events_waiting": one("SELECT count(*) FROM report_events WHERE project_id = :project"),
            "counted": one("SELECT sum(count) FROM report_tallies WHERE project_id = :project"),
            "notifications": one("SELECT count(*) FROM notifications WHERE project_id = :project"),
            "notified_reports": one(
                "SELECT count(DISTINCT report_id) FROM notifications WHERE project_id = :project"
            ),
            # SQLite's search index (svc.models.search_index); PostgreSQL's is in the row.
            "indexed_for_search": one(
                "SELECT count(*) FROM report_search_rows WHERE project_id = :project"
                if url.startswith("sqlite")
                else "SELECT count(*) FROM reports WHERE project_id = :project"
            ),
        }
    engine.dispose()
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--workers", type=int, default=2)
    options = parser.parse_args()

    with tempfile.TemporaryDirectory() as workdir:
        workdir = Path(workdir)
        with fresh_database(options.database, workdir) as url:
            settings = service_settings(url, workdir, SVC_WORKERS=str(options.workers))
            base_url, service = start_service(settings)
            try:
                _, project = set_up_project(base_url, webhook_url=None)
                load = Load(base_url, project["apiKey"], options.clients)
                elapsed = load.run(options.seconds)
            finally:
                kill_service(service)  # SIGKILL, with the fan-out's backlog under way
            backlog = fanned_out(url, project["id"])["events_waiting"]
            _, service = start_service(settings)
            try:
                wait_until(
                    lambda: fanned_out(url, project["id"])["events_waiting"] == 0,
                    seconds=120,
                    message="the fan-out's backlog done",
                )
                time.sleep(2)  # anything done twice would show in the scheduler's next passes
                effects = fanned_out(url, project["id"])
            finally:
                kill_service(service)
            numbers = stored_numbers(url, project["id"])

    created = load.statuses[201]
    server_errors = sum(n for status, n in load.statuses.items() if status >= 500)
    result = {
        "database": options.database,
        "workers": options.workers,
        "clients": options.clients,
        "seconds": round(elapsed, 1),
        "requests": sum(load.statuses.values()) + sum(load.failures.values()),
        "statuses": {str(status): n for status, n in sorted(load.statuses.items())},
        "client_errors": dict(load.failures),
        "created_201": created,
        "rows_in_database": len(numbers),
        "server_errors_5xx": server_errors,
        "gapless": numbers == list(range(1, len(numbers) + 1)),
        "events_waiting_at_the_kill": backlog,
        **{name: value for name, value in effects.items() if name != "events_waiting"},
        "requests_per_second": round(created / elapsed, 1),
        "latency_p50_ms": round(percentile(load.latencies, 0.50) * 1000, 1),
        "latency_p99_ms": round(percentile(load.latencies, 0.99) * 1000, 1),
    }
    write_result(f"load-{options.database}", result)
    width = max(map(len, result))
    for name, value in result.items():
        print(f"{name:<{width}}  {value}")
    stored = len(numbers)
    kept = (
        server_errors == 0
        and not load.failures
        and created == stored
        and result["gapless"]
        and effects["counted"] == effects["notifications"] == effects["notified_reports"] == stored
        and effects["indexed_for_search"] == stored
    )
    print(
        "PASS" if kept else "FAIL: a report or an effect was lost or doubled, or a request failed"
    )
    return 0 if kept else 1


if __name__ == "__main__":
    raise SystemExit(main())
