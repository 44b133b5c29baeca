"""Reports (contract section 6): create with tracking numbers and idempotency, list, get,
update (recording what changed), delete."""

import hashlib
import json
import re
import uuid
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import and_, bindparam, func, insert, or_, select, union_all, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import selectinload

from svc.config import setting
from svc.errors import APIError, field_error, not_found
from svc.extensions import db
from svc.models import (
    SEVERITY_RANK,
    IdempotencyKey,
    Membership,
    Project,
    Report,
    ReportDetail,
    Screenshot,
    User,
)
from svc.models.base import utcnow
from svc.schemas.base import camelcase
from svc.services import redaction, screenshots, search
from svc.webhooks import delivery, payloads

IDEMPOTENCY_WINDOW = timedelta(hours=24)
IDEMPOTENCY_HEADER = "Idempotency-Key"
TRACKING_ID = re.compile(r"^([A-Z][A-Z0-9]{1,9})-([1-9][0-9]{0,9})$")
_SCREENSHOT_FIELDS = (
    ("screenshot_url", "screenshot_key"),
    ("annotated_screenshot_url", "annotated_screenshot_key"),
)
_SORT_COLUMNS = {
    "created_at": Report.created_at,
    "updated_at": Report.updated_at,
    "severity": Report.severity_rank,
}
# The sorts that an index holds whole (see Report), so that the database can read them in order.
_INDEXED_SORTS = frozenset({"-created_at", "-updated_at", "-severity"})


@dataclass(frozen=True)
class Page:
    items: list[Report]
    total: int
    page: int
    page_size: int


# --- create --------------------------------------------------------------------------------------


def fingerprint(data: dict) -> str:
    """The same report fields in any key order give the same fingerprint."""
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _earlier_answer(project: Project, key: str, body_hash: str) -> Report | None:
    """The report a previous request with this Idempotency-Key created, if still remembered."""
    remembered = db.session.get(IdempotencyKey, (project.id, key))
    if remembered is None:
        return None
    if remembered.created_at <= utcnow() - IDEMPOTENCY_WINDOW:
        db.session.delete(remembered)  # expired: the key starts afresh
        db.session.flush()
        return None
    if remembered.body_hash != body_hash:
        raise field_error(
            IDEMPOTENCY_HEADER, "This key was already used with a different request body."
        )
    return db.session.get(Report, remembered.report_id)


# Statements of the create path, built once. Core statements on the tables: the ORM's unit of
# work and bulk-update machinery cost more than the database's own work here (docs/performance.md).
_projects, _reports, _report_details = Project.__table__, Report.__table__, ReportDetail.__table__
# One conditional increment in the report's own transaction: it locks the project's row until
# commit (PostgreSQL) or runs under the write lock (SQLite), and rolls back with the report.
_NEXT_NUMBER = (
    update(_projects)
    .where(_projects.c.id == bindparam("project_id"))
    .values(
        last_report_number=_projects.c.last_report_number + 1,
        report_count=_projects.c.report_count + 1,
    )
    .returning(_projects.c.last_report_number)
)
_INSERT_REPORT = insert(_reports)
_INSERT_DETAIL = insert(_report_details)


def _new_report(project: Project, data: dict) -> Report:
    """The report to store, not yet numbered. It stays out of the session: `_store` writes it."""
    now = utcnow()
    report = Report(
        id=uuid.uuid4(),
        project_id=project.id,
        title=data["title"],
        description=data["description"],
        severity=data["severity"],
        severity_rank=SEVERITY_RANK[data["severity"]],
        category=data["category"],
        status="new",
        reporter_identifier=data["reporter_identifier"],
        screenshot_key=data["screenshot_url"],
        annotated_screenshot_key=data["annotated_screenshot_url"],
        meta=data["metadata"],
        assignee_id=None,
        created_at=now,
        updated_at=now,
    )
    report.project = project
    report.detail = ReportDetail(
        report_id=report.id,
        console_logs=data["console_logs"],
        network_logs=data["network_logs"],
        user_actions=data["user_actions"],
    )
    return report


def _row(instance) -> dict:
    """A model instance's column values, keyed as its table's INSERT takes them."""
    return {
        attribute.columns[0].key: getattr(instance, attribute.key)
        for attribute in type(instance).__mapper__.column_attrs
    }


