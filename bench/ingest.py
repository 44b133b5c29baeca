"""Ingest benchmark: POST /api/v1/reports with a realistic 20 KB report, 32 connections for 20 s
(wrk), against the service as `make run` starts it (2 workers) on SQLite and on PostgreSQL, and
in the same run against a bare Flask app on the same gunicorn settings that only parses the body
(bench/bare.py): the yardstick for the ratio svc / bare.

    .venv/bin/python -m bench.ingest [--seconds 20] [--connections 32]

Writes bench/results/ingest.json. Needs wrk (`apt-get install wrk`; `make bench` installs it).
"""

import argparse
import contextlib
import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

from sqlalchemy import create_engine, text

from bench.common import (
    DATABASES,
    fresh_database,
    print_table,
    running_service,
    service_cpu_seconds,
    write_result,
)
from harness.service import ROOT, answers_health, sign_up

LUA = Path(__file__).resolve().parent / "ingest.lua"


def report_body() -> dict:
    """What a widget sends for a bug on a busy page: about 20 KB."""
    return {
        "title": "Checkout button does nothing on the payment step",
        "description": "Clicked pay, the spinner showed for a second, then nothing happened. "
        "Tried twice, same result; the cart still shows the items.",
        "severity": "high",
        "category": "bug",
        "reporter_identifier": "customer-4711@example.com",
        "console_logs": [
            {
                "level": ("log", "info", "warn", "error")[i % 4],
                "message": f"[checkout] step {i}: TypeError: cannot read properties of undefined "
                f"at CartSummary.render (cart.js:{100 + i}:17)",
                "timestamp": 1_763_800_000_000 + i * 250,
            }
            for i in range(50)
        ],
        "network_logs": [
            {
                "method": ("GET", "POST")[i % 2],
                "url": f"https://shop.example/api/v2/cart/items/{9000 + i}?include=prices,stock",
                "status": (200, 200, 304, 500)[i % 4],
                "duration": 40 + i * 3,
                "timestamp": 1_763_800_000_000 + i * 400,
                "requestHeaders": {"accept": "application/json", "x-request-id": f"req-{i:06d}"},
            }
            for i in range(30)
        ],
        "user_actions": [
            {
                "type": ("click", "input", "navigate", "scroll")[i % 4],
                "target": f"main > section.checkout > form#payment > button.step-{i}",
                "timestamp": 1_763_800_000_000 + i * 900,
            }
            for i in range(40)
        ],
        "metadata": {
            "url": "https://shop.example/checkout/payment?step=3",
            "userAgent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
            "Chrome/131.0 Safari/537.36",
            "viewport": {"width": 1440, "height": 900},
            "locale": "en-GB",
            "release": "shop-web@4.18.2",
            "featureFlags": {f"flag_{n}": n % 2 == 0 for n in range(20)},
        },
    }


def run_wrk(url: str, body_path: Path, api_key: str, connections: int, seconds: int) -> dict:
    command = ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s"]
    command += ["-s", str(LUA), url, "--", str(body_path), api_key]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    figures = json.loads(output.strip().splitlines()[-1])
    figures["requests_per_s"] = round(figures["requests"] / figures["seconds"], 1)
    return figures


@contextlib.contextmanager
def bare_flask(workdir: Path):
    """bench/bare.py under gunicorn with svc's gunicorn settings and 2 workers, on a port
    gunicorn binds itself (port 0) and names in its log."""
    env = {**os.environ, "SVC_BIND": "127.0.0.1:0", "SVC_WORKERS": "2"}
    command = [str(ROOT / ".venv/bin/gunicorn"), "--config", "python:svc.gunicorn_conf"]
    log_path = workdir / "bare.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [*command, "bench.bare:app"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    try:
        deadline, base_url = time.monotonic() + 60, None
        while base_url is None or not answers_health(base_url):
            said = log_path.read_text(errors="replace")
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError(f"bench/bare.py under gunicorn did not come up:\n{said}")
            listening = re.search(r"Listening at: (http://\S+)", said)
            base_url = listening and listening.group(1)
            time.sleep(0.1)
        yield base_url
    finally:
        process.terminate()
        process.wait(timeout=30)


