"""Export of the reports a list shows (docs/api.md §8.3), as CSV or NDJSON, streamed: rows
are read from the database a batch at a time and written out as they come, so memory stays
the same whatever the number of reports (measured in docs/performance.md, "The overview and
the export").

Each report is what the list answers for it (the summary: every field but the captured
arrays), the same names and values, newest first.
"""

import csv
import io
import uuid
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from flask import current_app
from sqlalchemy import func, select
from sqlalchemy.orm import aliased

from svc import audit, database, json_codec
from svc.errors import Conflict
from svc.extensions import db
from svc.models import VIEWER, Project, Report, ReportDuplicate, ReportSignature, User
from svc.models.reports import reporter_key, tracking_id_of
from svc.services import listing, projects
from svc.services.reporting import search
from svc.wire import camelcase, iso_timestamp

BATCH = 1000
FIELDS = (
    "id",
    "projectId",
    "trackingId",
    "title",
    "description",
    "severity",
    "category",
    "status",
    "reporterIdentifier",
    "screenshotUrl",
    "annotatedScreenshotUrl",
    "metadata",
    "assigneeId",
    "signature",
    "duplicateOf",
    "duplicateCount",
    "reporterCount",
    "createdAt",
    "updatedAt",
)
_COLUMNS = (
    Report.id,
    Report.project_id,
    Project.tracking_prefix,
    Report.number,
    Report.title,
    Report.description,
    Report.severity,
    Report.category,
    Report.status,
    Report.reporter_identifier,
    Report.screenshot_key,
    Report.annotated_screenshot_key,
    Report.meta,
    Report.assignee_id,
    ReportSignature.signature,
    Report.created_at,
    Report.updated_at,
)
# A cell a spreadsheet would read as a formula; titles come from anyone who loads the widget.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def reports(user: User, query: dict) -> Iterator[dict]:
    """The reports the list would show for these filters, all of them, newest first. The
    export is recorded (with its filters) before the first row is read; one of more than
    SVC_EXPORT_SYNC_LIMIT reports is refused (409): an export job writes it (export_jobs)."""
    limit = current_app.config["SVC_EXPORT_SYNC_LIMIT"]
    if count(user, query, up_to=limit + 1) > limit:
        raise Conflict(
            f"More than {limit:,} reports: too many to send in one answer. Export them with "
            "POST /api/v1/projects/{id}/exports, which writes a file to download "
            "(docs/api.md §8.3.1; `svc reports export` does it for you)"
        )
    record(user, query)
    database.begin_read_only(db.session())
    return rows(user, query)


def record(user: User, query: dict) -> None:
    """The export in the audit log, with its filters."""
    database.end_transaction(then_read_only=False)
    project_id = query.get("project_id")
    audit.record(
        audit.REPORTS_EXPORTED,
        user,
        ("reports", None),
        # Shown to that project's owners only if the exporter is in it.
        project_id=project_id
        if project_id and projects.has_role(project_id, user.id, VIEWER)
        else None,
        **{camelcase(name): _as_text(value) for name, value in query.items()},
    )
    db.session.commit()


def _as_text(value):
    return [str(item) for item in value] if isinstance(value, list | tuple) else str(value)


def _conditions(user: User, query: dict) -> list:
    conditions = [listing.visible_to(user), *listing.filter_conditions(user, query).values()]
    if "project_id" in query:
        conditions.append(Report.project_id == query["project_id"])
    searched = query.get("search", "").strip()
    if searched:
        conditions.append(search.condition(searched, db.session.get_bind().dialect.name))
    return conditions


def count(user: User, query: dict, up_to: int | None = None) -> int:
    """How many reports the export holds; counted no further than `up_to`."""
    chosen = select(Report.id).where(*_conditions(user, query))
    if up_to is not None:
        chosen = chosen.limit(up_to)
    return db.session.scalar(select(func.count()).select_from(chosen.subquery()))


def rows(user: User, query: dict) -> Iterator[dict]:
    """Each report of the export, newest first, read a batch at a time."""
    conditions = _conditions(user, query)
    # On the session's connection, not through the ORM: the ORM's row handling is a cost an
    # export pays a million times (docs/performance.md).
    rows = db.session.connection().execute(
        select(*_COLUMNS)
        .join(Project, Project.id == Report.project_id)
        .outerjoin(ReportSignature, ReportSignature.report_id == Report.id)
        .where(*conditions)
        .order_by(Report.created_at.desc(), Report.id)
        .execution_options(stream_results=True, max_row_buffer=BATCH)
    )
    groups = _groups(user, query.get("project_id"))
    for batch in _read_ahead(rows.partitions(BATCH)):
        for row in batch:
            yield _with_group(_report(row), groups)