def _store(report: Report) -> None:
    """Number the report and write it: the part of a creation that runs one at a time (the
    project's row lock, or SQLite's write lock), so everything else is prepared before."""
    report.number = db.session.execute(_NEXT_NUMBER, {"project_id": report.project_id}).scalar_one()
    db.session.execute(_INSERT_REPORT, _row(report))
    db.session.execute(_INSERT_DETAIL, _row(report.detail))


def create(project: Project, data: dict, idempotency_key: str | None = None) -> tuple[Report, bool]:
    """Store a report; (report, True) when created, (earlier report, False) for a repeat of an
    Idempotency-Key."""
    body_hash = None
    if idempotency_key is not None:
        body_hash = fingerprint(data)  # only here: it serialises the whole body
        earlier = _earlier_answer(project, idempotency_key, body_hash)
        if earlier is not None:
            return earlier, False
    data = redaction.redact_report(data, setting("SVC_REDACT_NAMES"))
    report = _new_report(project, data)
    _store(report)
    _attach_screenshots(project, report)
    delivery.record(project, payloads.CREATED, report)
    if idempotency_key is not None:
        db.session.add(
            IdempotencyKey(
                project_id=project.id, key=idempotency_key, body_hash=body_hash, report_id=report.id
            )
        )
    try:
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        if idempotency_key is None:
            raise
        # A concurrent request with the same key won; answer with its report.
        earlier = _earlier_answer(project, idempotency_key, body_hash)
        if earlier is None:
            raise
        return earlier, False
    return report, True


def _attach_screenshots(project: Project, report: Report) -> None:
    """Give the report its screenshots: each must be an unused upload of the same project."""
    errors = {}
    for field, attribute in _SCREENSHOT_FIELDS:
        key = getattr(report, attribute)
        if key is None:
            continue
        claimed = db.session.execute(
            update(Screenshot)
            .where(
                Screenshot.key == key,
                Screenshot.project_id == project.id,
                or_(Screenshot.report_id.is_(None), Screenshot.report_id == report.id),
            )
            .values(report_id=report.id)
            .execution_options(synchronize_session=False)
        ).rowcount
        if not claimed:
            errors[field] = [
                "Not a key returned by this project's screenshot upload, "
                "or already used by another report."
            ]
    if errors:
        db.session.rollback()
        raise APIError(422, "Validation failed", errors=errors)


# --- read ----------------------------------------------------------------------------------------


def _visible_to(user: User):
    return Report.project_id.in_(_projects_of(user, None))


def list_for(user: User, query: dict) -> Page:
    conditions = [_visible_to(user)]  # those that the projects' report counts answer
    if "project_id" in query:
        conditions.append(Report.project_id == query["project_id"])
    report_conditions = []  # those that the projects' report counts cannot answer
    for name in ("status", "category", "assignee_id"):
        if name in query:
            report_conditions.append(getattr(Report, name) == query[name])
    if "severity" in query:
        report_conditions.append(Report.severity_rank == SEVERITY_RANK[query["severity"]])
    searched = query.get("search", "").strip()
    dialect = db.session.get_bind().dialect.name
    matching = []
    if searched:
        search.steer_planner(db.session, searched, dialect)
        matching.append(search.condition(searched, dialect))

    filters = conditions + report_conditions
    projects = _projects_of(user, query.get("project_id"))
    if not (report_conditions or matching):
        total = _report_count(projects)
    else:
        counted = None
        if not report_conditions:
            counted = search.count_in_projects(searched, dialect, projects)
        if counted is None:
            counted = select(func.count()).select_from(Report).where(*filters, *matching)
        total = db.session.scalar(counted)
    sort = query["sort"]
    page_end = query["page"] * query["page_size"]
    if searched and sort in _INDEXED_SORTS:
        walk = _walks_sort_index(dialect, total, page_end)
        search.steer_page(db.session, dialect, walk)
        if walk:
            matching = [search.condition(searched, dialect, lead=False)]
    column = _SORT_COLUMNS[sort.lstrip("-")]
    order = [column.desc() if sort.startswith("-") else column.asc()]
    # Ties: newest first, then id, so that pages are stable. No term twice: the ORDER BY must
    # be exactly the columns of an index (see Report) for the database to walk it.
    if column is not Report.created_at:
        order.append(Report.created_at.desc())
    order.append(Report.id)
    if sort == "severity" and not matching:
        chosen = Report.id.in_(_least_severe_first(filters, order[1:], page_end))
    else:
        chosen = and_(*filters, *matching)
    items = db.session.scalars(
        select(Report)
        # Projects in a second query: joined to each report, they led SQLite's planner to fetch
        # every report of the user's projects and sort them, instead of walking the sort index.
        .options(selectinload(Report.project))
        .where(chosen)
        .order_by(*order)
        .limit(query["page_size"])
        .offset(page_end - query["page_size"])
    ).all()
    return Page(items=list(items), total=total, page=query["page"], page_size=query["page_size"])


