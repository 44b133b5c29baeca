"""How well signatures and similar reports find one bug in reports varied as real pages and
reporters vary them: the labelled set of bench/grouping_set.py (20 bugs reported 8 ways, 30 bugs
met once), each report made with a seeded generator (an engine, a release, an id, the page's
noise, sometimes nothing captured), filed through the API among `--background` reports of
other bugs that carry the same kinds of noise, and signed by the fan-out.

For each report of a bug, GET /reports/{id}/similar?limit=3: a hit when a report of the same
bug is first, and when one is among the three; apart for reports whose page had noise, reports
in another language than English, short ones (a title of one or two words, or no description)
and screenshot-only ones (nothing captured). Signatures: pair precision and recall over the
labelled reports (pairs in one group that are one bug, and pairs of one bug in one group), the
recall also over the bugs with an error or a failed request; and the ten largest groups of the
whole project, each one bug or not.

    .venv/bin/python -m bench.grouping [--database sqlite|postgresql ...] [--background 2000]

Writes bench/results/grouping.json. Goals (issue 69): first ≥ 90 %, three ≥ 95 %, noise first
≥ 85 %, other languages ≥ 85 %; pair precision ≥ 0.95, recall ≥ 0.5 (≥ 0.8 with evidence);
none of the ten largest groups made of noise.
"""

import argparse
import gc
import random
import tempfile
import time
from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path

from sqlalchemy import select

from bench.common import (
    DATABASES,
    fresh_database,
    milliseconds,
    percentile,
    print_table,
    write_result,
)
from bench.grouping_set import BUGS, NOISE, ONCE
from harness.client import create_project, register
from svc import create_app
from svc.extensions import db, migrate
from svc.models import ReportSignature
from svc.services.reporting import fanout

GOALS = {"top1": 0.9, "top3": 0.95, "top1_noise": 0.85, "top1_language": 0.85,
         "pair_precision": 0.95, "pair_recall": 0.5, "pair_recall_evidence": 0.8}  # fmt: skip
ORIGIN = "https://shop.example"
ENGINES = {
    "chrome": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/131.0 Safari/537.36",
    "firefox": "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
    "safari": "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 Version/18.1"
    " Safari/605.1.15",
}
LOCALE_PREFIXES = {"de": ["de", "de-de", "de-at"], "fr": ["fr", "fr-fr"], "es": ["es"],
                   "nl": ["nl"], "ja": ["ja"]}  # fmt: skip


def _stack(engine: str, function: str, bundle: str, release: str, line: int) -> str:
    where = f"{ORIGIN}/assets/{bundle}.{release}.js:{line}:{line % 97}"
    if engine == "chrome":
        return f"    at {function} ({where})\n    at HTMLButtonElement.<anonymous> ({where})"
    return f"{function}@{where}\n@{where}"


def _page(path: str, locale: str, rng: random.Random, some_id: str) -> str:
    path = path.replace("{id}", some_id)
    if locale in LOCALE_PREFIXES and rng.random() < 0.7:
        path = f"/{rng.choice(LOCALE_PREFIXES[locale])}{path}"
    query = rng.choice(["", "", "?utm_source=mail", "?step=2"])
    return f"{ORIGIN}{path}{query}"


def _noise(rng: random.Random) -> dict:
    return rng.choice(NOISE) if rng.random() < 0.75 else {}


def _report(rng, title, description, locale, page, error, request, noise, engine) -> dict:
    """A report as the widget sends it: the page's noise first, the app's own entries after."""
    console = [{"level": "log", "message": "app ready", "timestamp": 1}]
    network = [{"method": "GET", "url": page, "status": 200, "duration": 40, "timestamp": 2}]
    moment = 10
    for message, stack in noise.get("console", []):
        console.append({"level": "error", "message": message, "timestamp": moment,
                        **({"stack": stack} if stack else {})})  # fmt: skip
        moment += 1
    for method, url, status in noise.get("network", []):
        network.append({"method": method, "url": url, "status": status, "duration": 0,
                        "timestamp": moment})  # fmt: skip
        moment += 1
    if request:
        method, url, status = request
        network.append({"method": method, "url": url, "status": status, "duration": 180,
                        "timestamp": moment + 5})  # fmt: skip
    if error:
        message, stack = error
        console.append({"level": "error", "message": message, "timestamp": moment + 6,
                        **({"stack": stack} if stack else {})})  # fmt: skip
    return {
        "title": title,
        "description": description,
        "severity": "medium",
        "category": "bug",
        "locale": locale,
        "metadata": {"url": page, "userAgent": ENGINES[engine]},
        "console_logs": console,
        "network_logs": network,
    }


