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
"""

import hashlib
import re
import uuid
from collections.abc import Iterable
from urllib.parse import urlsplit

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from svc import database
from svc.extensions import db
from svc.models import Report, ReportDetail, ReportSignature

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


def _failed(entry: dict) -> bool:
    status = entry.get("status")
    return status == 0 or (isinstance(status, int) and status >= 400)


def source_of(title: str, meta, console_logs, network_logs) -> str:
    """What a report's signature is made from, in words ("console: typeerror: ... @ /app.js")."""
    for entry in console_logs or ():
        if isinstance(entry, dict) and entry.get("level") == "error" and entry.get("message"):
            frame = _top_frame_file(entry.get("stack"))
            text = normalise(str(entry["message"]))
            return f"console: {text}" + (f" @ {frame}" if frame else "")
    for entry in network_logs or ():
        if isinstance(entry, dict) and _failed(entry):
            method = str(entry.get("method") or "GET").upper()[:10]
            where = path_template(str(entry.get("url") or ""))
            return f"request: {method} {where} -> {entry.get('status')}"
    page = (meta or {}).get("url") if isinstance(meta, dict) else None
    where = path_template(page) if isinstance(page, str) else "/"
    return f"page: {where} {normalise(title or '')}"


def signature_of(title: str, meta, console_logs, network_logs) -> str:
    """The report's signature: the kind of its source and a hash of it (43 characters)."""
    source = source_of(title, meta, console_logs, network_logs)
    kind = source.split(":", 1)[0][0]  # c, r or p
    return f"{kind}:{hashlib.sha256(source.encode()).hexdigest()[:40]}"


# --- stored --------------------------------------------------------------------------------------


def of_reports(report_ids: Iterable[uuid.UUID]) -> list[tuple[uuid.UUID, uuid.UUID, str]]:
    """[(report id, project id, signature)] of these reports, read and computed (the fan-out
    does it before its write transaction)."""
    ids = list(report_ids)
    if not ids:
        return []
    rows = db.session.execute(
        select(
            Report.id,
            Report.project_id,
            Report.title,
            Report.meta,
            ReportDetail.console_logs,
            ReportDetail.network_logs,
        )
        .outerjoin(ReportDetail, ReportDetail.report_id == Report.id)
        .where(Report.id.in_(ids))
    ).all()
    return [
        (report_id, project_id, signature_of(title, meta, console, network))
        for report_id, project_id, title, meta, console, network in rows
    ]


def record(signed: list[tuple[uuid.UUID, uuid.UUID, str]]) -> None:
    """Store signatures in the current transaction; a report signed already keeps its own
    (the backfill and the fan-out may meet on one)."""
    if not signed:
        return
    make = sqlite_insert if db.engine.dialect.name == "sqlite" else postgresql_insert
    db.session.execute(
        make(ReportSignature)
        .values(
            [
                {"report_id": report_id, "project_id": project_id, "signature": signature}
                for report_id, project_id, signature in signed
            ]
        )
        .on_conflict_do_nothing()
    )


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
