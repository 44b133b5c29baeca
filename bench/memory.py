"""Memory benchmark: the resident memory of a whole install as `make run` starts it (make, the
supervisor, gunicorn's master and 2 workers, the scheduler) on SQLite and on PostgreSQL: idle
after start, then under ingest (wrk with bench.ingest's 20 KB report, 8 connections), sampled
every few seconds.

Two sums over the processes: RSS (a page a worker shares with gunicorn's master counted in
each: the sum issue 73's goal is stated in) and PSS (a shared page divided among those sharing
it: what the machine gives the install). RSS and PSS count the pages of SQLite's database file
that its memory map brought in (the kernel's file cache, given back under pressure); the anon
sum (RssAnon) is what the processes hold themselves. Growth under load: the mean of the last
fifth of the samples against the mean of the second fifth (the first warms caches and pools).

    .venv/bin/python -m bench.memory [--seconds 300] [--database sqlite ...]

Writes bench/results/memory.json. Needs wrk, as bench.ingest.
"""

import argparse
import contextlib
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path

from bench.common import (
    DATABASES,
    fresh_database,
    megabytes,
    print_table,
    running_service,
    service_pids,
    write_result,
)
from bench.ingest import new_project, report_body, run_wrk

ROLES = (("gunicorn", "web"), ("scheduler", "scheduler"), ("svc.supervise", "supervisor"))


def sample(base_url: str) -> dict[str, float]:
    """RSS and PSS in MB summed over every process of the service, and RSS by role."""
    figures = {"rss_mb": 0.0, "pss_mb": 0.0, "anon_mb": 0.0}
    for pid in service_pids(base_url):
        with contextlib.suppress(OSError, KeyError):  # ended in between (a zombie has no sizes)
            command = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
            status = megabytes(Path(f"/proc/{pid}/status"))
            rss, anon = status["VmRSS"], status["RssAnon"]
            figures["rss_mb"] += rss
            figures["pss_mb"] += megabytes(Path(f"/proc/{pid}/smaps_rollup"))["Pss"]
            figures["anon_mb"] += anon
            role = next((name for word, name in ROLES if word in command), "make")
            figures[f"{role}_rss_mb"] = figures.get(f"{role}_rss_mb", 0.0) + rss
            figures[f"{role}_anon_mb"] = figures.get(f"{role}_anon_mb", 0.0) + anon
    return {name: round(value, 1) for name, value in figures.items()}


def measure(database: str, seconds: int, idle_seconds: int, every: float) -> dict:
    with tempfile.TemporaryDirectory() as workdir:
        workdir = Path(workdir)
        body_path = workdir / "report.json"
        body_path.write_text(json.dumps(report_body()))
        with (
            fresh_database(database, workdir) as url,
            running_service(url, workdir, SVC_RATE_LIMIT_INGEST="1000000/minute") as base_url,
        ):
            project = new_project(base_url, widget={"capture_network_details": True})
            time.sleep(idle_seconds)
            idle = sample(base_url)
            figures, samples = {}, []

            def load() -> None:
                url = f"{base_url}/api/v1/reports"
                try:
                    figures.update(run_wrk(url, body_path, project["apiKey"], 8, seconds))
                except Exception as error:  # said by the benchmark, not lost in the thread
                    figures["failed"] = error

            wrk = threading.Thread(target=load)
            wrk.start()
            while True:  # one sample at least, however short the load
                wrk.join(every)
                samples.append(sample(base_url))
                if not wrk.is_alive():
                    break
            if "failed" in figures:
                raise SystemExit(f"wrk failed: {figures['failed']}")
    fifth = max(len(samples) // 5, 1)

    def growth(name: str) -> float:
        early = statistics.mean(s[name] for s in samples[fifth : 2 * fifth] or samples[:1])
        return round(statistics.mean(s[name] for s in samples[-fifth:]) - early, 1)

    return {
        "database": database,
        **{f"idle_{name}": value for name, value in idle.items()},
        "load_seconds": seconds,
        "load_reports": figures.get("requests", 0),
        "load_peak_rss_mb": max(s["rss_mb"] for s in samples),
        "load_peak_pss_mb": max(s["pss_mb"] for s in samples),
        "load_peak_anon_mb": max(s["anon_mb"] for s in samples),
        "load_growth_rss_mb": growth("rss_mb"),
        "load_growth_anon_mb": growth("anon_mb"),
        **{f"load_end_{name}": value for name, value in samples[-1].items()},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=300, help="of ingest")
    parser.add_argument("--idle", type=int, default=20, help="seconds idle before sampling")
    parser.add_argument("--every", type=float, default=5.0, help="seconds between samples")
    parser.add_argument("--database", choices=DATABASES, action="append")
    options = parser.parse_args()
    rows = [
        measure(database, options.seconds, options.idle, options.every)
        for database in options.database or DATABASES
    ]
    write_result("memory", rows)
    print_table(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
