"""Durable webhook delivery (docs/api.md §12). See docs/webhooks.md for the design.

- `record` writes the delivery (the outbox row) in the caller's transaction, beside the change.
- `claim_due` takes due deliveries with a conditional update, so no two processes can make the
  same attempt; the claim pushes `next_attempt_at` past the attempt's time-out (a lease).
- `attempt` sends one attempt with no database transaction open, then records the outcome and
  schedules the next retry, or marks the delivery `failed` after the last one.
"""

import logging
import time
import uuid
from collections import Counter
from collections.abc import Mapping
from datetime import datetime

from sqlalchemy import insert, select, true, update
from sqlalchemy.orm import aliased

from svc import database, outbox
from svc.config import setting
from svc.errors import not_found
from svc.extensions import db
from svc.models import Project, Report
from svc.models.base import utcnow
from svc.models.webhooks import FAILED, PENDING, WebhookDelivery
from svc.webhooks import payloads, sender, signing
from svc.webhooks.formats import format_in_force

log = logging.getLogger(__name__)
USER_AGENT = "svc-webhooks/1.0"
# What a delivery of a deleted report keeps of its payload, and says in the log.
FORGOTTEN = ""
CANCELLED = "Cancelled: the report was deleted"
# At most this many attempts of one project under way at once (of the scheduler's threads).
PER_PROJECT_ATTEMPTS = 2


# A Core INSERT at once: the ORM's flush of one row costs more than writing it, and it runs
# in the part of a report's creation that runs one at a time (docs/performance.md).
_INSERT_DELIVERY = insert(WebhookDelivery.__table__)


def record(
    project: Project,
    event: str,
    report: Report,
    changes: dict | None = None,
    comment=None,
    reproduction=None,
) -> None:
    """Add the event's delivery to the current transaction, if the project has a webhook."""
    if not project.webhook_url:
        return
    now = utcnow()
    payload = payloads.event_payload(event, report, now, changes, comment, reproduction)
    record_payloads([(project.id, report.id, event, payload, now)])


def record_payloads(made: list[tuple[uuid.UUID, uuid.UUID, str, str, datetime]]) -> None:
    """Add deliveries of payloads already made: (project id, report id, event, payload, made
    at). Each is due from when it was made (a report event's, in the fan-out), so that it goes
    before the report's later events."""
    db.session.execute(
        _INSERT_DELIVERY,
        [
            {
                "id": uuid.uuid4(),
                "project_id": project_id,
                "report_id": report_id,
                "event": event,
                "payload": payload,
                "status": PENDING,
                "attempts": 0,
                "next_attempt_at": at,
                "created_at": at,
            }
            for project_id, report_id, event, payload, at in made
        ],
    )


def claim_due(
    limit: int,
    now: datetime | None = None,
    running: Mapping[uuid.UUID, uuid.UUID] | None = None,
    per_project: int = PER_PROJECT_ATTEMPTS,
) -> list[tuple[uuid.UUID, int, uuid.UUID]]:
    """Claim up to `limit` due deliveries: [(id, number of the attempt now to be made, project
    id)]. `running` maps the deliveries whose attempts are still under way to their projects:
    none of them is claimed again, even after its lease has ended, and no project gets more than
    `per_project` under way at once, so that one project's slow receivers cannot take every
    delivery thread."""
    now = now or utcnow()
    running = running or {}
    under_way = Counter(running.values())

    def admit(row) -> bool:
        """No project past `per_project` attempts under way, this claim's included."""
        if under_way[row[2]] >= per_project:
            return False
        under_way[row[2]] += 1  # before the claim: one another process wins errs short, never over
        return True

    due = _due_candidates(now, limit + len(under_way), running, under_way, per_project)
    timeout = setting("SVC_WEBHOOK_TIMEOUT")
    return outbox.claim_due(
        WebhookDelivery, due, now=now, attempt_seconds=timeout, limit=limit, admit=admit
    )


def _due_candidates(
    now: datetime, limit: int, running: Mapping, under_way: Counter, per_project: int
):
    """The earliest due deliveries, at most `per_project` of each project: a project
    with a thousand due deliveries does not hide another's one. `limit` leaves room for those
    of projects that turn out to have attempts under way already.

    Read project by project from the index of pending deliveries (status, project, due time,
    id), so that a claim costs what the projects with pending deliveries cost, not what their
    backlog does: a window over every due delivery took 170 ms at 100,000 of them on SQLite
    (docs/performance.md, "A webhook claim behind a backlog")."""
    full = [project for project, count in under_way.items() if count >= per_project]
    projects = _waiting_projects(full)
    later = aliased(WebhookDelivery)
    earliest = (
        select(later.id, later.attempts, later.project_id, later.next_attempt_at)
        .where(
            later.project_id == projects.c.project_id,
            later.status == PENDING,
            later.next_attempt_at <= now,
        )
        .order_by(later.next_attempt_at, later.id)
        .limit(per_project)
    )
    if running:
        earliest = earliest.where(later.id.not_in(list(running)))
    if db.session.get_bind().dialect.name == "postgresql":
        # PostgreSQL tried the IN below against every pending delivery, sorted: a LATERAL join.
        rows = earliest.lateral("earliest")
        chosen = select(rows).select_from(projects).join(rows, true())
    else:  # SQLite has no LATERAL, and reads the IN project by project
        rows = WebhookDelivery
        chosen = (
            select(rows.id, rows.attempts, rows.project_id, rows.next_attempt_at)
            .select_from(projects)
            .join(rows, rows.id.in_(earliest.with_only_columns(later.id)))
        )
    chosen = chosen.subquery()
    return (
        select(chosen.c.id, chosen.c.attempts, chosen.c.project_id)
        .order_by(chosen.c.next_attempt_at, chosen.c.id)
        .limit(limit)
    )


