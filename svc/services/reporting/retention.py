"""How long reports are kept, and one reporter's data erased or handed over (docs/api.md
§7.4). What a project and the instance take up: svc.services.instance.usage."""

import base64
import re
import time
import uuid
from datetime import datetime, timedelta

from sqlalchemy import delete, func, or_, select, update

from svc import audit, database, storage
from svc.extensions import db
from svc.models import (
    OWNER,
    Comment,
    Notification,
    OutgoingMail,
    Project,
    Report,
    Screenshot,
    User,
    WebhookDelivery,
)
from svc.models.base import utcnow
from svc.models.webhooks import PENDING
from svc.services import projects
from svc.services.reporting import reports

# Reports deleted per transaction: short ones, so that requests filing reports (which wait
# for SQLite's one write lock) wait little; and after each, a pause as long as it took, or the
# pass would take the lock again before a waiting request could (bench.retention: ingest fell
# to 0.5 requests a second without the pause).
BATCH_REPORTS = 100
ERASED = "[erased]"


def apply_all(now: datetime | None = None) -> dict[uuid.UUID, int]:
    """The scheduler's hourly pass: each project with `days` set loses its reports whose status
    is one of `statuses` and that nobody touched for `days` days, in batches. One audit entry
    per project that lost any, with the count; no event per report."""
    now = now or utcnow()
    removed = {}
    kept = db.session.execute(
        select(Project.id, Project.retention).where(Project.retention.is_not(None))
    ).all()
    db.session.commit()
    for project_id, retention in kept:
        if not retention.get("days"):
            continue
        cutoff = now - timedelta(days=retention["days"])
        count = _remove_in_batches(
            Report.project_id == project_id,
            Report.status.in_(retention["statuses"]),
            Report.updated_at < cutoff,
            yielding=True,
        )
        if count:
            audit.record(
                audit.RETENTION_APPLIED,
                None,
                ("project", project_id),
                project_id=project_id,
                reports=count,
                days=retention["days"],
                statuses=retention["statuses"],
            )
            db.session.commit()
            removed[project_id] = count
    return removed


def erase_reporter(user: User, project_id: uuid.UUID, identifier: str) -> int:
    """Every report of the project whose reporter is `identifier` (any case) goes as retention
    deletes, and the value is blanked in the project's webhook payloads and the mails its
    reports caused that still wait to be sent. The audit entry holds the count, not the
    identifier."""
    projects.access(user, project_id, at_least=OWNER)
    caused = _mails_caused_by(project_id)  # before the reports go, and their notifications
    count = _remove_in_batches(*_of_reporter(project_id, identifier))
    _blank_in_queues(project_id, identifier, caused)
    audit.record(
        audit.REPORTER_DATA_ERASED, user, ("project", project_id), project_id=project_id,
        reports=count,
    )  # fmt: skip
    db.session.commit()
    return count


def reports_of_reporter(user: User, project_id: uuid.UUID, identifier: str) -> list[Report]:
    """The reports of one reporter, whole, for a subject-access request (one person's: read
    at once); the export is recorded before they are read."""
    projects.access(user, project_id, at_least=OWNER)
    database.end_transaction(then_read_only=False)  # a GET reads in a read-only transaction
    audit.record(audit.REPORTER_DATA_EXPORTED, user, ("project", project_id), project_id=project_id)
    db.session.commit()
    database.begin_read_only(db.session())
    return list(
        db.session.scalars(
            select(Report).where(*_of_reporter(project_id, identifier)).order_by(Report.created_at)
        )
    )


def what_else_is_theirs(reports: list[Report]) -> dict[uuid.UUID, dict]:
    """Beside each report of a subject-access export: the reporter's own replies from the status
    page, and the report's files (screenshots, replay) as base64, content type and key."""
    ids = [report.id for report in reports]
    extra = {report_id: {"replies": [], "files": []} for report_id in ids}
    replies = db.session.scalars(
        select(Comment)
        .where(Comment.report_id.in_(ids), Comment.from_reporter)
        .order_by(Comment.created_at, Comment.id)
    )
    for reply in replies:
        written = reply.created_at.isoformat(timespec="milliseconds") + "Z"
        extra[reply.report_id]["replies"].append({"body": reply.body, "createdAt": written})
    store = storage.current_store()
    for shot in db.session.scalars(select(Screenshot).where(Screenshot.report_id.in_(ids))):
        stream = store.open(shot.key)
        if stream is None:
            continue
        try:
            data = base64.b64encode(stream.read()).decode()
        finally:
            stream.close()
        extra[shot.report_id]["files"].append(
            {"key": shot.key, "contentType": shot.content_type, "base64": data}
        )
    return extra


def export_file_name(identifier: str) -> str:
    """Named for whose data it is: an operator answering several requests keeps them apart."""
    name = re.sub(r"[^A-Za-z0-9@._-]+", "_", identifier.strip())[:64] or "reporter"
    return f"svc-reporter-data-{name}.ndjson"


def _remove_in_batches(*conditions, yielding: bool = False) -> int:
    count = 0
    while True:
        started = time.monotonic()
        batch = list(
            db.session.scalars(
                select(Report).where(*conditions).order_by(Report.updated_at).limit(BATCH_REPORTS)
            )
        )
        if not batch:
            return count
        reports.remove_all(batch, None, audit_each=False)
        count += len(batch)
        if yielding:
            time.sleep(time.monotonic() - started)


def _of_reporter(project_id: uuid.UUID, identifier: str) -> tuple:
    return (
        Report.project_id == project_id,
        func.lower(Report.reporter_identifier) == identifier.strip().lower(),
    )


def _mails_caused_by(project_id: uuid.UUID) -> list[uuid.UUID]:
    """The waiting mails the project's reports caused (contract v6: all an erase may touch):
    its reporter mails, and the team's notification mails about its reports."""
    return list(
        db.session.scalars(
            select(OutgoingMail.id).where(
                OutgoingMail.status == PENDING,
                or_(
                    OutgoingMail.reporter_project_id == project_id,
                    OutgoingMail.id.in_(
                        select(Notification.mail_id).where(Notification.project_id == project_id)
                    ),
                ),
            )
        )
    )


def _blank_in_queues(project_id: uuid.UUID, identifier: str, mail_ids: list[uuid.UUID]) -> None:
    """`identifier` replaced, in any case, in the payloads of the project's pending deliveries
    and in the mails `mail_ids` (those its reports caused); every mail the project sent or
    still has waiting to the reporter (docs/reporter-updates.md) is deleted (a waiting one
    never goes). Another project's mails, and mails of accounts, are never touched; the
    reporter-mail limits are counted apart (ReporterMailCount) and stay."""
    pattern = re.compile(re.escape(identifier.strip()), re.IGNORECASE)
    db.session.execute(
        delete(OutgoingMail).where(
            OutgoingMail.reporter_project_id == project_id,
            func.lower(OutgoingMail.to_address) == identifier.strip().lower(),
        )
    )
    waiting = [
        (WebhookDelivery, WebhookDelivery.project_id == project_id, ("payload",)),
        (OutgoingMail, OutgoingMail.id.in_(mail_ids), ("subject", "text_body", "html_body")),
    ]
    for model, of_project, columns in waiting:
        for row in db.session.scalars(select(model).where(model.status == PENDING, of_project)):
            changes = {
                column: pattern.sub(ERASED, getattr(row, column))
                for column in columns
                if pattern.search(getattr(row, column))
            }
            if changes:
                db.session.execute(update(model).where(model.id == row.id).values(**changes))
