"""`make bench` (python -m bench): every benchmark in turn, then one table of the figures the
performance targets are about, each beside its target (docs/performance.md).

    .venv/bin/python -m bench [--quick | --smoke] [--database sqlite|postgresql ...]
    .venv/bin/python -m bench --table-only [--markdown]

--quick runs shorter loads and stops the scale benchmark at 100,000 reports.
--smoke runs every benchmark, bench.load included, for a few seconds on tiny data, three at a
time, its figures in a temporary directory: it proves the benchmarks still run (the suite runs
it, tests/test_bench.py), and its figures mean nothing. A benchmark that fails fails the run.
Those that do nothing of their own per database (ingest, memory, creation) run on the first
named alone.
--database limits the benchmarks that run on both databases to those named.
Each benchmark writes its full figures to bench/results/<name>.json.
"""

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from bench import (
    creation,
    grouping,
    ingest,
    load,
    mcp,
    memory,
    operations,
    replay,
    retention,
    scale,
    similar,
    storage,
    store,
    webhooks,
    widget,
)
from bench.common import DATABASES, print_table, read_result

INGEST_GOAL_RATIO = 0.25
INGEST_GOAL_P99_MS = 250
CREATION_GOAL_CPU_MS = 2.0  # issue 53: a report's filing, in-process
MEMORY_GOAL_MB = 300  # issue 73: make run idle, two workers, RSS summed


def run_all(quick: bool, databases: list[str]) -> None:
    seconds = ["--seconds", "5" if quick else "20"]
    sizes = ["--sizes", "10000", "100000"] if quick else []
    on_each = [argument for database in databases for argument in ("--database", database)]
    run(
        (creation, ["--rounds", "4" if quick else "8", *on_each]),
        (ingest, [*seconds, *on_each]),
        (store, ["--reports", "1000" if quick else "3000"]),
        (webhooks, seconds),
        (scale, [*sizes, *on_each]),
        (widget, ["--rounds", "5"] if quick else []),
        (replay, ["--seconds", "20", "--mutations", "1700"] if quick else []),
        (operations, ["--reports", "10000" if quick else "100000", *on_each]),
        (storage, ["--seconds", "5", "--kills", "3", "--lease", "5"] if quick else []),
        (retention, ["--reports", "10000" if quick else "100000", *seconds]),
        (similar, on_each),
        (grouping, on_each),
        (mcp, ["--calls", "50" if quick else "200"]),
        (memory, ["--seconds", "60" if quick else "300", *on_each]),
    )


def run_smoke(databases: list[str]) -> None:
    on_each = [argument for database in databases for argument in ("--database", database)]
    # Benchmarks with nothing of their own for either database run on the first named alone:
    # what they do there differently is bench.common's, which scale and operations take.
    first = ["--database", databases[0]]
    run_at_once(
        SMOKE_AT_ONCE,
        (scale, ["--sizes", "2000", "--repeats", "3", *on_each]),
        *(
            (load, ["--database", database, "--clients", "4", "--seconds", "2"])
            for database in databases
        ),
        (storage, ["--seconds", "1", "--clients", "2", "--kills", "1", "--lease", "2"]),
        (operations, ["--reports", "200", *on_each]),
        (ingest, ["--seconds", "1", "--connections", "4", *first]),
        (webhooks, ["--reports", "3", "--seconds", "1", "--connections", "4", "--rounds", "1"]),
        (retention, ["--reports", "500", "--seconds", "1"]),
        (widget, ["--rounds", "2", "--calls", "200", "--blocks", "1"]),
        (replay, ["--seconds", "1", "--mutations", "50", "--rounds", "1"]),
        (similar, ["--noise", "0", *on_each]),
        (grouping, ["--background", "0", *on_each]),
        (mcp, ["--calls", "5"]),
        (memory, ["--seconds", "2", "--idle", "1", "--every", "0.5", *first]),
        (store, ["--reports", "50"]),
        # --against this very checkout: the turns with another one run too.
        (
            creation,
            ["--requests", "20", "--rounds", "2", "--warmup", "5", "--against", ".", *first],
        ),
    )


# A smoke pass is mostly waiting (services starting, a second of load, a store's outage), and its
# figures mean nothing: three benchmarks at a time take a third of the time (docs/performance.md).
SMOKE_AT_ONCE = 3


