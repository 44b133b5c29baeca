"""A report's signature (docs/api.md §8.9): what makes forty reports of one bug one group. Made
by the fan-out from what the widget captured, never in the ingest request.

Made from the report's evidence, the app's own entries alone (svc.services.grouping.evidence:
a browser extension's error, `ResizeObserver`, a third party's script or endpoint are never
evidence), in order, the first that the report has:
1. the app's last console error, in one wording whatever the engine (evidence.error_text), then
   normalised (numbers, numbers with units, ids, UUIDs, hex, e-mail addresses and quoted values
   replaced), with the file of its stack's top frame;
2. the app's last failed request (a network error or a status of 400 and above): method, path
   template (ids become `:id`, a language prefix goes) and status;
3. words alone: its page's path template and its normalised title; or, when an earlier report
   of the project on that page says very nearly the same (WORDS_ALONE), that report's
   signature, so that a bug described in words is one group rather than one per report.

The signature is opaque (a kind and a hash, at most 64 characters): equal signatures, one
group; `source_of` says in words what it is made from, for a group's label.

Beside it each row keeps what similar reports are found by (svc.services.grouping.similar): a key
of each part a report may share with another (its console error, its failed request, its page)
and the stems of its words, each in its reporter's language.

VERSION says which rules made a row: rows made by older rules are made again by the scheduler's
sign-reports job after an upgrade, oldest first, so that an install's groups change once.
"""

import functools
import hashlib
import math
import re
import threading
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlsplit

from babel.core import Locale, UnknownLocaleError
from sqlalchemy import String, cast, delete, desc, func, select, tuple_
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from svc import database
from svc.extensions import db
from svc.models import InstanceMarker, Project, Report, ReportDetail, ReportSignature, User
from svc.models.base import utcnow
from svc.services import projects
from svc.services.grouping import evidence

# The rules rows are made by: 1, the first error or request whatever its origin; 2, the app's
# own evidence, one wording per error, ids with separators, language prefixes, stems in the
# reporter's language, words-alone groups.
VERSION = 2

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
    # Letters and digits joined by - or _: an order's, a product's or a card's id.
    (re.compile(r"\b(?=[\w-]*\d)(?=[\w-]*[a-z])\w+(?:[-_]\w+)+\b", re.I), "<id>"),
    # A number glued to its unit (23000ms, 12px, 3.5MB) is a number.
    (re.compile(r"\b\d+(\.\d+)*(?=[a-zµ%]{1,3}\b)", re.I), "<n>"),
    (re.compile(r"\b\d+(\.\d+)*\b"), "<n>"),
)
# A path segment that names one thing rather than a kind of page: a number, a UUID, a long
# hex or mixed token (a slug of words stays: /products/red-shoes is one product's page, and
# /products/12 another's, but both are /products/:id only when the slug has digits).
_ID_SEGMENT = re.compile(
    rf"^(\d+|{_UUID}|(?=[\w-]*\d)[\w-]{{16,}}|(?=[0-9a-f]*\d)[0-9a-f]{{8,}}"
    # Letters and digits with separators: INV-2024-00421, ord_8f3K2, red-shoes-41 (not a
    # file's name: app.3f9a2c1b.js is the bundle, its hash normalised apart).
    r"|(?=[\w-]*\d)(?=[\w-]*[a-z_-])(?=\w*[-_])[\w-]+)$",
    re.I,
)
# A first segment that is a language tag (/de/, /fr-fr/, /pt_BR/) names the page's language,
# not the page; those that are also English words of paths stay.
_LANGUAGE_SEGMENT = re.compile(r"^[a-z]{2}(?:[-_][a-z]{2})?$", re.I)
_NOT_LANGUAGES = frozenset({"my", "id"})
# A bundle's content hash in a file's name (checkout-BQ3x9Kd2.js, app.3f9a2c1b.js).
_FILE_HASH = re.compile(r"(?<=[-.])(?=[\w]*[\dA-Z])[\w]{6,}(?=\.(?:m?js|css)$)")
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
    """The path of an address, each id-like segment `:id`, a language prefix dropped; "/" for
    anything else."""
    try:
        path = urlsplit(url).path if "://" in url else url.split("?", 1)[0].split("#", 1)[0]
    except ValueError:
        return "/"
    parts = path.split("/")
    if len(parts) > 2 and _is_language(parts[1]):
        del parts[1]
    segments = [":id" if _ID_SEGMENT.match(part) else part.lower() for part in parts]
    return "/".join(segments)[:_MAX_TEXT] or "/"


