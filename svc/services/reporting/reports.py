"""Working the reports (docs/api.md §8): get, update (recording what changed), delete.
A report's filing by the widget: svc.services.reporting.intake. Listing and search:
svc.services.listing."""

import re
import uuid
from collections import Counter

from sqlalchemy import delete as delete_rows  # `delete` is this module's verb
from sqlalchemy import or_, select, tuple_
from sqlalchemy import update as update_rows  # `update` is this module's verb

from svc import audit
from svc.errors import NotFound, field_error, not_found
from svc.extensions import db
from svc.models import (
    MEMBER,
    Project,
    Report,
    User,
)
from svc.services import listing, projects
from svc.services.grouping import duplicates
from svc.services.reporters import status_links
from svc.services.reporting import activity, report_changes, screenshots, stats
from svc.webhooks import delivery

TRACKING_ID = re.compile(r"^([A-Z][A-Z0-9]{1,9})-([1-9][0-9]{0,9})$")


# --- read ----------------------------------------------------------------------------------------


def get_for(user: User, reference: str) -> Report:
    """A report by its UUID or its tracking id (WS-12), if the user's projects include it."""
    statement = select(Report).where(listing.visible_to(user)).options(*listing.ANSWER_OPTIONS)
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
    changed = report_changes.update(report, changes, report_changes.member(user))
    if changed:
        db.session.commit()
    return report, changed


def bulk_update(user: User, references: list[str], changes: dict) -> int:
    """The same changes to many reports, all or none (docs/api.md §8.6): one reference
    the user cannot change fails the whole request. How many reports changed."""
    found = _all_workable(user, references)
    _check_assignee(changes, {report.project_id for report in found})
    source = report_changes.member(user)
    if "duplicate_of" in changes:
        changes = dict(changes)
        field = "set.duplicate_of"
        target = _target(user, changes.pop("duplicate_of"), field)
        for report in found:
            duplicates.check_target(report, target, field)
        changed = sum(bool(duplicates.merge(report, target, source, changes)) for report in found)
    else:
        changed = sum(bool(report_changes.update(report, changes, source)) for report in found)
    db.session.commit()
    return changed


def mark_duplicate(user: User, reference: str, target_reference: str) -> Report:
    """Mark a report a duplicate of another of its project (docs/api.md §8.11)."""
    report = workable_for(user, reference)
    target = _target(user, target_reference, "target")
    duplicates.check_target(report, target, "target")
    duplicates.merge(report, target, report_changes.member(user))
    db.session.commit()
    return report


def unmark_duplicate(user: User, reference: str) -> Report:
    report = workable_for(user, reference)
    duplicates.split(report, report_changes.member(user))
    db.session.commit()
    return report


def _target(user: User, reference: str, field: str) -> Report:
    """The report a duplicate is merged into, named in a body: 422 on `field` when the user
    cannot see it (the request's own report is found, its body is wrong)."""
    try:
        return get_for(user, reference)
    except NotFound:
        raise field_error(field, f"No report {reference} in your projects.") from None


def _check_assignee(changes: dict, project_ids: set[uuid.UUID]) -> None:
    assignee = changes.get("assignee_id")
    if assignee is None:
        return
    if not all(projects.has_role(project_id, assignee, MEMBER) for project_id in project_ids):
        raise field_error("assignee_id", "Not an owner or member of the report's project.")


def new_status_link(user: User, reference: str) -> str:
    """A member's new status page link (svc.services.reporters.status_links): the old one 404s from
    this commit on. One increment in the database, so that two members asking at once get
    two different links, the later one in force."""
    report = workable_for(user, reference)
    db.session.execute(
        update_rows(Report)
        .where(Report.id == report.id)
        .values(status_link_version=Report.status_link_version + 1)
        .execution_options(synchronize_session=False)
    )
    audit.record(
        audit.STATUS_LINK_RENEWED,
        user,
        ("report", report.id),
        project_id=report.project_id,
        trackingId=report.tracking_id,
    )
    db.session.commit()
    db.session.refresh(report)
    return status_links.status_url(report)


def delete(user: User, reference: str) -> None:
    report = workable_for(user, reference)
    remove_all([report], user)


def bulk_delete(user: User, references: list[str]) -> int:
    found = _all_workable(user, references)
    remove_all(found, user)
    return len(found)


def remove_all(found: list[Report], user: User | None, audit_each: bool = True) -> None:
    """Delete the reports with their screenshots (rows now, files after the commit), keeping
    each project's report count and the overview's counters; comments, activity, links to
    tracker issues and unsent notifications go with the rows, pending deliveries are
    cancelled. One audit entry per report unless the caller records one for all."""
    if not found:
        return
    for report in found if audit_each else ():
        audit.record(
            audit.REPORT_DELETED,
            user,
            ("report", report.id),
            project_id=report.project_id,
            trackingId=report.tracking_id,
        )
    # Set-based, a statement per kind of row and not per report: retention deletes thousands
    # while SQLite's one write lock is held (docs/performance.md, "Retention").
    ids = [report.id for report in found]
    stats.count_all((stats.Counted.of(report) for report in found), -1)
    for project_id, gone in Counter(report.project_id for report in found).items():
        db.session.execute(
            update_rows(Project)
            .where(Project.id == project_id)
            .values(report_count=Project.report_count - gone)
            .execution_options(synchronize_session=False)
        )
    keys = screenshots.keys_of_reports(ids)
    screenshots.forget(keys)
    delivery.forget_reports(ids)
    # The database deletes the rest with each report (ON DELETE CASCADE).
    db.session.execute(
        delete_rows(Report).where(Report.id.in_(ids)).execution_options(synchronize_session=False)
    )
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
        .options(*listing.ANSWER_OPTIONS)
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
