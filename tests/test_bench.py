"""The benchmarks still run: `make bench BENCH_ARGS=--smoke`, a seconds-long pass over every
one of them on tiny data (bench/__main__.py). Their figures are not looked at here; speed
goals live in bench/ and docs/performance.md."""

import os
import subprocess

from harness.service import ROOT


def test_every_benchmark_runs_in_a_smoke_pass():
    arguments = ["--smoke", "--database", "sqlite"]
    env = dict(os.environ)
    if os.environ.get("SVC_TEST_DATABASE_URL"):
        arguments += ["--database", "postgresql"]
        env["SVC_BENCH_POSTGRES_URL"] = os.environ["SVC_TEST_DATABASE_URL"]
    finished = subprocess.run(
        ["make", "--no-print-directory", "bench", f"BENCH_ARGS={' '.join(arguments)}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = finished.stdout + finished.stderr
    assert finished.returncode == 0, output[-5000:]
    assert "smoke run: every benchmark ran" in output
    table = output[output.index("benchmark  ") :]
    for benchmark in ("ingest", "scale sqlite", "webhooks", "widget"):
        assert f"\n{benchmark} " in table, table
    assert output.count("\nPASS\n") == len(arguments) // 2  # bench.load, on each database
