"""What one MCP call costs (docs/performance.md, "The MCP server"): the service as `make run`
starts it on a fresh SQLite database (two workers), a report with a console error, a failed
request, steps and a screenshot, and a read-only token; then `get_report` timed `--calls` times
over Streamable HTTP (the SDK's client, one connection) and through `svc mcp` on stdio, beside
the same report over the REST API. The workers' resident memory before and after their first
/mcp request says what importing the SDK costs.

    .venv/bin/python -m bench.mcp [--calls 200]

Writes bench/results/mcp.json.
"""

import argparse
import asyncio
import contextlib
import os
import sys
import tempfile
import time
from pathlib import Path

import httpx2
import requests
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from bench.common import (
    _SERVICES,  # the running services, to read their workers' memory
    megabytes,
    milliseconds,
    percentile,
    print_table,
    running_service,
    write_result,
)
from harness.client import png_bytes
from harness.service import descendants, set_up_project


def resident_mb(pids) -> float:
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError, KeyError):  # ended in between (a zombie has no sizes)
            total += megabytes(Path(f"/proc/{pid}/status"))["VmRSS"]
    return round(total, 1)


def workers(base_url: str) -> list[int]:
    service = _SERVICES[base_url]
    return [
        pid
        for pid in descendants(service.process.pid)
        if "gunicorn" in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    ]


async def timed(client, calls: int) -> list[float]:
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        result = await client.call_tool("get_report", {"report": "WS-1"})
        times.append(time.perf_counter() - started)
        assert not result.is_error
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    calls = parser.parse_args().calls
    with tempfile.TemporaryDirectory() as workdir:
        url = f"sqlite:///{Path(workdir) / 'svc.sqlite3'}"
        with running_service(url, Path(workdir)) as base_url:
            browser, project = set_up_project(base_url, None)
            csrf = {"X-CSRF-Token": browser.cookies["svc_csrf_token"]}
            key = {"X-API-Key": project["apiKey"]}
            shot = requests.post(
                f"{base_url}/api/v1/upload/screenshot",
                headers=key,
                files={"file": ("s.png", png_bytes(64, 64), "image/png")},
            )
            requests.post(
                f"{base_url}/api/v1/reports",
                headers=key,
                json={
                    "title": "Pay fails",
                    "description": "Nothing happens",
                    "severity": "high",
                    "category": "bug",
                    "screenshot_url": shot.json()["key"],
                    "console_logs": [{"level": "error", "message": "TypeError: x", "timestamp": 1}],
                    "network_logs": [
                        {"method": "POST", "url": "/api/pay", "status": 500, "timestamp": 2}
                    ],
                    "user_actions": [{"type": "click", "target": "button#pay", "timestamp": 3}],
                },
            )
            token = browser.post(
                f"{base_url}/api/v1/tokens",
                headers=csrf,
                json={"name": "agent", "scopes": ["reports:read"]},
            ).json()["token"]
            before = resident_mb(workers(base_url))
            bearer = {"Authorization": f"Bearer {token}"}
            rest = []
            for _ in range(calls):
                started = time.perf_counter()
                requests.get(
                    f"{base_url}/api/v1/reports/WS-1/markdown", headers=bearer
                ).raise_for_status()
                rest.append(time.perf_counter() - started)

            async def over_http():
                # Not httpx's 5 s: a worker's first MCP request imports the SDK, which took
                # longer on a loaded CI machine (the smoke pass runs three benchmarks at once).
                http = httpx2.AsyncClient(headers=bearer, timeout=120)
                async with (
                    http,
                    Client(streamable_http_client(f"{base_url}/mcp", http_client=http)) as client,
                ):
                    await timed(client, 10)  # both workers build their server
                    return await timed(client, calls)

            async def over_stdio():
                env = {
                    "SVC_URL": base_url,
                    "SVC_TOKEN": token,
                    "PATH": os.environ["PATH"],
                    "HOME": workdir,
                }
                command = StdioServerParameters(
                    command=str(Path(sys.executable).with_name("svc")), args=["mcp"], env=env
                )
                async with Client(command) as client:
                    return await timed(client, calls)

            http_times = asyncio.run(over_http())
            after = resident_mb(workers(base_url))
            stdio_times = asyncio.run(over_stdio())
    rows = [
        {
            "transport": name,
            "calls": len(times),
            "p50_ms": milliseconds(percentile(times, 0.5)),
            "p95_ms": milliseconds(percentile(times, 0.95)),
        }
        for name, times in (
            ("REST markdown", rest),
            ("MCP http", http_times),
            ("MCP stdio (svc mcp)", stdio_times),
        )
    ]
    rows.append(
        {
            "transport": "gunicorn master+workers RSS MB",
            "calls": 0,
            "p50_ms": before,
            "p95_ms": after,
        }
    )
    write_result("mcp", rows)
    print_table(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