def labelled(rng: random.Random) -> list[tuple[str, dict, set[str]]]:
    """(bug, report, what the report is: noise, language, short, screenshot) for every report
    of the set; a bug met once is named by its title."""
    made = []
    for name, bug in BUGS.items():
        for title, description, locale in bug.texts:
            engine = rng.choice(list(ENGINES))
            release = f"{rng.getrandbits(32):08x}"
            some_id = rng.choice(bug.ids)
            minified = rng.choice("abcdefghknrtz") + str(rng.randrange(10))
            captured = rng.random() >= 0.15  # else a screenshot and the page alone
            noise = _noise(rng) if captured else {}
            page = _page(bug.page, locale, rng, some_id)
            error = request = None
            if captured and bug.error:
                wording = bug.error[list(ENGINES).index(engine)]
                wording = wording.replace("{x}", minified).replace("{n}", some_id)
                line = rng.randrange(200, 900)
                error = (wording, _stack(engine, bug.function, bug.bundle, release, line))
            if captured and bug.request:
                method, path, status = bug.request
                request = (method, f"{ORIGIN}{path.replace('{id}', some_id)}", status)
            kinds = {
                *(["noise"] if noise else []),
                *(["language"] if locale != "en" else []),
                *(["short"] if len(title.split()) <= 2 or not description else []),
                *(["screenshot"] if not captured else []),
                *(["evidence"] if bug.error or bug.request else []),
                *(["carried"] if error or request else []),
            }
            body = _report(rng, title, description, locale, page, error, request, noise, engine)
            made.append((name, body, kinds))
    for title, description, locale, path, message, request in ONCE:
        engine = rng.choice(list(ENGINES))
        page = _page(path, locale, rng, str(rng.randrange(1, 999)))
        error = None
        if message:
            error = (message, _stack(engine, "main", "app", f"{rng.getrandbits(32):08x}", 42))
        if request:
            request = (request[0], f"{ORIGIN}{request[1].replace('{id}', '5')}", request[2])
        body = _report(rng, title, description, locale, page, error, request, _noise(rng), engine)
        made.append((title, body, {"once"}))
    return made


def background(rng: random.Random, count: int) -> list[dict]:
    """Reports of bugs met once each, in the set's own words shuffled (so that every word is
    common, as in a real project), on its pages, with the same noise as the rest: no group
    among them is one bug."""
    texts = [text for bug in BUGS.values() for text in bug.texts]
    texts += [(title, description, locale) for title, description, locale, *_ in ONCE]
    # English reports: a Japanese sentence, written without spaces, would be one "word".
    words = [
        word
        for title, description, locale in texts
        if locale != "ja"
        for word in f"{title} {description}".split()
    ]
    pages = sorted({bug.page for bug in BUGS.values()} | {row[3] for row in ONCE})
    made = []
    for _ in range(count):
        title = " ".join(rng.sample(words, 5)).capitalize()
        page = _page(rng.choice(pages), "en", rng, str(rng.randrange(1, 99999)))
        made.append(_report(rng, title, " ".join(rng.sample(words, 12)), "en", page, None, None,
                            _noise(rng), rng.choice(list(ENGINES))))  # fmt: skip
    return made


