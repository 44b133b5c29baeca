"""Scale benchmark: how list and search times grow with the number of reports.

Fills a fresh database with 10,000, then 100,000, then 1,000,000 synthetic reports (bulk insert
beside the running service: 60-character titles, 500-character descriptions from a 5,000-word
vocabulary, 10 projects, mixed statuses and severities, no captured logs or screenshots) and at
each size times calls through the HTTP API of the service as `make run` starts it:

    list_first     GET /api/v1/reports                       (first page and its total)
    list_filtered  ?project_id=&status=&severity=            (a filtered page and its total)
    page_50        ?page=50
    list_least_severe  ?sort=severity                        (least severe first)
    count_status   ?status=&page_size=1                      (the total of a broad filter)
    search_one     ?search=<word>
    search_two     ?search=<word> <word>
    stats_all      GET /api/v1/stats                         (the overview, 30 days)
    stats_project  GET /api/v1/stats?project_id=&days=90
    report_page    GET /api/v1/reports/{id}                   (a random report, whole)
    similar        GET /api/v1/reports/{id}/similar           (a random report's similar ones)

then exports every report as NDJSON (GET /api/v1/reports/export; above its limit, export jobs, one
a project), timing it and reading the service's private memory (RssAnon, sampled) meanwhile: a
streamed export leaves it where it was

and, directly in SQL, a plain LIKE scan for one word (no index), to compare search with.

    .venv/bin/python -m bench.scale                       # both databases, all three sizes
    .venv/bin/python -m bench.scale --database sqlite --sizes 10000 100000
    .venv/bin/python -m bench.scale --database sqlite --sizes 10000000 --keep DIR
    .venv/bin/python -m bench.scale --reuse DIR           # the calls again, on DIR's databases
    .venv/bin/python -m bench.scale --database sqlite --sizes 10000000 --no-words --keep DIR

--no-words leaves SQLite's search index empty (its build is over an hour at 10,000,000; docs/
performance.md) and the two searches untimed.

--keep keeps each database it fills (SQLite's file in DIR/sqlite, PostgreSQL's schema in the
bench's database, named in DIR/postgresql/bench.json) until you remove it (DROP SCHEMA ...
CASCADE).

Writes bench/results/scale.json and bench/results/scale.png (p50 against report count).
"""

import argparse
import json
import multiprocessing
import random
import string
import sys
import tempfile
import threading
import time
import uuid
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime, timedelta
from pathlib import Path

import requests
from sqlalchemy import create_engine, event, text

from bench.common import (
    DATABASES,
    PrivateMemory,
    fresh_database,
    milliseconds,
    percentile,
    print_table,
    result_path,
    running_service,
    write_result,
)
from harness.service import sign_up
from svc import create_app
from svc.database import refresh_planner_statistics
from svc.extensions import db
from svc.models import (
    CATEGORIES,
    SEVERITIES,
    SEVERITY_RANK,
    STATUSES,
    Report,
    ReportSignature,
    search_index,
)
from svc.services.grouping import signatures
from svc.services.reporting import stats

SIZES = (10_000, 100_000, 1_000_000)
PROJECTS = 10
REPEATS = 25
BATCH = 2_000  # 12 columns x 2,000 rows stays under SQLite's 32,766 parameters
# Batches made ahead of the load: unbounded, a maker faster than SQLite's search index held
# 2.3 GB of rows waiting a few minutes into a 10,000,000 fill.
READ_AHEAD = 4
KEPT = "bench.json"  # a kept database's projects and token, for --reuse
# PostgreSQL's search index, the one --no-words leaves out (37 minutes of one core at 10,000,000).
TRIGRAMS = "ix_reports_search_text_trgm"
COMMIT_BATCHES = 250  # a transaction a 500,000 reports
SPAN = timedelta(days=730)  # the reports arrived over two years
STATUS_WEIGHTS = (40, 20, 25, 15)
SEVERITY_WEIGHTS = (30, 40, 20, 10)
PLOTTED = (
    "list_first",
    "list_filtered",
    "page_50",
    "list_least_severe",
    "search_one",
    "search_two",
    "stats_all",
)


