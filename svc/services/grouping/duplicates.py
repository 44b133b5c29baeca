"""Duplicates (docs/api.md §8.11): a report marked a duplicate of another of its project, its
primary. The duplicate closes and points at the primary; the primary counts its duplicates and
their distinct reporters; the duplicate's reporter hears what the primary's hears (its
resolution, its public replies); undoing it opens the duplicate again.

A primary is never itself a duplicate: marking a primary a duplicate moves its own duplicates
to the new primary, so groups never chain and never loop. Each report that changes gets one
report.updated (report_changes.update, with `duplicateOf` among its changes); the primary's
activity says which report joined or left it.
"""

from sqlalchemy import select

from svc.errors import Conflict, field_error
from svc.extensions import db
from svc.models import Report, ReportDuplicate
from svc.models.activity import DUPLICATE
from svc.models.base import utcnow
from svc.models.reports import reporter_key
from svc.services import listing
from svc.services.reporting import activity, report_changes

# A duplicate's status; undoing it sets UNDONE.
MERGED, UNDONE = "closed", "new"


def check_target(report: Report, target: Report, field: str) -> None:
    """422 on `field` unless `target` can be the report's primary."""
    if target.id == report.id:
        raise field_error(field, "A report cannot be a duplicate of itself.")
    if target.project_id != report.project_id:
        raise field_error(field, "Not a report of the same project.")
    primary = target.duplicate_of
    if primary is not None and primary["id"] == report.id:
        raise field_error(
            field, f"{target.tracking_id} is a duplicate of {report.tracking_id}: undo that first."
        )
    if primary is not None:
        raise field_error(
            field,
            f"{target.tracking_id} is itself a duplicate of {primary['tracking_id']}: "
            f"mark it a duplicate of {primary['tracking_id']}.",
        )


def merge(report: Report, target: Report, source, changes: dict | None = None) -> dict:
    """Make `report` a duplicate of `target` (checked by check_target), with any other
    `changes` of the same request: what changed, as report_changes.update says it. The
    report's own duplicates move to `target`."""
    old = report.duplicate_of
    if old is not None and old["id"] == target.id:
        return report_changes.update(report, changes or {}, source)
    row = report.duplicate_row
    if row is None:
        db.session.add(
            ReportDuplicate(
                report_id=report.id,
                primary_id=target.id,
                reporter_key=reporter_key(report.reporter_identifier, report.id),
                created_at=utcnow(),
            )
        )
    else:
        _joined_or_left(row.primary, report, source, joined=False)
        row.primary_id = target.id
    for moved in report.duplicate_rows:
        moved.primary_id = target.id
    db.session.flush()
    moved_reports = [moved.report_id for moved in report.duplicate_rows]
    for touched in (row, *report.duplicate_rows):
        if touched is not None:  # pointed elsewhere now: read their primary again
            db.session.expire(touched, ["primary"])
    _reload(report, target)
    changed = report_changes.update(
        report,
        {**(changes or {}), "status": MERGED},
        source,
        also={"duplicateOf": {"from": old and old["tracking_id"], "to": target.tracking_id}},
    )
    _joined_or_left(target, report, source, joined=True)
    for moved in db.session.scalars(
        select(Report).where(Report.id.in_(moved_reports)).options(*listing.ANSWER_OPTIONS)
    ):
        report_changes.update(
            moved,
            {},
            source,
            also={"duplicateOf": {"from": report.tracking_id, "to": target.tracking_id}},
        )
        _joined_or_left(target, moved, source, joined=True)
    return changed


def split(report: Report, source) -> dict:
    """Undo: the report is no duplicate any more and is open again (`new`)."""
    row = report.duplicate_row
    if row is None:
        raise Conflict(f"{report.tracking_id} is not a duplicate")
    primary = row.primary
    db.session.delete(row)
    db.session.flush()
    _reload(report, primary)
    changed = report_changes.update(
        report,
        {"status": UNDONE},
        source,
        also={"duplicateOf": {"from": primary.tracking_id, "to": None}},
    )
    _joined_or_left(primary, report, source, joined=False)
    return changed


def _joined_or_left(primary: Report, duplicate: Report, source, joined: bool) -> None:
    change = {"from": None, "to": duplicate.tracking_id}
    if not joined:
        change = {"from": duplicate.tracking_id, "to": None}
    activity.record(primary, source.user, DUPLICATE, {"duplicates": change}, via=source.via)


def _reload(*reports: Report) -> None:
    """Read the reports' duplicate rows again: the answer and the webhook show them."""
    for report in reports:
        db.session.refresh(report, ["duplicate_row", "duplicate_rows"])
