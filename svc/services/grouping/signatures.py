"""A report's signature (docs/api.md §8.9): what makes forty reports of one bug one group. Made
by the fan-out from what the widget captured, never in the ingest request.

In order, the first that the report has:
1. its first console error, normalised (numbers, ids, UUIDs, hex, e-mail addresses and quoted
   values replaced), with the file of its stack's top frame;
2. its first failed request (a network error or a status of 400 and above): method, path
   template (ids become `:id`) and status;
3. its page's path template and its normalised title.

The signature is opaque (a kind and a hash, at most 64 characters): equal signatures, one
group; `source_of` says in words what it is made from, for a group's label.

Beside it each row keeps what similar reports are found by (svc.services.grouping.similar): a key
of each part a report may share with another (its first console error, its first failed request, its
page) and the stems of its words.
"""

import functools
import hashlib
import re
import threading
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlsplit

import snowballstemmer
from sqlalchemy import String, cast, desc, func, select, tuple_
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from svc import database
from svc.extensions import db
from svc.models import Report, ReportDetail, ReportSignature, User, failed_request
from svc.models.base import utcnow
from svc.services import listing

# Reports signed per transaction by the backfill (reports older than signatures).
BACKFILL_BATCH = 500

_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
# Replaced in an error's message or a title, in this order: what differs between two reports of
# one bug (an order's number, a user's address, an object's id), never what the bug is.
_NORMALISE = (
    (re.compile(r"[\w.+-]+@[\w-]+(\.[\w-]+)+"), "<email>"),
    (
        re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I),
        "<uuid>",
    ),
    (re.compile(r"\b0x[0-9a-f]+\b", re.I), "<hex>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b", re.I), "<hex>"),
    (re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`|“[^”]*”"), "<str>"),
    (re.compile(r"\b\d+(\.\d+)*\b"), "<n>"),
)
# A path segment that names one thing rather than a kind of page: a number, a UUID, a long
# hex or mixed token (a slug of words stays: /products/red-shoes is one product's page, and
# /products/12 another's, but both are /products/:id only when the slug has digits).
_ID_SEGMENT = re.compile(
    rf"^(\d+|{_UUID}|(?=[\w-]*\d)[\w-]{{16,}}|(?=[0-9a-f]*\d)[0-9a-f]{{8,}})$",
    re.I,
)
# A stack frame's address: "at f (https://x/app.js:1:2)", "f@https://x/app.js:1:2".
_FRAME_URL = re.compile(r"(https?://[^\s()]+?|/[^\s()]+?):\d+(?::\d+)?\)?\s*$", re.M)
_MAX_TEXT = 300
# The words a report is compared by: the first MAX_TERMS distinct stems of its title and the
# start of its description, common words left out.
MAX_TERMS = 40
_WORDS_READ = 2000
# Whole words of 3 to 24 letters (a longer run of letters is no word): 40 stems fit the column.
_WORD = re.compile(r"\b[^\W\d_]{3,24}\b")
# Words of any report, which say nothing of what went wrong.
_COMMON_WORDS = """
    the and for are but not you all any can had her was one our out has him his how its may new
    now old see two way who did get got let put say she too use very when what where which while
    with this that have from they will would there their then than them been were into only just
    also some more most other such each does doing done could should about after again being
    before below between both during here once same over under until further because through
    above off own why yes yet app page site please thanks thank hello help problem issue bug
"""
_COMMON = frozenset(_COMMON_WORDS.split())


def normalise(text: str) -> str:
    for pattern, replacement in _NORMALISE:
        text = pattern.sub(replacement, text)
    return " ".join(text.split())[:_MAX_TEXT].lower()


def path_template(url: str) -> str:
    """The path of an address, each id-like segment `:id`; "/" for anything else."""
    try:
        path = urlsplit(url).path if "://" in url else url.split("?", 1)[0].split("#", 1)[0]
    except ValueError:
        return "/"
    segments = [":id" if _ID_SEGMENT.match(part) else part.lower() for part in path.split("/")]
    return "/".join(segments)[:_MAX_TEXT] or "/"


def _top_frame_file(stack) -> str:
    if not isinstance(stack, str):
        return ""
    for line in stack.splitlines():
        found = _FRAME_URL.search(line.strip())
        if found:
            # A bundle's content hash changes with every release: app.3f9a2c1b.js is app.<hex>.js.
            return normalise(path_template(found[1]))
    return ""


def terms_of(title: str, description: str) -> list[str]:
    """The stems of a report's words, title first, in order, without repeats or common words."""
    words = _WORD.findall(f"{title} {description[:_WORDS_READ]}".lower())
    stems = (_stem(word) for word in dict.fromkeys(words) if word not in _COMMON)
    return list(dict.fromkeys(stem for stem in stems if len(stem) >= 3))[:MAX_TERMS]


_STEMMERS = threading.local()


@functools.lru_cache(maxsize=100_000)
def _stem(word: str) -> str:
    """A word's stem, remembered: a report's words are mostly words seen before. A stemmer per
    thread: one keeps its word while it works."""
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        stemmer = _STEMMERS.english = snowballstemmer.stemmer("english")
    return stemmer.stemWord(word)


@dataclass(frozen=True)
class Parts:
    """What a report may share with another of the same bug, each a short key or None."""

    error: str | None  # its first console error, normalised, without the frame
    request: str | None  # its first failed request: method, path template, status
    page: str | None  # its page's path template


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def parts_of(meta, console_logs, network_logs) -> Parts:
    error = request = None
    for entry in console_logs or ():
        if isinstance(entry, dict) and entry.get("level") == "error" and entry.get("message"):
            error = _key(normalise(str(entry["message"])))
            break
    for entry in network_logs or ():
        if isinstance(entry, dict) and failed_request(entry):
            method = str(entry.get("method") or "GET").upper()[:10]
            where = path_template(str(entry.get("url") or ""))
            request = _key(f"{method} {where} {entry.get('status')}")
            break
    page = (meta or {}).get("url") if isinstance(meta, dict) else None
    return Parts(error, request, _key(path_template(page)) if isinstance(page, str) else None)


def source_of(title: str, meta, console_logs, network_logs) -> str:
    """What a report's signature is made from, in words ("console: typeerror: ... @ /app.js")."""
    for entry in console_logs or ():
        if isinstance(entry, dict) and entry.get("level") == "error" and entry.get("message"):
            frame = _top_frame_file(entry.get("stack"))
            text = normalise(str(entry["message"]))
            return f"console: {text}" + (f" @ {frame}" if frame else "")
    for entry in network_logs or ():
        if isinstance(entry, dict) and failed_request(entry):
            method = str(entry.get("method") or "GET").upper()[:10]
            where = path_template(str(entry.get("url") or ""))
            return f"request: {method} {where} -> {entry.get('status')}"
    page = (meta or {}).get("url") if isinstance(meta, dict) else None
    where = path_template(page) if isinstance(page, str) else "/"
    return f"page: {where} {normalise(title or '')}"


def signature_of(title: str, meta, console_logs, network_logs) -> str:
    """The report's signature: the kind of its source and a hash of it (43 characters)."""
    return _signed(source_of(title, meta, console_logs, network_logs))


def _signed(source: str) -> str:
    kind = source.split(":", 1)[0][0]  # c, r or p
    return f"{kind}:{hashlib.sha256(source.encode()).hexdigest()[:40]}"


# --- stored --------------------------------------------------------------------------------------


def row_of(report, console_logs, network_logs) -> dict:
    """A report's report_signatures row, as a dict of its columns; `report` a Report or a row
    of its columns."""
    parts = parts_of(report.meta, console_logs, network_logs)
    source = source_of(report.title, report.meta, console_logs, network_logs)
    return {
        "report_id": report.id,
        "project_id": report.project_id,
        "created_at": report.created_at,
        "signature": _signed(source),
        "label": source[:400],
        "error_key": parts.error,
        "request_key": parts.request,
        "page_key": parts.page,
        "terms": " ".join(terms_of(report.title, report.description)),
    }


def of_reports(report_ids: Iterable[uuid.UUID]) -> list[dict]:
    """The report_signatures rows of these reports, read and computed (the fan-out does it
    before its write transaction)."""
    ids = list(report_ids)
    if not ids:
        return []
    rows = db.session.execute(
        select(
            Report.id,
            Report.project_id,
            Report.created_at,
            Report.title,
            Report.description,
            Report.meta,
            ReportDetail.console_logs,
            ReportDetail.network_logs,
        )
        .outerjoin(ReportDetail, ReportDetail.report_id == Report.id)
        .where(Report.id.in_(ids))
    ).all()
    return [row_of(row, row.console_logs, row.network_logs) for row in rows]


def record(signed: list[dict]) -> None:
    """Store signature rows in the current transaction; a report signed already keeps its own
    (the backfill and the fan-out may meet on one)."""
    if not signed:
        return
    make = sqlite_insert if db.engine.dialect.name == "sqlite" else postgresql_insert
    # One statement compiled once, its rows as parameters: a VALUES list of the batch's rows
    # was a new statement to compile at every batch.
    db.session.execute(make(ReportSignature.__table__).on_conflict_do_nothing(), signed)


def backfill(limit: int = BACKFILL_BATCH) -> int:
    """Sign reports filed before signatures were (the scheduler's sign-reports job), a short
    transaction per batch until none is left: how many were signed."""
    done = 0
    while True:
        database.begin_read_only(db.session())
        unsigned = db.session.scalars(
            select(Report.id)
            .outerjoin(ReportSignature, ReportSignature.report_id == Report.id)
            .where(ReportSignature.report_id.is_(None))
            .limit(limit)
        ).all()
        signed = of_reports(unsigned)
        db.session.commit()
        record(signed)
        db.session.commit()
        done += len(signed)
        if len(unsigned) < limit:
            return done


# --- groups --------------------------------------------------------------------------------------


def groups_for(user: User, query: dict) -> list[dict]:
    """The groups of the user's projects (docs/api.md §8.13): reports of one project with one
    signature filed in the last `days`, at least `min_count` of them, the largest first, each
    with its name in words, its distinct reporters and its newest report."""
    since = utcnow() - timedelta(days=query["days"])
    reporters = func.count(
        func.distinct(
            func.coalesce(func.lower(Report.reporter_identifier), cast(Report.id, String))
        )
    )
    rows = db.session.execute(
        select(
            ReportSignature.signature,
            ReportSignature.project_id,
            func.count().label("count"),
            reporters.label("reporters"),
            func.max(ReportSignature.created_at).label("newest"),
            func.max(ReportSignature.label).label("label"),
        )
        .join(Report, Report.id == ReportSignature.report_id)
        .where(
            ReportSignature.project_id.in_(listing.projects_of(user, query.get("project_id"))),
            ReportSignature.created_at >= since,
        )
        .group_by(ReportSignature.signature, ReportSignature.project_id)
        .having(func.count() >= query["min_count"])
        .order_by(desc("count"), desc("newest"), ReportSignature.signature)
        .limit(query["limit"])
    ).all()
    newest = {}
    if rows:
        keys = [(row.signature, row.project_id, row.newest) for row in rows]
        for signature, project_id, report in db.session.execute(
            select(ReportSignature.signature, ReportSignature.project_id, Report)
            .join(Report, Report.id == ReportSignature.report_id)
            .where(
                tuple_(
                    ReportSignature.signature,
                    ReportSignature.project_id,
                    ReportSignature.created_at,
                ).in_(keys)
            )
        ):
            newest[(signature, project_id)] = report
    return [
        {
            "signature": row.signature,
            "project_id": row.project_id,
            "label": row.label,
            "count": row.count,
            "reporter_count": row.reporters,
            "newest_at": row.newest,
            "newest": newest.get((row.signature, row.project_id)),
        }
        for row in rows
    ]