def new_project(base_url: str, **settings) -> dict:
    browser, csrf = sign_up(base_url, "Bench", "bench@example.com")
    project = browser.post(f"{base_url}/api/v1/projects", json={"name": "Shop"}, headers=csrf)
    project = project.json()
    if settings:
        response = browser.patch(
            f"{base_url}/api/v1/projects/{project['id']}",
            json={"settings": settings},
            headers=csrf,
        )
        response.raise_for_status()
    return project


def stored_reports(database_url: str) -> int:
    engine = create_engine(database_url)
    with engine.connect() as connection:
        count = connection.execute(text("SELECT count(*) FROM reports")).scalar()
    engine.dispose()
    return count


def measure_svc(
    database: str, body_path: Path, connections: int, seconds: int, label: str = "", **env
):
    """wrk against `make run` on a fresh database; env and project settings from the caller.
    Every report is counted against an ingest limit too high to refuse any: a real install
    counts them all, in the database by default (svc.rate_limits)."""
    webhook_url = env.pop("webhook_url", None)
    env.setdefault("SVC_RATE_LIMIT_INGEST", "1000000/minute")
    with tempfile.TemporaryDirectory() as workdir:
        workdir = Path(workdir)
        with fresh_database(database, workdir) as url:
            with running_service(url, workdir, **env) as base_url:
                # The body's request headers are kept (and redacted) as a project capturing
                # them keeps them: off, the service would drop them unread.
                settings = {"widget": {"capture_network_details": True}}
                if webhook_url:
                    settings["webhook_url"] = webhook_url
                project = new_project(base_url, **settings)
                cpu = service_cpu_seconds(base_url)
                figures = run_wrk(
                    f"{base_url}/api/v1/reports",
                    body_path,
                    project["apiKey"],
                    connections,
                    seconds,
                )
                cpu = service_cpu_seconds(base_url) - cpu
                # Steadier than the rate on a host whose speed drifts: what each report cost
                # every process of the service (workers, scheduler, the log's relay).
                figures["service_cpu_ms_per_report"] = round(cpu * 1000 / figures["requests"], 2)
            figures["stored"] = stored_reports(url)
    return {"target": label or f"svc {database}", **figures}


def measure(connections: int, seconds: int, databases) -> list[dict]:
    with tempfile.TemporaryDirectory() as workdir:
        body_path = Path(workdir) / "report.json"
        body_path.write_text(json.dumps(report_body()))
        with bare_flask(Path(workdir)) as base_url:
            bare = {
                "target": "bare Flask (parse only)",
                **run_wrk(f"{base_url}/api/v1/reports", body_path, "-", connections, seconds),
            }
        rows = [bare]
        for database in databases:
            rows.append(measure_svc(database, body_path, connections, seconds))
    for row in rows:
        row["body_kb"] = round(body_path_size(), 1)
        row["ratio_to_bare"] = round(row["requests_per_s"] / bare["requests_per_s"], 2)
    return rows


def body_path_size() -> float:
    return len(json.dumps(report_body())) / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--database", choices=DATABASES, action="append")
    options = parser.parse_args()
    rows = measure(options.connections, options.seconds, options.database or DATABASES)
    write_result("ingest", rows)
    print_table(summary(rows))
    return 0


def summary(rows: list[dict]) -> list[dict]:
    return [
        {
            "target": row["target"],
            "requests/s": row["requests_per_s"],
            "p50 ms": row["p50_ms"],
            "p99 ms": row["p99_ms"],
            "errors": row["non_2xx"] + row["socket_errors"],
            "stored": row.get("stored", "-"),
            "svc/bare": row["ratio_to_bare"],
            "CPU ms/report": row.get("service_cpu_ms_per_report", "-"),
        }
        for row in rows
    ]


if __name__ == "__main__":
    raise SystemExit(main())