def _pairs(groups: dict[str, list[str]], bug_of: dict[str, str], among: set[str]) -> tuple:
    """(pairs in one group, of them one bug, pairs of one bug) over the reports `among`."""
    grouped = same = 0
    for members in groups.values():
        inside = [m for m in members if m in among]
        for one, other in combinations(inside, 2):
            grouped += 1
            same += bug_of[one] == bug_of[other]
    by_bug = Counter(bug_of[m] for m in among)
    return grouped, same, sum(n * (n - 1) // 2 for n in by_bug.values())


def run(database: str, background_count: int) -> dict:
    rng = random.Random(69)
    reports = labelled(rng)
    filed = [(bug, body, kinds) for bug, body, kinds in reports]
    filed += [(f"background {n}", body, {"background"})
              for n, body in enumerate(background(rng, background_count))]  # fmt: skip
    rng.shuffle(filed)
    with tempfile.TemporaryDirectory() as workdir, fresh_database(database, Path(workdir)) as url:
        settings = {"SVC_DATABASE_URL": url, "SVC_SECRET_KEY": "bench",
                    "SVC_INSTANCE_PATH": str(Path(workdir) / "instance"),
                    "SVC_RATE_LIMIT_INGEST": "off", "SVC_RATE_LIMIT_AUTH": "off"}  # fmt: skip
        app = create_app(settings)
        with app.app_context():
            migrate.upgrade()
        client = app.test_client()
        register(client)
        key = create_project(client)["apiKey"]
        bug_of, kinds_of = {}, {}
        for bug, body, kinds in filed:
            answer = client.post("/api/v1/reports", json=body, headers={"X-API-Key": key})
            assert answer.status_code == 201, answer.get_json()
            bug_of[answer.get_json()["id"]], kinds_of[answer.get_json()["id"]] = bug, kinds
        with app.app_context():
            while fanout.run():
                pass
            groups = defaultdict(list)
            for report_id, signature in db.session.execute(
                select(ReportSignature.report_id, ReportSignature.signature)
            ):
                groups[signature].append(str(report_id))
            db.engine.dispose()
        # What gunicorn's pre_fork does for its workers (svc/gunicorn_conf.py): the objects
        # loaded so far are never walked by the lookups' garbage collections.
        gc.freeze()
        hits = defaultdict(lambda: [0, 0, 0])  # kind: [reports, first, in three]
        times, misses = [], []
        bands = [[0, 0] for _ in range(5)]  # first suggestions by score, 0.2 wide: [shown, right]
        of_a_bug = [r for r, kinds in kinds_of.items() if kinds - {"background", "once"}]
        for report_id in of_a_bug:
            started = time.perf_counter()
            answer = client.get(f"/api/v1/reports/{report_id}/similar?limit=3")
            times.append(time.perf_counter() - started)
            found = [item["report"]["id"] for item in answer.get_json()["items"]]
            same = [bug_of[other] == bug_of[report_id] for other in found]
            if answer.get_json()["items"]:
                band = min(int(answer.get_json()["items"][0]["score"] * 5), 4)
                bands[band][0] += 1
                bands[band][1] += same[0]
            for kind in {"all", *kinds_of[report_id]}:
                hits[kind][0] += 1
                hits[kind][1] += bool(same[:1] and same[0])
                hits[kind][2] += any(same)
            if not (same[:1] and same[0]):
                misses.append(bug_of[report_id])
    labelled_ids = {r for r, kinds in kinds_of.items() if "background" not in kinds}
    with_evidence = {r for r in labelled_ids if "evidence" in kinds_of[r]}
    grouped, same, of_one_bug = _pairs(groups, bug_of, labelled_ids)
    _, same_evidence, of_one_bug_evidence = _pairs(groups, bug_of, with_evidence)
    carried = {r for r in labelled_ids if "carried" in kinds_of[r]}
    _, same_carried, of_one_bug_carried = _pairs(groups, bug_of, carried)
    largest = sorted(groups.values(), key=len, reverse=True)[:10]

    def share(kind: str, column: int) -> float:
        return round(hits[kind][column] / hits[kind][0], 3) if hits[kind][0] else 0.0

    return {
        "database": database,
        "reports": len(bug_of),
        "of_a_bug": len(of_a_bug),
        "top1": share("all", 1),
        "top3": share("all", 2),
        "top1_noise": share("noise", 1),
        "top1_language": share("language", 1),
        "top1_short": share("short", 1),
        "top1_screenshot": share("screenshot", 1),
        "signatures_of_labelled": len({s for s, m in groups.items() if set(m) & labelled_ids}),
        "pair_precision": round(same / grouped, 3) if grouped else 1.0,
        "pair_recall": round(same / of_one_bug, 3),
        "pair_recall_evidence": round(same_evidence / of_one_bug_evidence, 3),
        # over the reports that carry their bug's error or request (no screenshot-only ones)
        "pair_recall_carried": round(same_carried / of_one_bug_carried, 3),
        "largest_groups": [len(group) for group in largest],
        "largest_groups_of_noise": sum(len({bug_of[m] for m in group}) > 1 for group in largest),
        # How often the first suggestion is right, by its score (0-0.2, ..., 0.8-1): the score
        # should rise with it.
        "first_right_by_score": [f"{right}/{shown}" for shown, right in bands],
        "lookup_p50_ms": milliseconds(percentile(times, 0.5)),
        "lookup_p95_ms": milliseconds(percentile(times, 0.95)),
        "missed_first": dict(Counter(misses).most_common()),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", choices=DATABASES, action="append")
    parser.add_argument("--background", type=int, default=2000)
    options = parser.parse_args()
    rows = [run(database, options.background) for database in options.database or DATABASES]
    write_result("grouping", rows)
    print_table([{k: v for k, v in row.items() if k != "missed_first"} for row in rows])
    for row in rows:
        print(row["database"], "missed first:", row["missed_first"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