def run_at_once(at_once: int, *benchmarks) -> None:
    """Each (module, its arguments) in a process of its own, `at_once` at a time, longest
    first; their output in this order once all have ended. Fails if any failed."""

    def one(benchmark) -> tuple[str, int]:
        module, arguments = benchmark
        started = time.monotonic()
        command = [sys.executable, "-m", module.__name__, *arguments]
        with tempfile.TemporaryFile("w+") as output:
            process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, text=True)
            # wait4: this benchmark's CPU alone (with the services it started and waited for),
            # where the pool's threads share one RUSAGE_CHILDREN.
            _, status, usage = os.wait4(process.pid, 0)
            process.returncode = os.waitstatus_to_exitcode(status)
            output.seek(0)
            said = output.read()
        took = (f"({module.__name__} took {time.monotonic() - started:.1f} s, "
                f"{usage.ru_utime + usage.ru_stime:.1f} s of CPU)")  # fmt: skip
        return f"{said}{took}", process.returncode

    with ThreadPoolExecutor(at_once) as pool:
        finished = list(pool.map(one, benchmarks))
    for output, _ in finished:
        print(output, flush=True)
    # What a failed one said last, beside its name: the whole output is long, and a caller
    # that keeps its end (tests/test_bench.py) would lose the cause.
    failed = [
        f"{_exited(module, arguments, status)}:\n{output[-1500:]}"
        for (module, arguments), (output, status) in zip(benchmarks, finished, strict=True)
        if status
    ]
    if failed:
        raise SystemExit("\n".join(failed))


def run(*benchmarks) -> None:
    """Each (module, its command-line arguments) in turn; stops at the first that fails."""
    for module, arguments in benchmarks:
        sys.argv = [module.__name__, *arguments]
        started, cpu = time.monotonic(), _cpu_seconds()
        status = module.main()
        if status:
            raise SystemExit(_exited(module, arguments, status))
        print(f"({module.__name__} took {time.monotonic() - started:.1f} s, "
              f"{_cpu_seconds() - cpu:.1f} s of CPU)", file=sys.stderr)  # fmt: skip


def _exited(module, arguments: list[str], status) -> str:
    return f"{module.__name__} {' '.join(arguments)} exited {status}"


def _cpu_seconds() -> float:
    """This process's CPU and that of the children it has waited for (every service a
    benchmark starts is stopped and waited for before it returns)."""
    return sum(
        usage.ru_utime + usage.ru_stime
        for usage in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    )