def _least_severe_first(filters: list, ties: list, page_end: int):
    """The ids of the first page_end reports least severe first (ties in the order given): the
    first page_end of each severity, in the order the sort index holds them. No index holds
    that order whole (its ties run the other way), and both databases sorted every report of
    the least severe kind to find a page: 160 ms at 100,000 reports on SQLite."""
    arms = [
        select(Report.id)
        .where(*filters, Report.severity_rank == rank)
        .order_by(*ties)
        .limit(page_end)
        .subquery()
        for rank in SEVERITY_RANK.values()
    ]
    return union_all(*(select(arm.c.id) for arm in arms))


def _walks_sort_index(dialect: str, matches: int, page_end: int) -> bool:
    """Whether the page of a search should be read by walking the index of its sort: neither
    planner can tell how many reports a search matches (SQLite always starts from the FTS
    matches; PostgreSQL guesses), and the service has just counted them."""
    reports = db.session.scalar(select(func.coalesce(func.sum(Project.report_count), 0)))
    return search.walk_sort_index(dialect, matches, page_end, reports)


def _projects_of(user: User, project_id: uuid.UUID | None):
    """The ids of the user's projects, or of the one given if it is one of them."""
    projects = select(Membership.project_id).where(Membership.user_id == user.id)
    if project_id is not None:
        projects = projects.where(Membership.project_id == project_id)
    return projects


def _report_count(projects) -> int:
    """How many reports the given projects hold, from their counters rather than a count over
    every report."""
    return db.session.scalar(
        select(func.coalesce(func.sum(Project.report_count), 0)).where(Project.id.in_(projects))
    )


def get_for(user: User, reference: str) -> Report:
    """A report by its UUID or its tracking id (WS-12), if the user's projects include it."""
    statement = select(Report).where(_visible_to(user))
    match = TRACKING_ID.match(reference.upper())
    if match:
        statement = statement.join(Project, Project.id == Report.project_id).where(
            Project.tracking_prefix == match[1], Report.number == int(match[2])
        )
    else:
        try:
            statement = statement.where(Report.id == uuid.UUID(reference))
        except ValueError:
            raise not_found("Report not found") from None
    report = db.session.scalar(statement)
    if report is None:
        raise not_found("Report not found")
    return report


# --- change --------------------------------------------------------------------------------------


def update_report(user: User, reference: str, changes: dict) -> tuple[Report, dict]:
    """Apply a PATCH; returns the report and what changed, as
    {"<camelCaseField>": {"from": old, "to": new}} (empty when nothing did)."""
    report = get_for(user, reference)
    assignee = changes.get("assignee_id")
    if assignee is not None and db.session.get(Membership, (report.project_id, assignee)) is None:
        raise field_error("assignee_id", "Not the owner or a member of the report's project.")
    changed = {}
    for field, value in changes.items():
        old = getattr(report, field)
        if old != value:
            changed[camelcase(field)] = {"from": old, "to": value}
            setattr(report, field, value)
    if changed:
        report.severity_rank = SEVERITY_RANK[report.severity]
        report.updated_at = utcnow()
        delivery.record(report.project, payloads.UPDATED, report, changed)
        db.session.commit()
    return report, changed


def delete_report(user: User, reference: str) -> None:
    report = get_for(user, reference)
    keys = screenshots.keys_of_report(report.id)
    db.session.delete(report)
    db.session.execute(
        update(Project)
        .where(Project.id == report.project_id)
        .values(report_count=Project.report_count - 1)
        .execution_options(synchronize_session=False)
    )
    screenshots.forget(keys)
    delivery.forget_report(report.id)
    db.session.commit()
    screenshots.remove_files(keys)