def _read_ahead(batches: Iterable[list]) -> Iterator[list]:
    """The batches, the next one fetched by a thread of its own while the caller writes this
    one: the driver waits for the database without the GIL, so the database's work and ours
    overlap (docs/performance.md). Only that thread touches the connection meanwhile."""
    batches = iter(batches)
    with ThreadPoolExecutor(1) as reader:
        pending = reader.submit(next, batches, None)
        while (batch := pending.result()) is not None:
            pending = reader.submit(next, batches, None)
            yield batch


@dataclass
class _Groups:
    """Every duplicate of the exported projects (docs/api.md §8.11): read in one query before
    the first row, so that the export stays one streamed query however many reports it holds.
    Its memory grows with the duplicates, not with the reports."""

    merged_into: dict[uuid.UUID, tuple[uuid.UUID, int]]  # duplicate: (primary, its number)
    reporters: dict[uuid.UUID, list[str]]  # primary: its duplicates' reporter keys


def _groups(user: User, project_id) -> _Groups:
    primary = aliased(Report)
    groups = _Groups({}, {})
    for report_id, primary_id, number, key in db.session.execute(
        select(
            ReportDuplicate.report_id,
            ReportDuplicate.primary_id,
            primary.number,
            ReportDuplicate.reporter_key,
        )
        .join(primary, primary.id == ReportDuplicate.primary_id)
        .where(primary.project_id.in_(projects.ids_of(user, project_id)))
    ):
        groups.merged_into[report_id] = (primary_id, number)
        groups.reporters.setdefault(primary_id, []).append(key)
    return groups


def _with_group(item: dict, groups: _Groups) -> dict:
    if not groups.merged_into:
        return item
    report_id = uuid.UUID(item["id"])
    merged = groups.merged_into.get(report_id)
    if merged is not None:
        prefix = item["trackingId"].rsplit("-", 1)[0]  # a primary is of the same project
        item["duplicateOf"] = {
            "id": str(merged[0]),
            "trackingId": tracking_id_of(prefix, merged[1]),
        }
    others = groups.reporters.get(report_id)
    if others:
        own = reporter_key(item["reporterIdentifier"], report_id)
        item["duplicateCount"] = len(others)
        item["reporterCount"] = len({own, *others})
    return item


def _report(row) -> dict:
    """One row of _COLUMNS, unpacked in their order: cheaper than reading it by name, and an
    export does it for every report."""
    (
        report_id, project_id, tracking_prefix, number, title, description, severity, category,
        status, reporter, screenshot, annotated, meta, assignee_id, signature, created, updated,
    ) = row  # fmt: skip
    return {
        "id": str(report_id),
        "projectId": str(project_id),
        "trackingId": tracking_id_of(tracking_prefix, number),
        "title": title,
        "description": description,
        "severity": severity,
        "category": category,
        "status": status,
        "reporterIdentifier": reporter,
        "screenshotUrl": screenshot,
        "annotatedScreenshotUrl": annotated,
        "metadata": meta,
        "assigneeId": str(assignee_id) if assignee_id else None,
        "signature": signature,
        "duplicateOf": None,
        "duplicateCount": 0,
        "reporterCount": 1,
        "createdAt": iso_timestamp(created),
        "updatedAt": iso_timestamp(updated),
    }


def ndjson(items: Iterator[dict]) -> Iterator[str]:
    """One JSON object per line, as the list writes each item."""
    lines = []
    for item in items:
        lines.append(json_codec.dumps_readable(item) + "\n")
        if len(lines) == BATCH:
            yield "".join(lines)
            lines = []
    yield "".join(lines)


def csv_text(items: Iterator[dict]) -> Iterator[str]:
    """A header row, then one row per report; metadata as JSON, no value as an empty cell, and
    a cell that a spreadsheet would run as a formula led by an apostrophe."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(FIELDS)
    for count, item in enumerate(items, start=1):
        writer.writerow([_cell(name, item[name]) for name in FIELDS])
        if count % BATCH == 0:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


def _cell(name: str, value) -> str:
    if value is None:
        return ""
    if name == "duplicateOf":
        return value["trackingId"]
    if name == "metadata":
        return json_codec.dumps_readable(value)
    text = str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text
