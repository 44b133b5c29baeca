"""Webhook benchmark, against the service as `make run` starts it (gunicorn and the scheduler
process) on SQLite, with a real HTTPS receiver on 127.0.0.1 (harness/receiver.py):

- latency: reports sent one at a time; for each, the time from its 201 to the first delivery
  attempt arriving at the receiver (p50, p95);
- ingest while the receiver hangs on every request: wrk as in bench.ingest, against the same
  load with no webhook configured, in alternation, each side first in every other round
  (--rounds of each); the ratio of their mean rates. Every report must still be stored.

    .venv/bin/python -m bench.webhooks [--reports 60] [--seconds 20] [--rounds 2]

Writes bench/results/webhooks.json.
"""

import argparse
import json
import tempfile
import time
from pathlib import Path

import requests
import trustme

from bench.common import (
    fresh_database,
    milliseconds,
    percentile,
    print_table,
    running_service,
    write_result,
)
from bench.ingest import measure_svc, new_project, report_body
from harness.receiver import Receiver

HANG_SECONDS = 3_600


def first_attempt_latency(receiver: Receiver, ca_path: str, reports: int) -> list[float]:
    env = {"SVC_WEBHOOK_ALLOW_PRIVATE": "true", "SVC_WEBHOOK_CA_BUNDLE": ca_path}
    with tempfile.TemporaryDirectory() as workdir:
        workdir = Path(workdir)
        with (
            fresh_database("sqlite", workdir) as url,
            running_service(url, workdir, **env) as base_url,
        ):
            project = new_project(base_url, webhook_url=receiver.url)
            created = {}
            for n in range(reports):
                response = requests.post(
                    f"{base_url}/api/v1/reports",
                    json={**report_body(), "title": f"Report {n}"},
                    headers={"X-API-Key": project["apiKey"]},
                )
                created[response.json()["id"]] = time.monotonic()
                time.sleep(0.2)  # a report every 200 ms, not in step with the scheduler's poll
            received = receiver.wait_for(reports, timeout=60)
    first = {}
    for request in received:
        report_id = json.loads(request.body)["data"]["id"]
        first.setdefault(report_id, request.arrived)
    return [first[report_id] - sent for report_id, sent in created.items()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reports", type=int, default=60)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=2, help="runs of each ingest load")
    options = parser.parse_args()

    ca = trustme.CA()
    with tempfile.TemporaryDirectory() as workdir:
        ca_path = str(Path(workdir) / "ca.pem")
        ca.cert_pem.write_to_path(ca_path)
        body_path = Path(workdir) / "report.json"
        body_path.write_text(json.dumps(report_body()))

        receiver = Receiver(ca).start()
        latencies = first_attempt_latency(receiver, ca_path, options.reports)
        receiver.script(*[("sleep", HANG_SECONDS)] * 100_000)
        load = (options.connections, options.seconds)
        runs = {
            "no webhook": lambda label: measure_svc("sqlite", body_path, *load, label=label),
            "receiver hangs": lambda label: measure_svc(
                "sqlite",
                body_path,
                *load,
                label=label,
                webhook_url=receiver.url,
                SVC_WEBHOOK_ALLOW_PRIVATE="true",
                SVC_WEBHOOK_CA_BUNDLE=ca_path,
            ),
        }
        measured = {name: [] for name in runs}
        # In alternation, each side first in every other round (A B B A ...), so that neither a
        # slow minute of a shared machine nor a drift over the whole bench lands on one side.
        for n in range(1, options.rounds + 1):
            for name in runs if n % 2 else reversed(runs):
                measured[name].append(runs[name](f"{name} #{n}"))
        quiet, hanging = measured["no webhook"], measured["receiver hangs"]
        receiver.clear_script()

    result = {
        "first_attempt_p50_ms": milliseconds(percentile(latencies, 0.50)),
        "first_attempt_p95_ms": milliseconds(percentile(latencies, 0.95)),
        "reports_timed": len(latencies),
        "ingest": quiet + hanging,
        "hanging_to_quiet": round(_rate(hanging) / _rate(quiet), 2),
    }
    write_result("webhooks", result)
    print_table(summary(result))
    return 0


def _rate(runs: list[dict]) -> float:
    return sum(run["requests_per_s"] for run in runs) / len(runs)


def summary(result: dict) -> list[dict]:
    rows = [
        {
            "measure": "first attempt after the 201",
            "value": f"p50 {result['first_attempt_p50_ms']} ms, "
            f"p95 {result['first_attempt_p95_ms']} ms ({result['reports_timed']} reports)",
        }
    ]
    for run in result["ingest"]:
        rows.append(
            {
                "measure": f"ingest, {run['target']}",
                "value": f"{run['requests_per_s']} req/s, p99 {run['p99_ms']} ms, "
                f"{run['non_2xx'] + run['socket_errors']} errors, {run['stored']} stored",
            }
        )
    rows.append({"measure": "hanging / no webhook", "value": result["hanging_to_quiet"]})
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