class Corpus:
    """Deterministic synthetic text: the same seed gives the same reports."""

    def __init__(self, seed: int = 7, words: int = 5_000):
        self.rng = random.Random(seed)
        vocabulary = set()
        while len(vocabulary) < words:
            length = self.rng.randint(4, 10)
            vocabulary.add("".join(self.rng.choices(string.ascii_lowercase, k=length)))
        self.words = sorted(vocabulary)

    def text(self, length: int) -> str:
        words = self.rng.choices(self.words, k=length // 5)
        return " ".join(words)[:length].strip().capitalize()


def fill(
    engine,
    project_ids: list[uuid.UUID],
    start: int,
    stop: int,
    corpus: Corpus,
    spread: int = SIZES[-1],
    words: bool = True,
) -> None:
    """Reports start..stop-1: report i belongs to project i % 10 with number i // 10 + 1. By the
    databases' bulk paths, the secondary indexes dropped meanwhile and built after: COPY on
    PostgreSQL, one statement compiled once for all rows (executemany) on SQLite (a multi-row
    INSERT compiled anew for every batch was half the time), a transaction a 500,000.
    The rows are made by a second process while this one loads the previous batch: making
    them (the text, each report's stems) cost as much as loading them. `spread` reports fill
    SPAN: the largest size of a run, so that none is dated in the future."""
    postgresql, began = engine.dialect.name == "postgresql", time.perf_counter()
    # SQLite's words from empty go in after every row, in one statement: added a batch at a
    # time, each cost two to three times as much once the index held a million
    # (docs/performance.md).
    words_after = not postgresql and start == 0 and words
    batches = [(b, min(stop, b + BATCH), project_ids, spread) for b in range(start, stop, BATCH)]
    context = multiprocessing.get_context("spawn")  # nothing of this process's connections
    with rollback_journal(engine), search_merges_deferred(engine):
        with (
            indexes_built_after(
                engine, ("reports", "report_signatures"), left_out=() if words else (TRIGRAMS,)
            ),
            context.Pool(1, initializer=_make_corpus, initargs=(corpus.words,)) as maker,
        ):
            raw = engine.raw_connection() if postgresql else None
            connection = None if postgresql else engine.connect()
            ahead = threading.BoundedSemaphore(READ_AHEAD)

            def throttled():
                for batch in batches:
                    ahead.acquire()
                    yield batch

            try:
                for number, (rows, signature_rows) in enumerate(
                    maker.imap(_made_batch, throttled()), 1
                ):
                    ahead.release()
                    if postgresql:
                        copy_rows(raw, Report.__table__, rows)
                        copy_rows(raw, ReportSignature.__table__, signature_rows)
                    else:
                        connection.execute(Report.__table__.insert(), rows)
                        connection.execute(ReportSignature.__table__.insert(), signature_rows)
                        if words and not words_after:  # as the fan-out indexes what it files
                            search_index.index_new(connection, [row["id"] for row in rows])
                    if number % COMMIT_BATCHES == 0:
                        (raw or connection).commit()
                        took = time.perf_counter() - began
                        print(
                            f"{batches[number - 1][1]:,} reports in, {took:.0f} s", file=sys.stderr
                        )
                (raw or connection).commit()
            finally:
                (raw or connection).close()
        if words_after:  # after the list indexes: the words are read in created_at's order
            with engine.begin() as connection:
                search_index.index_all(connection)
            took = time.perf_counter() - began
            print(f"{stop:,} reports' words in, {took:.0f} s", file=sys.stderr)
    with engine.begin() as connection:
        # What the service keeps up on each create (svc.services.reporting.intake._NEXT_NUMBER).
        connection.execute(
            text(
                "UPDATE projects SET"
                " report_count = (SELECT count(*) FROM reports r WHERE r.project_id = projects.id),"
                " last_report_number ="
                " (SELECT coalesce(max(number), 0) FROM reports r"
                "  WHERE r.project_id = projects.id)"
            )
        )
        stats.recount_all(connection)


_MAKER: Corpus | None = None


def _make_corpus(words: list[str]) -> None:
    global _MAKER
    _MAKER = Corpus.__new__(Corpus)
    _MAKER.words = words


def _made_batch(batch: tuple) -> tuple[list[dict], list[dict]]:
    """Reports first..stop-1 and their signature rows, the same for the same numbers (the
    batch's own generator, seeded by its first number)."""
    first, stop, project_ids, spread = batch
    corpus, began = _MAKER, datetime.now(UTC) - SPAN
    corpus.rng = rng = random.Random(first)
    step = SPAN / spread
    rows = []
    for i in range(first, stop):
        severity = rng.choices(SEVERITIES, SEVERITY_WEIGHTS)[0]
        created = began + step * i
        status = rng.choices(STATUSES, STATUS_WEIGHTS)[0]
        rows.append(
            {
                "id": uuid.uuid4(),
                "project_id": project_ids[i % PROJECTS],
                "number": i // PROJECTS + 1,
                "title": corpus.text(60),
                "description": corpus.text(500),
                "severity": severity,
                "severity_rank": SEVERITY_RANK[severity],
                "category": rng.choice(CATEGORIES),
                "status": status,
                "metadata": {},
                "created_at": created,
                "updated_at": created,
                "resolved_at": created + timedelta(hours=rng.uniform(0.5, 240))
                if status in ("resolved", "closed")
                else None,
            }
        )
    return rows, signed(rows, rng)


def copy_rows(raw, table, rows: list[dict]) -> None:
    """`rows` into `table` by PostgreSQL's COPY (psycopg's), in the raw connection's open
    transaction; the columns are the rows' keys."""
    names = list(rows[0])
    columns = ", ".join(f'"{name}"' for name in names)
    with raw.cursor() as cursor, cursor.copy(f"COPY {table.name} ({columns}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(
                [json.dumps(row[name]) if isinstance(row[name], dict) else row[name]
                 for name in names]
            )  # fmt: skip


@contextmanager
def indexes_built_after(engine, tables: tuple[str, ...], left_out: tuple[str, ...] = ()):
    """The tables' secondary indexes dropped, then made again once the rows are in: an index
    built once over every row is cheaper than one kept up row by row (a constraint's index and
    the primary key stay). Those named in `left_out` are not made again."""
    with engine.begin() as connection:
        if engine.dialect.name == "postgresql":
            found = connection.execute(
                text(
                    "SELECT i.indexname, i.indexdef FROM pg_indexes i"
                    " WHERE i.schemaname = current_schema() AND i.tablename = ANY(:tables)"
                    " AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)"
                ),
                {"tables": list(tables)},
            ).all()
        else:
            marks = ", ".join(f"'{name}'" for name in tables)
            found = connection.execute(
                text(
                    "SELECT name, sql FROM sqlite_master WHERE type = 'index'"
                    f" AND tbl_name IN ({marks}) AND sql IS NOT NULL"
                )
            ).all()
        for name, _ in found:
            connection.execute(text(f'DROP INDEX "{name}"'))
    try:
        yield
    finally:
        with engine.begin() as connection:
            for name, definition in found:
                if name not in left_out:
                    connection.execute(text(definition))


@contextmanager
def rollback_journal(engine):
    """SQLite: the load in rollback-journal mode, the write-ahead log again after. A rollback
    journal keeps only the pages a transaction changes that were there before it, so a bulk
    load's new pages are written once; the log writes them twice (in, then back) and grows
    to a transaction's size: 10,000,000 reports' words in one statement. Nothing on PostgreSQL."""
    if engine.dialect.name != "sqlite":
        yield
        return

    def journal(mode: str) -> None:
        engine.dispose()  # SQLite changes out of WAL only on a database's only connection
        with engine.connect() as connection:
            now = connection.exec_driver_sql(f"PRAGMA journal_mode = {mode}").scalar()
        assert now.upper() == mode, f"journal_mode {now}, not {mode}"

    journal("DELETE")
    try:
        yield
    finally:
        journal("WAL")


@contextmanager
def search_merges_deferred(engine):
    """SQLite: FTS5's automerge off while the fill loads (segments merge only sixteen at a
    time, FTS5's crisis merge), FTS5's default (4) again after: merging as it went was most of
    the fill's time (docs/performance.md). Nothing on PostgreSQL, whose index is built after."""
    if engine.dialect.name != "sqlite":
        yield
        return

    def automerge(segments: int) -> None:
        with engine.begin() as connection:
            search_index.configure(connection, {"automerge": segments})

    automerge(0)
    try:
        yield
    finally:
        automerge(search_index.FTS5_DEFAULTS["automerge"])


def signed(rows: list[dict], rng: random.Random) -> list[dict]:
    """The fan-out's signature rows of the reports (svc.services.grouping.signatures): their words'
    stems, and parts drawn from pools, so that some reports share an error or a request."""

    def part(kind: str, pool: int, share: float) -> str | None:
        return f"{kind}{rng.randrange(pool):015d}" if rng.random() < share else None

    return [
        {
            "report_id": row["id"],
            "project_id": row["project_id"],
            "created_at": row["created_at"],
            "signature": f"c:{rng.randrange(20_000):040d}",
            "error_key": part("e", 5_000, 0.5),
            "request_key": part("r", 2_000, 0.4),
            "page_key": part("p", 200, 1.0),
            "terms": " ".join(signatures.terms_of(row["title"], row["description"])),
            "label": "console: " + row["title"].lower(),
            "version": signatures.VERSION,  # as the fan-out makes them now: none to make again
        }
        for row in rows
    ]


def time_per_report(
    api, base_url: str, url: str, suffix: str = "", repeats: int = REPEATS
) -> list[float]:
    """GET /reports/{id} (a report's page) or, with suffix "/similar", its similar reports,
    for reports drawn at random."""
    engine = create_engine(url)
    with engine.connect() as connection:
        ids = connection.execute(
            text(f"SELECT id FROM reports ORDER BY random() LIMIT {repeats + 3}")
        ).scalars()
        reports = [str(uuid.UUID(str(report_id))) for report_id in ids]
    engine.dispose()
    times = []
    for number, report_id in enumerate(reports):
        started = time.perf_counter()
        answer = api.get(f"{base_url}/api/v1/reports/{report_id}{suffix}")
        if number >= 3:  # the first three warm up
            times.append(time.perf_counter() - started)
        answer.raise_for_status()
    return times


def bulk_load_engine(url: str):
    """An engine for the bulk loads, with room to hold the indexes being filled: SQLite's default
    2 MB page cache (and PostgreSQL's 4 MB for merging pending GIN entries) made the load of a
    million reports spend most of its time re-reading index pages."""
    engine = create_engine(url)

    @event.listens_for(engine, "connect")
    def configure(connection, _record):
        cursor = connection.cursor()
        if engine.dialect.name == "sqlite":
            cursor.execute("PRAGMA cache_size = -1048576")  # 1 GiB
            cursor.execute("PRAGMA synchronous = NORMAL")
        else:
            cursor.execute("SET work_mem = '512MB'")
            cursor.execute("SET maintenance_work_mem = '512MB'")
            connection.commit()  # a SET in a transaction that rolls back is undone
        cursor.close()

    return engine


def refresh_statistics(engine, url: str, workdir: Path) -> None:
    """What runs in the background of an install that grew to this size: the scheduler's hourly
    statistics job (svc.database) and, on PostgreSQL, autovacuum, which after this many
    inserts marks the table's pages all-visible (without that, every count read from an index
    visits the table too)."""
    if engine.dialect.name == "postgresql":
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(text("VACUUM reports"))
    app = create_app({"SVC_DATABASE_URL": url, "SVC_INSTANCE_PATH": str(workdir / "instance")})
    with app.app_context():
        refresh_planner_statistics()
        db.engine.dispose()


def time_calls(session, url: str, make_params, repeats: int = REPEATS) -> list[float]:
    for _ in range(3):  # warm-up
        session.get(url, params=make_params()).raise_for_status()
    times = []
    for _ in range(repeats):
        params = make_params()
        started = time.perf_counter()
        response = session.get(url, params=params)
        times.append(time.perf_counter() - started)
        response.raise_for_status()
    return times


def like_scan(url: str, corpus: Corpus, repeats: int = 5) -> list[float]:
    """One-word search with no index: a plain LIKE over every title and description, on a
    connection with the database's default settings."""
    engine = create_engine(url)
    times = []
    with engine.connect() as connection:
        if engine.dialect.name == "postgresql":
            connection.execute(text("SET enable_bitmapscan = off"))
            connection.execute(text("SET enable_indexscan = off"))
        for _ in range(repeats):
            pattern = f"%{corpus.rng.choice(corpus.words)}%"
            started = time.perf_counter()
            connection.execute(
                text(
                    "SELECT count(*) FROM reports"
                    " WHERE lower(title) LIKE :p OR lower(description) LIKE :p"
                ),
                {"p": pattern},
            ).scalar()
            times.append(time.perf_counter() - started)
    engine.dispose()
    return times


def set_up(base_url: str) -> tuple[list[str], str]:
    """Ten projects and a personal access token for the timed calls."""
    browser, csrf = sign_up(base_url, "Bench", "bench@example.com")
    projects = [
        browser.post(
            f"{base_url}/api/v1/projects", json={"name": f"Project {n}"}, headers=csrf
        ).json()["id"]
        for n in range(PROJECTS)
    ]
    token = browser.post(f"{base_url}/api/v1/tokens", json={"name": "bench"}, headers=csrf)
    return projects, token.json()["token"]


SEARCHES = ("search_one", "search_two")


def timed_calls(projects: list[str], corpus: Corpus) -> dict:
    rng = corpus.rng
    return {
        "list_first": dict,
        "list_filtered": lambda: {
            "project_id": rng.choice(projects),
            "status": rng.choice(STATUSES),
            "severity": rng.choice(SEVERITIES),
        },
        "page_50": lambda: {"page": 50},
        "list_least_severe": lambda: {"sort": "severity"},
        "count_status": lambda: {"status": rng.choice(STATUSES), "page_size": 1},
        "search_one": lambda: {"search": rng.choice(corpus.words)},
        "search_two": lambda: {"search": f"{rng.choice(corpus.words)} {rng.choice(corpus.words)}"},
    }


def stats_calls(projects: list[str], corpus: Corpus) -> dict:
    return {
        "stats_all": dict,
        "stats_project": lambda: {"project_id": corpus.rng.choice(projects), "days": 90},
    }


def time_export(api, base_url: str, size: int, projects: list[str]) -> dict:
    """Every report as NDJSON while the service's private memory is watched: read as it
    streams when one answer may hold them all; else written by export jobs, one a project
    (docs/api.md §8.3.1), timed until the last is done. Either way memory stays flat."""
    limit = api.get(f"{base_url}/api/v1/features").json()["export"]["syncLimit"]
    lines = received = 0
    with PrivateMemory(base_url) as memory:
        started = time.perf_counter()
        if size <= limit:
            url = f"{base_url}/api/v1/reports/export"
            with api.get(url, params={"format": "ndjson"}, stream=True) as answer:
                answer.raise_for_status()
                for chunk in answer.iter_content(chunk_size=1 << 16):
                    received += len(chunk)
                    lines += chunk.count(b"\n")
        else:
            jobs = [
                api.post(f"{base_url}/api/v1/projects/{project}/exports",
                         json={"format": "ndjson"}).json()
                for project in projects
            ]  # fmt: skip
            while jobs:
                time.sleep(1)
                for job in list(jobs):
                    seen = api.get(f"{base_url}/api/v1/exports/{job['id']}").json()
                    if seen["status"] == "failed":
                        raise SystemExit(f"export job failed: {seen['error']}")
                    if seen["status"] == "done":
                        lines += seen["written"]
                        received += seen["size"]  # gzipped
                        jobs.remove(job)
        seconds = time.perf_counter() - started
    if lines != size:
        raise SystemExit(f"export gave {lines} reports of {size}")
    return {
        "export_s": round(seconds, 1),
        "export_mb": round(received / 2**20, 1),
        "export_way": "answer" if size <= limit else "jobs (gzipped)",
        "export_reports_per_s": round(lines / seconds),
        "export_memory_growth_mb": round(memory.growth_mb, 1),
        "worker_private_mb": round(memory.peak_mb, 1),
    }


def run(
    database: str,
    sizes: list[int],
    keep: Path | None = None,
    export: bool = True,
    words: bool = True,
    repeats: int = REPEATS,
) -> list[dict]:
    """The bulk loads run while the service is stopped; it starts again for the timed calls,
    with connections that see the new statistics (as a running install's do within the hour,
    when its pool recycles them)."""
    corpus = Corpus()
    rows = []
    with nullcontext(keep) if keep else tempfile.TemporaryDirectory() as workdir:
        workdir = Path(workdir)
        workdir.mkdir(parents=True, exist_ok=True)
        with fresh_database(database, workdir, keep=bool(keep)) as url:
            with running_service(url, workdir) as base_url:
                projects, token = set_up(base_url)
            if keep:  # for --reuse
                kept = {"projects": projects, "token": token, "url": url, "words": words}
                (workdir / KEPT).write_text(json.dumps(kept))
            engine = bulk_load_engine(url)
            stored = 0
            for size in sizes:
                started = time.perf_counter()
                fill(
                    engine,
                    [uuid.UUID(p) for p in projects],
                    stored,
                    size,
                    corpus,
                    spread=max(*sizes, SIZES[-1]),
                    words=words,
                )
                fill_seconds = time.perf_counter() - started
                stored = size
                refresh_statistics(engine, url, workdir)
                row = {"database": database, "reports": size, "fill_s": round(fill_seconds, 1)}
                rows.append(
                    measure(
                        row, url, workdir, engine, projects, token, corpus, export, words, repeats
                    )
                )
            engine.dispose()
    return rows


def reuse(workdir: Path, export: bool = True, repeats: int = REPEATS) -> dict:
    """The timed calls again on a database an earlier run kept (--keep), as the code is now:
    `make run` first applies the migrations written since."""
    kept = json.loads((workdir / KEPT).read_text())
    url = kept.get("url", f"sqlite:///{workdir / 'svc.sqlite3'}")
    engine = bulk_load_engine(url)
    with engine.connect() as connection:
        size = connection.execute(text("SELECT count(*) FROM reports")).scalar()
    row = {"database": engine.dialect.name, "reports": size, "fill_s": None}
    row = measure(
        row, url, workdir, engine, kept["projects"], kept["token"], Corpus(), export,
        kept.get("words", True), repeats,
    )  # fmt: skip
    engine.dispose()
    return row


def measure(
    row: dict, url, workdir, engine, projects, token, corpus, export=True, words=True,
    repeats=REPEATS,
) -> dict:  # fmt: skip
    """`row` with the times of every call of the module's list, `repeats` of each (the
    export's unless `export` is false, the searches' unless `words` is), and the database's
    size."""
    api = requests.Session()
    api.headers["Authorization"] = f"Bearer {token}"
    size = row["reports"]
    with running_service(url, workdir) as base_url:
        timed = {
            name: time_calls(api, f"{base_url}/api/v1/{path}", make_params, repeats)
            for path, calls in (("reports", timed_calls), ("stats", stats_calls))
            for name, make_params in calls(projects, corpus).items()
            if words or name not in SEARCHES
        }
        for name, suffix in (("report_page", ""), ("similar", "/similar")):
            timed[name] = time_per_report(api, base_url, url, suffix, repeats)
        for name, times in timed.items():
            row[f"{name}_p50_ms"] = milliseconds(percentile(times, 0.50))
            row[f"{name}_p95_ms"] = milliseconds(percentile(times, 0.95))
        if export:
            row.update(time_export(api, base_url, size, projects))
    # Past a million reports the scan reads more than memory holds: once is enough.
    scan = like_scan(url, corpus, repeats=5 if size <= SIZES[-1] else 1)
    row["like_scan_p50_ms"] = milliseconds(percentile(scan, 0.50))
    row["database_mb"] = round(database_bytes(engine, url) / 2**20, 1)
    print_table([row])
    return row


def database_bytes(engine, url: str) -> int:
    if engine.dialect.name == "sqlite":
        path = Path(url.removeprefix("sqlite:///"))
        return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
    with engine.connect() as connection:
        return int(
            connection.execute(
                text(
                    "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c"
                    " JOIN pg_namespace n ON n.oid = c.relnamespace"
                    " WHERE n.nspname = current_schema() AND c.relkind = 'r'"
                )
            ).scalar()
        )


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    databases = sorted({row["database"] for row in rows})
    figure, axes = plt.subplots(1, len(databases), figsize=(6 * len(databases), 4.5), squeeze=False)
    for axis, database in zip(axes[0], databases, strict=True):
        mine = [row for row in rows if row["database"] == database]
        sizes = [row["reports"] for row in mine]
        for name in PLOTTED:
            if any(f"{name}_p50_ms" not in row for row in mine):
                continue  # --no-words: the searches untimed
            axis.plot(sizes, [row[f"{name}_p50_ms"] for row in mine], marker="o", label=name)
        axis.plot(sizes, [row["like_scan_p50_ms"] for row in mine], "k--", label="LIKE scan (SQL)")
        axis.set(
            xscale="log",
            yscale="log",
            title=f"{database}: p50 through the HTTP API",
            xlabel="reports in the database",
            ylabel="milliseconds",
        )
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", choices=DATABASES, action="append")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument(
        "--keep", type=Path, metavar="DIR", help="keep the databases filled, for --reuse DIR"
    )
    parser.add_argument(
        "--reuse", type=Path, metavar="DIR", help="time the calls on the databases --keep kept"
    )
    parser.add_argument(
        "--no-export", dest="export", action="store_false", help="leave the export untimed"
    )
    parser.add_argument(
        "--repeats", type=int, default=REPEATS, help="timed calls of each kind (after three)"
    )
    parser.add_argument(
        "--no-words",
        dest="words",
        action="store_false",
        help="leave the search index out (SQLite's FTS5, PostgreSQL's trigrams) and the"
        " searches untimed",
    )
    options = parser.parse_args()
    if options.reuse:
        kept = [options.reuse / name for name in options.database or DATABASES]
        rows = [
            reuse(workdir, options.export, options.repeats)
            for workdir in kept
            if (workdir / KEPT).exists()
        ]
        write_result("scale", rows)
        return 0
    rows = []
    for database in options.database or DATABASES:
        keep = options.keep / database if options.keep else None
        rows += run(
            database, sorted(options.sizes), keep, options.export, options.words, options.repeats
        )
    write_result("scale", rows)
    plot(rows, result_path("scale.png"))
    print_table(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
