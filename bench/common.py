"""What the benchmarks share: fresh databases, the service as `make run` starts it, percentiles,
and results written to bench/results/ and printed as a table."""

import contextlib
import json
import os
import signal
import statistics
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.databases import postgresql_schema
from harness.service import descendants, start_service

RESULTS = Path(__file__).resolve().parent / "results"
POSTGRES = os.environ.get(
    "SVC_BENCH_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
DATABASES = ("sqlite", "postgresql")


@contextmanager
def fresh_database(kind: str, workdir: Path, keep: bool = False) -> Iterator[str]:
    """The URL of an empty database of that kind: a SQLite file in workdir, or a PostgreSQL
    schema of its own, dropped afterwards unless `keep`."""
    if kind == "sqlite":
        yield f"sqlite:///{workdir / 'svc.sqlite3'}"
        return
    with postgresql_schema(POSTGRES, "svc_bench", drop=not keep) as url:
        yield url


def service_settings(database_url: str, workdir: Path, **env: str) -> dict[str, str]:
    """The settings of an installation in workdir: 2 workers, no rate limits."""
    return {
        "SVC_DATABASE_URL": database_url,
        "SVC_WORKERS": "2",
        "SVC_INSTANCE_PATH": str(workdir / "instance"),
        "SVC_UPLOAD_DIR": str(workdir / "uploads"),
        "SVC_RATE_LIMIT_INGEST": "off",
        "SVC_RATE_LIMIT_AUTH": "off",
        **env,
    }


@contextmanager
def running_service(database_url: str, workdir: Path, **env: str) -> Iterator[str]:
    """`make run` on that database with 2 workers and no rate limits (one address sends all
    the load); its base URL. Stopped with SIGTERM at the end."""
    base_url, service = start_service(service_settings(database_url, workdir, **env))
    _SERVICES[base_url] = service
    try:
        yield base_url
    finally:
        del _SERVICES[base_url]
        os.killpg(service.process.pid, signal.SIGTERM)
        service.wait(timeout=60)


_SERVICES = {}


def service_pids(base_url: str) -> list[int]:
    """Every process of the service at base_url now: make and all below it."""
    root = _SERVICES[base_url].process.pid
    return [root, *descendants(root)]


class PrivateMemory:
    """The most private memory (RssAnon: what the process itself holds, not the file pages
    SQLite maps) each process of the service at base_url reached while the block ran, sampled
    ten times a second; `growth_mb`, the largest rise over where a process started."""

    def __init__(self, base_url: str):
        self.pids = descendants(_SERVICES[base_url].process.pid)
        self.start = self._sample()
        self.peak = dict(self.start)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _sample(self) -> dict[int, float]:
        found = {}
        for pid in self.pids:
            with contextlib.suppress(OSError, KeyError):  # ended (a zombie has no sizes)
                found[pid] = megabytes(Path(f"/proc/{pid}/status"))["RssAnon"]
        return found

    def _watch(self) -> None:
        while not self._stop.wait(0.1):
            for pid, megabytes in self._sample().items():
                self.peak[pid] = max(self.peak.get(pid, 0), megabytes)

    def __enter__(self) -> "PrivateMemory":
        self._thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def growth_mb(self) -> float:
        return max(self.peak[pid] - self.start.get(pid, self.peak[pid]) for pid in self.peak)

    @property
    def peak_mb(self) -> float:
        return max(self.peak.values())


def megabytes(path: Path) -> dict[str, float]:
    """The `Name:  N kB` lines of a /proc file (status, smaps_rollup), in MB by name."""
    found = {}
    for line in path.read_text().splitlines():
        name, _, value = line.partition(":")
        if value.endswith(" kB"):
            found[name] = int(value.split()[0]) / 1024
    return found


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def service_cpu_seconds(base_url: str) -> float:
    """The CPU time the processes of the service at base_url have used so far: read before
    and after a load, what the load cost them all, the scheduler's work and the log's relay
    included."""
    total = 0.0
    for pid in descendants(_SERVICES[base_url].process.pid):
        with contextlib.suppress(OSError):  # a process that ended in between
            total += cpu_seconds(pid)
    return total


def percentile(values: list[float], share: float) -> float:
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=100, method="inclusive")[round(share * 100) - 1]


def milliseconds(seconds: float) -> float:
    return round(seconds * 1000, 2)


def result_path(name: str) -> Path:
    """Where a benchmark's output goes: bench/results/, or SVC_BENCH_RESULTS (a smoke run's
    throw-away figures must not replace the real ones)."""
    results = Path(os.environ.get("SVC_BENCH_RESULTS", RESULTS))
    results.mkdir(parents=True, exist_ok=True)
    return results / name


def write_result(name: str, result) -> Path:
    path = result_path(f"{name}.json")
    path.write_text(json.dumps(result, indent=2) + "\n")
    return path


def read_result(name: str):
    path = result_path(f"{name}.json")
    return json.loads(path.read_text()) if path.exists() else None


def print_table(rows: list[dict], markdown: bool = False) -> None:
    """Rows of equal keys as an aligned text table, or as a Markdown table (for the docs)."""
    if not rows:
        return
    columns = list(rows[0])
    cells = [[str(row.get(column, "")) for column in columns] for row in rows]
    if markdown:
        for line in [columns, ["---"] * len(columns), *cells]:
            print("| " + " | ".join(line) + " |")
        return
    widths = [max(len(column), *(len(row[i]) for row in cells)) for i, column in enumerate(columns)]
    print("  ".join(column.ljust(width) for column, width in zip(columns, widths, strict=True)))
    print("  ".join("-" * width for width in widths))
    for row in cells:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