def _waiting_projects(full: list[uuid.UUID]):
    """The projects with a pending delivery but those in `full`: a walk of the index, one seek
    a project (the next after the last; PostgreSQL has no min() of a uuid). Each step is a
    scalar subquery, as SQLite takes no LIMIT in a compound's first part."""
    later = aliased(WebhookDelivery)

    def next_project(*after):
        return (
            select(later.project_id)
            .where(later.status == PENDING, *after)
            .order_by(later.project_id)
            .limit(1)
            .scalar_subquery()
        )

    waiting = select(next_project().label("project_id")).cte("waiting", recursive=True)
    waiting = waiting.union_all(
        select(next_project(later.project_id > waiting.c.project_id)).where(
            waiting.c.project_id.is_not(None)
        )
    )
    projects = select(waiting.c.project_id).where(waiting.c.project_id.is_not(None))
    if full:
        projects = projects.where(waiting.c.project_id.not_in(full))
    return projects.subquery("projects")


def _request(delivery: WebhookDelivery, project: Project) -> tuple[bytes, dict[str, str]]:
    webhook_format = format_in_force(project.webhook_format, project.webhook_url)
    body = payloads.body_for(delivery.payload, webhook_format, setting("SVC_PUBLIC_URL"))
    timestamp = int(time.time())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Svc-Event": delivery.event,
        "X-Svc-Delivery": str(delivery.id),
        "X-Svc-Signature": signing.svc_signature(project.api_key, body),
        "webhook-id": str(delivery.id),
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signing.standard_signature(
            project.webhook_secret, str(delivery.id), timestamp, body
        ),
    }
    return body, headers


def attempt(delivery_id: uuid.UUID, attempt_number: int) -> sender.Outcome | None:
    """Make one claimed attempt and record its outcome."""
    delivery = db.session.get(WebhookDelivery, delivery_id)
    project = db.session.get(Project, delivery.project_id) if delivery else None
    if delivery is None or project is None or delivery.payload == FORGOTTEN:
        db.session.rollback()  # deleted, with its project or its report, since the claim
        return None
    url = project.webhook_url
    try:
        request = _request(delivery, project) if url else None
    except (ValueError, TypeError, KeyError) as exc:
        # A payload no retry can turn into a request: failed at once, not retried for ever.
        db.session.rollback()
        outcome = sender.Outcome(None, f"cannot be built: {exc!r}")
        _record_outcome(delivery_id, attempt_number, outcome, final=True)
        log.error("webhook %s attempt %d: %s", delivery_id, attempt_number, outcome.error)
        return outcome
    # No transaction stays open while a receiver takes its time.
    db.session.commit()
    if request is None:
        outcome = sender.Outcome(None, "No webhook URL is configured for the project")
    else:
        body, headers = request
        outcome = sender.post(
            url,
            body,
            headers,
            timeout=setting("SVC_WEBHOOK_TIMEOUT"),
            allow_private=setting("SVC_WEBHOOK_ALLOW_PRIVATE"),
            ca_bundle=setting("SVC_WEBHOOK_CA_BUNDLE"),
        )
    _record_outcome(delivery_id, attempt_number, outcome)
    log.info(
        "webhook %s attempt %d: %s",
        delivery_id,
        attempt_number,
        "delivered" if outcome.succeeded else outcome.error,
    )
    return outcome


def _record_outcome(
    delivery_id: uuid.UUID,
    attempt_number: int,
    outcome: sender.Outcome,
    final: bool = False,
    now: datetime | None = None,
) -> None:
    """Only while nothing moved the delivery meanwhile (a redelivery restarts the count at 0):
    svc.outbox.record_outcome's guard."""
    now = now or utcnow()
    delays = setting("SVC_WEBHOOK_RETRY_DELAYS")
    values = outbox.settled(now, attempt_number, delays, succeeded=outcome.succeeded, final=final)
    values.update(
        last_status_code=outcome.status_code,
        last_error=outcome.error[:500] if outcome.error else None,
        updated_at=now,
    )
    outbox.record_outcome(WebhookDelivery, delivery_id, attempt_number, values)


# --- the delivery log ----------------------------------------------------------------------------


def page_for(project_id: uuid.UUID, page: int, page_size: int):
    condition = WebhookDelivery.project_id == project_id
    return database.newest_first(WebhookDelivery, condition, page, page_size)


def forget_reports(report_ids: list[uuid.UUID]) -> None:
    """A deleted report lives on in no delivery: each keeps its line in the log but loses its
    payload, a pending one is cancelled, and none can be redelivered. In the caller's
    transaction, beside the deletion."""
    now = utcnow()
    of_report = WebhookDelivery.report_id.in_(report_ids)
    db.session.execute(
        update(WebhookDelivery)
        .where(of_report, WebhookDelivery.status == PENDING)
        .values(status=FAILED, next_attempt_at=None, last_error=CANCELLED, updated_at=now)
        .execution_options(synchronize_session=False)
    )
    db.session.execute(
        update(WebhookDelivery)
        .where(of_report)
        .values(payload=FORGOTTEN)
        .execution_options(synchronize_session=False)
    )


def redeliver(project_id: uuid.UUID, delivery_id: uuid.UUID) -> WebhookDelivery:
    """Start a new cycle of attempts for the same delivery id, due now."""
    delivery = db.session.get(WebhookDelivery, delivery_id)
    if delivery is None or delivery.project_id != project_id or delivery.payload == FORGOTTEN:
        raise not_found("Delivery not found")
    now = utcnow()
    delivery.status = PENDING
    delivery.attempts = 0
    delivery.next_attempt_at = now
    delivery.updated_at = now
    db.session.commit()
    return delivery
