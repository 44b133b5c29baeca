"""The history of a report (docs/api.md §8.8): who changed what and when, comments added
and deleted. Written in the transaction of the change itself; read oldest first, led by the
report's creation (which is not stored: the report's created_at tells it, and the widget is
its actor, so filing a report costs nothing more)."""

import uuid

from sqlalchemy import select

from svc.extensions import db
from svc.models import ActivityEntry, Report, User
from svc.models.activity import CHANGED, CREATED, DUPLICATE, LINKED, REOPENED, REPRODUCED
from svc.models.base import utcnow

# The kinds whose entry says what changed.
_WITH_CHANGES = (CHANGED, DUPLICATE, LINKED, REOPENED, REPRODUCED)


def record(
    report: Report,
    actor: User | None,
    kind: str,
    changes: dict | None = None,
    comment_id: uuid.UUID | None = None,
    via: str | None = None,
) -> None:
    """`actor` None: the change came from a tracker or the reporter, which `via` names."""
    db.session.add(
        ActivityEntry(
            id=uuid.uuid4(),
            report_id=report.id,
            kind=kind,
            actor_id=actor.id if actor else None,
            actor_name=actor.name if actor else None,
            at=utcnow(),
            changes=_plain(changes) if kind in _WITH_CHANGES else None,
            comment_id=comment_id,
            via=None if actor else via,
        )
    )


def _plain(changes: dict) -> dict:
    """JSON-ready: ids as strings."""
    return {
        field: {
            key: str(value) if isinstance(value, uuid.UUID) else value
            for key, value in change.items()
        }
        for field, change in changes.items()
    }


def history(report: Report) -> list[dict]:
    entries = db.session.scalars(
        select(ActivityEntry)
        .where(ActivityEntry.report_id == report.id)
        .order_by(ActivityEntry.at, ActivityEntry.id)
    )
    created = {"id": report.id, "kind": CREATED, "actor": None, "at": report.created_at}
    return [created, *(_entry(entry) for entry in entries)]


def _entry(entry: ActivityEntry) -> dict:
    by_tracker = entry.actor_id is None and entry.via is not None
    item = {
        "id": entry.id,
        "kind": entry.kind,
        "actor": None if by_tracker else {"id": entry.actor_id, "name": entry.actor_name},
        "at": entry.at,
    }
    if entry.via is not None:
        item["via"] = entry.via
    if entry.changes is not None:
        item["changes"] = entry.changes
    if entry.comment_id is not None:
        item["comment_id"] = entry.comment_id
    return item