def headline() -> list[dict]:
    rows = []

    def add(benchmark, measure, figure, target, met):
        verdict = "-" if met is None else ("met" if met else "missed")
        rows.append(
            {
                "benchmark": benchmark,
                "measure": measure,
                "figure": figure,
                "target": target,
                "": verdict,
            }
        )

    ingest_rows = read_result("ingest") or []
    bare = next((r for r in ingest_rows if r["target"].startswith("bare")), None)
    if bare:
        add("ingest", "bare Flask, parse only", f"{bare['requests_per_s']} req/s", "", None)
    for row in ingest_rows:
        if row is bare:
            continue
        errors = row["non_2xx"] + row["socket_errors"]
        add(
            "ingest",
            row["target"],
            f"{row['requests_per_s']} req/s ({row['ratio_to_bare']:.0%} of bare), "
            f"p99 {row['p99_ms']} ms, {errors} errors",
            # The goal of the lean ingest, for both databases at 32 connections.
            f">= {INGEST_GOAL_RATIO:.0%} of bare, p99 <= {INGEST_GOAL_P99_MS} ms, 0 errors",
            row["ratio_to_bare"] >= INGEST_GOAL_RATIO
            and row["p99_ms"] <= INGEST_GOAL_P99_MS
            and errors == 0,
        )
    for row in read_result("creation") or []:
        add(
            "ingest",
            f"CPU per creation in-process, {row['database']} (bench.creation)",
            f"{row['cpu_ms_per_creation']} ms (median round {row['cpu_ms_median_round']} ms)",
            f"<= {CREATION_GOAL_CPU_MS} ms",
            row["cpu_ms_per_creation"] <= CREATION_GOAL_CPU_MS,
        )
    stored = {row["schema"]: row for row in read_result("store") or []}
    if bare and stored:
        # The bare app keeps every core busy (wrk included) for cores / rate per request; at half
        # its rate, a report may cost twice that: svc may add as much again, SQLite included.
        allowance_ms = os.cpu_count() * 1000 / bare["requests_per_s"]
        add(
            "ingest",
            "SQLite's work per report, alone (bench.store)",
            f"{stored['as built']['cpu_ms_per_report']} ms of CPU; at 50% of bare, "
            f"svc may add {allowance_ms:.2f} ms to the bare app's",
            "",
            None,
        )

    scale_rows = read_result("scale") or []
    for database in ("sqlite", "postgresql"):
        mine = {row["reports"]: row for row in scale_rows if row["database"] == database}
        if not mine:
            continue
        small, large = mine[min(mine)], mine[max(mine)]
        span = f"{max(mine):,} vs {min(mine):,}"
        for name in ("list_first", "list_filtered", "list_least_severe"):
            if f"{name}_p50_ms" not in large:
                continue  # figures of a run from before it was measured
            ratio = large[f"{name}_p50_ms"] / small[f"{name}_p50_ms"]
            add(
                f"scale {database}",
                f"{name} p50, {span}",
                f"{large[f'{name}_p50_ms']} / {small[f'{name}_p50_ms']} ms = {ratio:.1f}x",
                "<= 3x",
                ratio <= 3,
            )
        for name in ("search_one", "search_two"):
            p50 = large[f"{name}_p50_ms"]
            scan = large["like_scan_p50_ms"]
            add(
                f"scale {database}",
                f"{name} p50 at {max(mine):,}",
                f"{p50} ms; LIKE scan {scan} ms ({p50 / scan:.2f}x)",
                "< 100 ms and < 0.1x the scan",
                p50 < 100 and p50 < scan / 10,
            )
        if "similar_p50_ms" in large:  # figures of a run from before similar reports lack it
            p50 = large["similar_p50_ms"]
            add(f"scale {database}", f"similar p50 at {max(mine):,}", f"{p50} ms", "< 100 ms",
                p50 < 100)  # fmt: skip
        if "stats_all_p50_ms" in large:  # figures of a run from before the overview lack it
            for name in ("stats_all", "stats_project"):
                p50 = large[f"{name}_p50_ms"]
                add(f"scale {database}", f"{name} p50 at {max(mine):,}", f"{p50} ms", "< 200 ms",
                    p50 < 200)  # fmt: skip
            add(
                f"scale {database}",
                f"export NDJSON of {max(mine):,}",
                f"{large['export_s']} s, {large['export_mb']} MB; private memory grew "
                f"{large['export_memory_growth_mb']} MB",
                "constant memory",
                large["export_memory_growth_mb"] < 64,
            )

    for row in read_result("memory") or []:
        add(
            f"memory {row['database']}",
            "make run, 2 workers, summed over its processes",
            f"idle RSS {row['idle_rss_mb']} MB (PSS {row['idle_pss_mb']}); under "
            f"{row['load_seconds']} s of ingest RSS {row['load_peak_rss_mb']} MB at most, "
            f"{row['load_growth_rss_mb']:+} MB from its second fifth to its last",
            f"idle RSS < {MEMORY_GOAL_MB} MB",
            row["idle_rss_mb"] < MEMORY_GOAL_MB,
        )
    for row in read_result("similar") or []:
        add(
            f"similar {row['database']}",
            f"labelled set: {row['grouped_reports']} reports of 12 bugs among {row['reports']}",
            f"a duplicate first {row['top1']:.0%}, in the first three {row['top3']:.0%}; "
            f"lookup p50 {row['lookup_p50_ms']} ms",
            f">= {similar.TOP1_GOAL:.0%} first, >= {similar.TOP3_GOAL:.0%} in three",
            row["top1"] >= similar.TOP1_GOAL and row["top3"] >= similar.TOP3_GOAL,
        )
    hooks = read_result("webhooks")
    if hooks:
        add(
            "webhooks",
            "first attempt after the 201",
            f"p50 {hooks['first_attempt_p50_ms']} ms, p95 {hooks['first_attempt_p95_ms']} ms",
            "p50 < 1 s",
            hooks["first_attempt_p50_ms"] < 1000,
        )
        add(
            "webhooks",
            "ingest while the receiver hangs",
            f"{hooks['hanging_to_quiet']:.0%} of the rate without webhooks",
            ">= 90%",
            hooks["hanging_to_quiet"] >= 0.9,
        )
    object_store = read_result("storage")
    if object_store:
        ingest_s3 = object_store["ingest"]
        add(
            "storage",
            "ingest with a screenshot per report, S3 (SeaweedFS) against a folder",
            f"{ingest_s3['s3']['reports_per_s']} / {ingest_s3['folder']['reports_per_s']} "
            f"reports/s = {ingest_s3['s3_to_folder']:.2f}",
            f">= {storage.GOAL_RATIO}",
            ingest_s3["s3_to_folder"] >= storage.GOAL_RATIO,
        )
        failover = object_store["failover"]
        add(
            "storage",
            f"scheduler takeover after SIGKILL, {failover['kills']} kills, "
            f"{failover['lease_s']:g} s lease",
            f"median {failover['takeover_median_s']} s, max {failover['takeover_max_s']} s",
            "<= lease + 5 s",
            failover["takeover_max_s"] <= failover["lease_s"] + 5,
        )
    for row in read_result("retention") or []:
        add(
            "retention",
            f"ingest p99 while {row['eligible']:,} of {row['reports']:,} reports are deleted "
            f"({row['database']})",
            f"{row['p99_during_ms']} ms against {row['p99_without_ms']} ms without "
            f"({row['p99_ratio']}x); the pass took {row['retention_s']} s",
            f"<= {retention.GOAL_RATIO:g}x",
            row["p99_ratio"] is not None and row["p99_ratio"] <= retention.GOAL_RATIO,
        )
    page_cost = read_result("widget")
    if page_cost:
        add(
            "widget",
            "start-up on the main thread (evaluate + Svc.init), p50",
            f"{page_cost['init_p50_ms']} ms (p90 {page_cost['init_p90_ms']}); "
            f"its button {page_cost['render_p50_ms']} ms later",
            "< 5 ms",
            page_cost["init_p50_ms"] < 5,
        )
        add(
            "widget",
            "added to each fetch / console call",
            f"{page_cost['fetch_added_us']} / {page_cost['console_added_us']} µs",
            "fetch < 50 µs",
            page_cost["fetch_added_us"] < 50,
        )
        add(
            "widget",
            "added to each fetch with network details, 10 KB of JSON each way",
            f"{page_cost['detailed_fetch_added_us']} µs "
            f"(the page's own fetch and JSON: {page_cost['detailed_fetch_bare_us']} µs)",
            "< 100 µs",
            page_cost["detailed_fetch_added_us"] < 100,
        )
    recording = read_result("replay")
    if recording:
        add(
            "replay",
            f"main thread added by recording, {recording['mutations']:,} DOM changes in "
            f"{recording['seconds']:g} s",
            f"{recording['added_share_of_session']:.2%} of the session; buffer "
            f"{recording['buffer_json_bytes']:,} bytes as JSON, upload "
            f"{recording['upload_bytes']:,} bytes, script {recording['script_gzip_bytes']:,} "
            "bytes gzipped",
            "< 3 %",
            recording["added_share_of_session"] < 0.03,
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    speed = parser.add_mutually_exclusive_group()
    speed.add_argument("--quick", action="store_true")
    speed.add_argument("--smoke", action="store_true")
    parser.add_argument("--database", choices=DATABASES, action="append")
    parser.add_argument(
        "--table-only", action="store_true", help="print the table of the last results"
    )
    parser.add_argument(
        "--markdown",
        action="store_true",
        help="with --table-only: the table and the scale figures in Markdown, for the docs",
    )
    options = parser.parse_args()
    databases = options.database or list(DATABASES)
    if options.smoke:
        os.environ["SVC_BENCH_RESULTS"] = tempfile.mkdtemp(prefix="svc-bench-smoke-")
        run_smoke(databases)
    elif not options.table_only:
        run_all(options.quick, databases)
    rows = headline()
    if options.smoke:
        for row in rows:
            del row[""]  # no verdicts on figures of tiny data
    print()
    print_table(rows, markdown=options.markdown)
    if options.markdown:
        print()
        print_table(read_result("scale") or [], markdown=True)
    if options.smoke:
        shutil.rmtree(os.environ["SVC_BENCH_RESULTS"])
        print("\nsmoke run: every benchmark ran (its figures above mean nothing)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