@functools.lru_cache(maxsize=1000)
def _is_language(segment: str) -> bool:
    if not _LANGUAGE_SEGMENT.match(segment) or segment.lower() in _NOT_LANGUAGES:
        return False
    try:
        Locale.parse(segment.replace("-", "_"))
    except (ValueError, UnknownLocaleError):
        return False
    return True


def _top_frame_file(stack) -> str:
    if not isinstance(stack, str):
        return ""
    for line in stack.splitlines():
        found = _FRAME_URL.search(line.strip())
        if found:
            # A bundle's content hash changes with every release: app.3f9a2c1b.js is app.<hash>.js.
            return normalise(_FILE_HASH.sub("<hash>", path_template(found[1])))
    return ""


# A language's snowball stemmer, by its ISO 639-1 code; other languages' words are kept whole.
_SNOWBALL = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "cs": "czech",
    "da": "danish", "nl": "dutch", "en": "english", "eo": "esperanto", "et": "estonian",
    "fi": "finnish", "fr": "french", "de": "german", "el": "greek", "hi": "hindi",
    "hu": "hungarian", "id": "indonesian", "ga": "irish", "it": "italian", "lt": "lithuanian",
    "ne": "nepali", "nb": "norwegian", "nn": "norwegian", "no": "norwegian", "fa": "persian",
    "pl": "polish", "pt": "portuguese", "ro": "romanian", "ru": "russian", "sr": "serbian",
    "es": "spanish", "sv": "swedish", "ta": "tamil", "tr": "turkish", "yi": "yiddish",
}  # fmt: skip
# Scripts written without spaces (Chinese, Japanese): their runs are compared by pairs of
# characters, the usual unit of search in them, rather than as one long word.
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def terms_of(title: str, description: str, locale: str | None = "en") -> list[str]:
    """The stems of a report's words in its reporter's language, title first, in order,
    without repeats or common words; runs of Chinese or Japanese as pairs of characters."""
    text = f"{title} {description[:_WORDS_READ]}".lower()
    language = _SNOWBALL.get(str(locale or "en").split("-")[0].split("_")[0].lower())
    pairs = [run[i : i + 2] for run in _UNSPACED.findall(text) for i in range(max(len(run) - 1, 1))]
    words = _WORD.findall(_UNSPACED.sub(" ", text))
    stems = (_stem(word, language) for word in dict.fromkeys(words) if word not in _COMMON)
    kept = [stem for stem in stems if len(stem) >= 3]
    return list(dict.fromkeys([*kept, *pairs]))[:MAX_TERMS]


_STEMMERS = threading.local()


@functools.lru_cache(maxsize=100_000)
def _stem(word: str, language: str | None) -> str:
    """A word's stem, remembered: a report's words are mostly words seen before. A stemmer per
    thread and language: one keeps its word while it works."""
    if language is None:
        return word
    stemmer = getattr(_STEMMERS, language, None)
    if stemmer is None:
        # Imported on first use, not by every process that loads svc: a web worker needs it
        # only for a report's similar ones (docs/performance.md, "Memory").
        import snowballstemmer

        stemmer = snowballstemmer.stemmer(language)
        setattr(_STEMMERS, language, stemmer)
    return stemmer.stemWord(word)


@dataclass(frozen=True)
class Parts:
    """What a report may share with another of the same bug, each a short key or None."""

    error: str | None  # the app's console error, normalised, without the frame
    request: str | None  # the app's failed request: method, path template, status
    page: str | None  # its page's path template


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Evidence:
    """What a report's signature and similar reports rest on, read once from its logs."""

    error: str | None  # the app's console error: its message in one wording, normalised
    frame: str  # the file of that error's top frame ("" when unknown)
    request: str | None  # the app's failed request: "METHOD /path/:id -> status"
    page: str | None  # the page's path template


def evidence_entries(meta, console_logs, network_logs, allowed_origins=()) -> tuple:
    """The report's own console error and failed request as captured (each a log entry or
    None), and its page's address."""
    page = meta.get("url") if isinstance(meta, dict) else None
    page = page if isinstance(page, str) else None
    origins = evidence.app_origins(page, allowed_origins)
    return (
        evidence.app_error(console_logs, origins),
        evidence.app_request(network_logs, origins),
        page,
    )


