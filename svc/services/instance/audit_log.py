"""Reading the audit log (docs/api.md §14): the instance's for its administrators, a project's
for its owners, paged or as NDJSON; and its retention. Entries are written by svc.audit, in the
transaction of what they record; nothing here changes one."""

import uuid
from collections.abc import Iterator
from datetime import timedelta

from sqlalchemy import delete, func, select

from svc.config import setting
from svc.extensions import db
from svc.models import OWNER, AuditEntry, User
from svc.models.base import utcnow
from svc.services import projects
from svc.services.listing import Page

BATCH = 1000


def _conditions(query: dict) -> list:
    conditions = []
    if "actor" in query:
        conditions.append(AuditEntry.actor_id == query["actor"])
    if "action" in query:
        conditions.append(AuditEntry.action == query["action"])
    if "project_id" in query:
        conditions.append(AuditEntry.project_id == query["project_id"])
    if "since" in query:
        conditions.append(AuditEntry.at >= query["since"])
    if "until" in query:
        conditions.append(AuditEntry.at < query["until"])
    return conditions


def of_project(user: User, project_id: uuid.UUID, query: dict) -> dict:
    """The filters for one project's entries, which only its owners may read."""
    projects.access(user, project_id, at_least=OWNER)
    return {**query, "project_id": project_id}


def page(query: dict) -> Page:
    """The entries the filters choose, newest first."""
    conditions = _conditions(query)
    total = db.session.scalar(select(func.count()).select_from(AuditEntry).where(*conditions))
    items = db.session.scalars(
        select(AuditEntry)
        .where(*conditions)
        .order_by(AuditEntry.at.desc(), AuditEntry.id)
        .limit(query["page_size"])
        .offset((query["page"] - 1) * query["page_size"])
    ).all()
    return Page(items=list(items), total=total, page=query["page"], page_size=query["page_size"])


def everything(query: dict) -> Iterator[AuditEntry]:
    """Every entry the filters choose, oldest first (as a log reads), a batch at a time."""
    yield from db.session.scalars(
        select(AuditEntry)
        .where(*_conditions(query))
        .order_by(AuditEntry.at, AuditEntry.id)
        .execution_options(yield_per=BATCH)
    )


def prune() -> int:
    """Delete entries older than SVC_AUDIT_DAYS, a batch per transaction (the scheduler, hourly):
    how many went."""
    cutoff = utcnow() - timedelta(days=setting("SVC_AUDIT_DAYS"))
    gone = 0
    while True:
        ids = select(AuditEntry.id).where(AuditEntry.at < cutoff).limit(BATCH).scalar_subquery()
        count = db.session.execute(
            delete(AuditEntry)
            .where(AuditEntry.id.in_(ids))
            .execution_options(synchronize_session=False)
        ).rowcount
        db.session.commit()
        gone += count
        if count < BATCH:
            return gone
