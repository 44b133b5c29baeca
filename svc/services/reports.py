"""Reports (contract section 6): create with tracking numbers and idempotency, get, update
(recording what changed), delete. Listing and search: svc.services.listing."""

import hashlib
import json
import re
import uuid
from datetime import timedelta

from sqlalchemy import bindparam, insert, or_, select, tuple_
from sqlalchemy import update as update_rows  # `update` is this module's verb
from sqlalchemy.exc import IntegrityError

from svc.config import setting
from svc.errors import Invalid, field_error, not_found
from svc.extensions import db
from svc.models import (
    MEMBER,
    SEVERITY_RANK,
    IdempotencyKey,
    Project,
    Report,
    ReportDetail,
    Screenshot,
    User,
)
from svc.models.activity import CHANGED
from svc.models.base import utcnow
from svc.services import (
    activity,
    listing,
    notifications,
    projects,
    redaction,
    screenshots,
    stats,
)
from svc.webhooks import delivery, payloads
from svc.wire import camelcase

IDEMPOTENCY_WINDOW = timedelta(hours=24)
IDEMPOTENCY_HEADER = "Idempotency-Key"
TRACKING_ID = re.compile(r"^([A-Z][A-Z0-9]{1,9})-([1-9][0-9]{0,9})$")
_SCREENSHOT_FIELDS = (
    ("screenshot_url", "screenshot_key"),
    ("annotated_screenshot_url", "annotated_screenshot_key"),
)


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
    update_rows(_projects)
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
    notifications.report_created(report)
    stats.count(stats.Counted.of(report), 1)
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
            update_rows(Screenshot)
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
        raise Invalid(errors)


# --- read ----------------------------------------------------------------------------------------


def get_for(user: User, reference: str) -> Report:
    """A report by its UUID or its tracking id (WS-12), if the user's projects include it."""
    statement = select(Report).where(listing.visible_to(user))
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


def history(user: User, reference: str) -> list[dict]:
    return activity.history(get_for(user, reference))


# --- change --------------------------------------------------------------------------------------


def workable_for(user: User, reference: str) -> Report:
    """The report, if the user may change it: a member or owner of its project (403 for a
    viewer, who may read it)."""
    report = get_for(user, reference)
    projects.access(user, report.project_id, at_least=MEMBER)
    return report


def update(user: User, reference: str, changes: dict) -> tuple[Report, dict]:
    """Apply a PATCH; returns the report and what changed, as
    {"<camelCaseField>": {"from": old, "to": new}} (empty when nothing did)."""
    report = workable_for(user, reference)
    _check_assignee(changes, {report.project_id})
    changed = _apply(report, user, changes)
    if changed:
        db.session.commit()
    return report, changed


def bulk_update(user: User, references: list[str], changes: dict) -> int:
    """The same changes to many reports, all or none (contract section 13): one reference
    the user cannot change fails the whole request. How many reports changed."""
    found = _all_workable(user, references)
    _check_assignee(changes, {report.project_id for report in found})
    changed = sum(bool(_apply(report, user, changes)) for report in found)
    db.session.commit()
    return changed


def _check_assignee(changes: dict, project_ids: set[uuid.UUID]) -> None:
    assignee = changes.get("assignee_id")
    if assignee is None:
        return
    if not all(projects.has_role(project_id, assignee, MEMBER) for project_id in project_ids):
        raise field_error("assignee_id", "Not an owner or member of the report's project.")


def _apply(report: Report, user: User, changes: dict) -> dict:
    """Set the fields that differ, with the change's event, activity, notification and
    counters."""
    before = stats.Counted.of(report)
    changed = {}
    for field, value in changes.items():
        old = getattr(report, field)
        if old != value:
            changed[camelcase(field)] = {"from": old, "to": value}
            setattr(report, field, value)
    if changed:
        report.severity_rank = SEVERITY_RANK[report.severity]
        report.updated_at = utcnow()
        stats.recount(report, before)
        delivery.record(report.project, payloads.UPDATED, report, changed)
        activity.record(report, user, CHANGED, changed)
        if "assigneeId" in changed:
            notifications.report_assigned(report, report.assignee_id, user)
    return changed


def delete(user: User, reference: str) -> None:
    report = workable_for(user, reference)
    _remove_all([report])


def bulk_delete(user: User, references: list[str]) -> int:
    found = _all_workable(user, references)
    _remove_all(found)
    return len(found)


def _remove_all(found: list[Report]) -> None:
    """Delete the reports with their screenshots (rows now, files after the commit), keeping
    each project's report count."""
    keys = []
    for report in found:
        stats.count(stats.Counted.of(report), -1)
        report_keys = screenshots.keys_of_report(report.id)
        db.session.delete(report)
        db.session.execute(
            update_rows(Project)
            .where(Project.id == report.project_id)
            .values(report_count=Project.report_count - 1)
            .execution_options(synchronize_session=False)
        )
        screenshots.forget(report_keys)
        delivery.forget_report(report.id)
        keys += report_keys
    db.session.commit()
    screenshots.remove_files(keys)


def _all_workable(user: User, references: list[str]) -> list[Report]:
    """Every report named, by UUID or tracking id, in one query: 404 naming the first the user
    cannot see, 403 when any is in a project where the user is a viewer."""
    uuids, numbers, wanted = set(), set(), {}
    for reference in references:
        match = TRACKING_ID.match(reference.upper())
        if match:
            key = (match[1], int(match[2]))
            numbers.add(key)
        else:
            try:
                key = uuid.UUID(reference)
            except ValueError:
                raise not_found(f"Report {reference} not found") from None
            uuids.add(key)
        wanted.setdefault(key, reference)
    statement = (
        select(Report)
        .join(Project, Project.id == Report.project_id)
        .where(
            listing.visible_to(user),
            or_(
                Report.id.in_(uuids),
                tuple_(Project.tracking_prefix, Report.number).in_(numbers),
            ),
        )
    )
    found = {}
    for report in db.session.scalars(statement):
        found[report.id] = found[(report.project.tracking_prefix, report.number)] = report
    for key, reference in wanted.items():
        if key not in found:
            raise not_found(f"Report {reference} not found")
    reports = list({report.id: report for report in found.values()}.values())
    for project_id in {report.project_id for report in reports}:
        projects.access(user, project_id, at_least=MEMBER)
    return reports