def evidence_of(meta, console_logs, network_logs, allowed_origins=()) -> Evidence:
    error, request, page = evidence_entries(meta, console_logs, network_logs, allowed_origins)
    return Evidence(
        error=error_key(error) if error else None,
        frame=_top_frame_file(error.get("stack")) if error else "",
        request=request_key(request) if request else None,
        page=path_template(page) if page is not None else None,
    )


def error_key(entry: dict) -> str:
    """A console error as signatures compare it: one wording, normalised."""
    return normalise(evidence.error_text(str(entry["message"])))


def request_key(entry: dict) -> str:
    """A failed request as signatures compare it: "METHOD /path/:id -> status"."""
    method = str(entry.get("method") or "GET").upper()[:10]
    return f"{method} {path_template(str(entry.get('url') or ''))} -> {entry.get('status')}"


def recurred(found: Evidence, console_logs, network_logs, origins: frozenset[str]) -> list[str]:
    """What of a report's evidence (`found`) is among other logs (a reproduction's), in the
    words of `source_of`: the same error normalised as signatures are, or the same request."""
    seen = []
    if found.error and any(
        error_key(entry) == found.error for entry in evidence.app_errors(console_logs, origins)
    ):
        seen.append(f"console: {found.error}")
    if found.request and any(
        request_key(entry) == found.request
        for entry in evidence.app_requests(network_logs, origins)
    ):
        seen.append(f"request: {found.request}")
    return seen


def variable_spans(text: str) -> list[tuple[int, int]]:
    """Where `normalise` would replace something in `text` (numbers, ids, quoted values...),
    as (start, end), in order and apart: what may differ when the same error comes again."""
    spans = sorted(found.span() for pattern, _ in _NORMALISE for found in pattern.finditer(text))
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def parts_of(found: Evidence) -> Parts:
    return Parts(
        _key(found.error) if found.error else None,
        _key(found.request) if found.request else None,
        _key(found.page) if found.page is not None else None,
    )


def source_of(title: str, found: Evidence) -> str:
    """What a report's signature is made from, in words ("console: typeerror: ... @ /app.js")."""
    if found.error:
        return f"console: {found.error}" + (f" @ {found.frame}" if found.frame else "")
    if found.request:
        return f"request: {found.request}"
    return f"page: {found.page or '/'} {normalise(title or '')}"


def signature_of(title: str, meta, console_logs, network_logs, allowed_origins=()) -> str:
    """The report's signature from its own evidence: the kind of its source and a hash of it
    (43 characters). A report of words alone may yet join an earlier one's (`of_reports`)."""
    found = evidence_of(meta, console_logs, network_logs, allowed_origins)
    return _signed(source_of(title, found))


def _signed(source: str) -> str:
    kind = source.split(":", 1)[0][0]  # c, r or p
    return f"{kind}:{hashlib.sha256(source.encode()).hexdigest()[:40]}"


# --- stored --------------------------------------------------------------------------------------


def row_of(report, console_logs, network_logs, allowed_origins=(), locale=None) -> dict:
    """A report's report_signatures row, as a dict of its columns; `report` a Report or a row
    of its columns; `locale` the reporter's language."""
    found = evidence_of(report.meta, console_logs, network_logs, allowed_origins)
    parts = parts_of(found)
    source = source_of(report.title, found)
    return {
        "report_id": report.id,
        "project_id": report.project_id,
        "created_at": report.created_at,
        "signature": _signed(source),
        "label": source[:400],
        "error_key": parts.error,
        "request_key": parts.request,
        "page_key": parts.page,
        "terms": " ".join(terms_of(report.title, report.description, locale)),
        "version": VERSION,
    }


def of_reports(report_ids: Iterable[uuid.UUID]) -> list[dict]:
    """The report_signatures rows of these reports, read and computed, oldest first (the
    fan-out does it before its write transaction; the re-signing job for older rules')."""
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
            ReportDetail.locale,
            ReportDetail.console_logs,
            ReportDetail.network_logs,
            Project.allowed_origins,
        )
        .join(Project, Project.id == Report.project_id)
        .outerjoin(ReportDetail, ReportDetail.report_id == Report.id)
        .where(Report.id.in_(ids))
        .order_by(Report.created_at, Report.id)
    ).all()
    made = [row_of(row, row.console_logs, row.network_logs, row.allowed_origins) for row in rows]
    _join_words_alone([row for row in made if row["signature"].startswith("p:")])
    return made


