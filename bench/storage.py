"""The object store and the schedulers' lease (docs/storage.md, docs/deployment.md):

1. Ingest with a screenshot per report: clients each upload a PNG, then file a report that
   names it, against `make run` with its files in a folder and then in a bucket of a real S3
   server (SeaweedFS); the rate on S3 as a share of the rate on the folder (goal: >= 0.8).
2. Scheduler failover: two scheduler processes on one database; the active one is killed with
   SIGKILL, a new standby started, again; the time from each kill until the other holds the
   lease (median and maximum).

    .venv/bin/python -m bench.storage [--seconds 15] [--clients 16] [--kills 5] [--lease 15]
        [--store-apart]

--store-apart gives the S3 server a core of its own and svc (and the clients) the others, for
both runs: as in a deployment, where the store is another machine, what svc's ingest costs is
measured without the store's own work taking the same cores.
"""

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests
from sqlalchemy import create_engine, select

from bench.common import cpu_seconds, milliseconds, percentile, running_service, write_result
from bench.ingest import new_project
from harness.client import png_bytes
from harness.s3 import SeaweedServer
from harness.service import ROOT
from svc.models import SchedulerLease

GOAL_RATIO = 0.8
FLASK = str(Path(sys.executable).with_name("flask"))
SCREENSHOT = png_bytes(40, 30, padding=20_000)  # a PNG of about 20 KB


def ingest_with_screenshots(base_url: str, clients: int, seconds: float) -> dict:
    api_key = new_project(base_url)["apiKey"]
    image, stop = SCREENSHOT, time.monotonic() + seconds
    latencies, failures = [], []

    def client() -> None:
        session = requests.Session()
        headers = {"X-API-Key": api_key}
        while time.monotonic() < stop:
            started = time.monotonic()
            uploaded = session.post(
                f"{base_url}/api/v1/upload/screenshot",
                headers=headers,
                files={"file": ("shot.png", image, "image/png")},
            )
            if uploaded.status_code != 201:
                failures.append(uploaded.status_code)
                continue
            filed = session.post(
                f"{base_url}/api/v1/reports",
                headers=headers,
                json={
                    "title": "Checkout fails",
                    "description": "Steps...",
                    "severity": "low",
                    "category": "bug",
                    "screenshot_url": uploaded.json()["key"],
                },
            )
            if filed.status_code != 201:
                failures.append(filed.status_code)
                continue
            latencies.append(time.monotonic() - started)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {
        "reports_per_s": round(len(latencies) / seconds, 1),
        "p50_ms": round(milliseconds(percentile(latencies, 0.5)), 1) if latencies else None,
        "p99_ms": round(milliseconds(percentile(latencies, 0.99)), 1) if latencies else None,
        "failures": len(failures),
    }


def measure_ingest(workdir: Path, clients: int, seconds: float, apart: bool = False) -> dict:
    figures = {"store_apart": apart}
    seaweed = SeaweedServer(workdir / "seaweed").start()
    everywhere = os.sched_getaffinity(0)
    if apart:
        store_core = max(everywhere)
        for thread in Path(f"/proc/{seaweed.process.pid}/task").iterdir():
            os.sched_setaffinity(int(thread.name), {store_core})
        os.sched_setaffinity(0, everywhere - {store_core})  # svc's processes inherit it
    try:
        bucket = seaweed.bucket()
        for kind, settings in (
            ("folder", {}),
            ("s3", {"SVC_STORAGE_URL": f"s3://{bucket}/svc", **seaweed.environment}),
        ):
            with running_service(f"sqlite:///{workdir / kind}.sqlite3", workdir / kind,
                                 **settings) as base_url:  # fmt: skip
                before = cpu_seconds(seaweed.process.pid)
                figures[kind] = ingest_with_screenshots(base_url, clients, seconds)
                # The store shares this host's cores: what it took of them while svc ran.
                figures[kind]["store_cpu_share"] = round(
                    (cpu_seconds(seaweed.process.pid) - before) / seconds / os.cpu_count(), 2
                )
    finally:
        os.sched_setaffinity(0, everywhere)
        seaweed.stop()
    folder, s3 = figures["folder"]["reports_per_s"], figures["s3"]["reports_per_s"]
    figures["s3_to_folder"] = round(s3 / folder, 2) if folder else None
    return figures


def holder_pid(engine) -> int | None:
    with engine.connect() as connection:
        row = connection.execute(select(SchedulerLease.holder, SchedulerLease.expires_at)).first()
    if not row or not row.holder:
        return None
    return int(row.holder.split(":")[1])


def measure_failover(workdir: Path, kills: int, lease: float) -> dict:
    database = workdir / "failover.sqlite3"
    env = {
        **os.environ,
        "SVC_DATABASE_URL": f"sqlite:///{database}",
        "SVC_INSTANCE_PATH": str(workdir / "failover"),
        "SVC_SCHEDULER_LEASE_SECONDS": str(lease),
    }
    subprocess.run([FLASK, "--app", "svc", "db", "upgrade"], env=env, check=True,
                   capture_output=True, cwd=ROOT)  # fmt: skip
    engine = create_engine(f"sqlite:///{database}")

    def start() -> subprocess.Popen:
        return subprocess.Popen([FLASK, "--app", "svc", "scheduler"], env=env, cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)  # fmt: skip

    running = {process.pid: process for process in (start(), start())}
    takeovers = []
    try:
        for _ in range(kills):
            active = _wait_for(lambda: holder_pid(engine) in running and holder_pid(engine))
            running.pop(active).send_signal(signal.SIGKILL)
            killed_at = time.monotonic()
            _wait_for(lambda a=active: holder_pid(engine) not in (None, a), lease * 3)
            takeovers.append(time.monotonic() - killed_at)
            replacement = start()
            running[replacement.pid] = replacement
    finally:
        for process in running.values():
            process.send_signal(signal.SIGKILL)
            process.wait()
        engine.dispose()
    return {
        "lease_s": lease,
        "kills": kills,
        "takeover_median_s": round(statistics.median(takeovers), 2),
        "takeover_max_s": round(max(takeovers), 2),
    }


def _wait_for(condition, seconds: float = 60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.05)
    raise SystemExit("timed out waiting for a scheduler to hold the lease")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--lease", type=float, default=15)
    parser.add_argument("--store-apart", action="store_true")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="svc-bench-storage-") as workdir:
        result = {
            "ingest": measure_ingest(
                Path(workdir), arguments.clients, arguments.seconds, arguments.store_apart
            ),
            "failover": measure_failover(Path(workdir), arguments.kills, arguments.lease),
        }
    result["ingest"]["goal"] = GOAL_RATIO
    print(result)
    write_result("storage", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