# A report of words alone joins the group of an earlier report on its page whose words are
# this alike (the cosine of their sets of stems), sharing at least WORDS_SHARED stems: on
# bench.grouping's set no two bugs' reports came within it (docs/performance.md).
WORDS_ALONE = 0.7
WORDS_SHARED = 3
# How many of a page's newest reports a new one of words alone is compared with.
WORDS_ALONE_WINDOW = 200


def _join_words_alone(rows: list[dict]) -> None:
    """Give each row of words alone the signature (and so the name) of the most alike earlier
    report on its page, when one is alike enough; rows are in the order filed."""
    batch = [row["report_id"] for row in rows]
    earlier: dict[tuple, list[tuple[str, str, set[str]]]] = {}
    for row in rows:
        place = (row["project_id"], row["page_key"])
        if place not in earlier:
            earlier[place] = [
                (signature, label, set(terms.split()))
                for signature, label, terms in db.session.execute(
                    select(ReportSignature.signature, ReportSignature.label, ReportSignature.terms)
                    .where(
                        ReportSignature.project_id == row["project_id"],
                        ReportSignature.page_key == row["page_key"],
                        ReportSignature.version == VERSION,
                        ReportSignature.created_at <= row["created_at"],
                        ReportSignature.report_id.not_in(batch),
                    )
                    .order_by(ReportSignature.created_at.desc())
                    .limit(WORDS_ALONE_WINDOW)
                )
            ]
        mine = set(row["terms"].split())
        best, best_score = None, WORDS_ALONE
        for signature, label, theirs in earlier[place]:
            shared = len(mine & theirs)
            if shared >= WORDS_SHARED:
                score = shared / math.sqrt(len(mine) * len(theirs))
                if score >= best_score:
                    best, best_score = (signature, label), score
        if best is not None:
            row["signature"], row["label"] = best
        earlier[place].insert(0, (row["signature"], row["label"], mine))


def record(signed: list[dict]) -> None:
    """Store signature rows in the current transaction; a report signed already keeps its own
    (the backfill and the fan-out may meet on one)."""
    if not signed:
        return
    make = sqlite_insert if db.engine.dialect.name == "sqlite" else postgresql_insert
    # One statement compiled once, its rows as parameters: a VALUES list of the batch's rows
    # was a new statement to compile at every batch.
    db.session.execute(make(ReportSignature.__table__).on_conflict_do_nothing(), signed)


# Set once no report filed before signatures were is left unsigned: every later report is
# signed by the fan-out, so the search over every report (3 s at 10,000,000) is never made again.
ALL_SIGNED = "reports-signed"


def backfill(limit: int = BACKFILL_BATCH) -> int:
    """Sign reports filed before signatures were, then make again the rows older rules made
    (the scheduler's sign-reports job), oldest first, a short transaction per batch until none
    is left: how many were signed. Resumable: each batch is done when its commit is."""
    done = 0
    all_signed = db.session.get(InstanceMarker, ALL_SIGNED) is not None
    db.session.commit()
    while not all_signed:
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
            # Reports whose event waits are unsigned for a second; the fan-out signs them.
            db.session.merge(InstanceMarker(name=ALL_SIGNED, at=utcnow()))
            db.session.commit()
            break
    while True:
        database.begin_read_only(db.session())
        outdated = db.session.scalars(
            select(ReportSignature.report_id)
            .where(ReportSignature.version < VERSION)
            .order_by(ReportSignature.version, ReportSignature.created_at)
            .limit(limit)
        ).all()
        made = of_reports(outdated)
        db.session.commit()
        if made:
            db.session.execute(
                delete(ReportSignature).where(
                    ReportSignature.report_id.in_([row["report_id"] for row in made]),
                    ReportSignature.version < VERSION,
                )
            )
            record(made)
            db.session.commit()
        done += len(made)
        if len(outdated) < limit:
            return done


def outdated() -> int:
    """How many signature rows older rules made, not yet made again (/admin/health)."""
    return db.session.scalar(
        select(func.count()).select_from(ReportSignature).where(ReportSignature.version < VERSION)
    )


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
            ReportSignature.project_id.in_(projects.ids_of(user, query.get("project_id"))),
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
