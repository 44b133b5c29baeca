"""Durable webhook delivery (contract section 8). See docs/webhooks.md for the design.

- `record` writes the delivery (the outbox row) in the caller's transaction, beside the change.
- `claim_due` takes due deliveries with a conditional update, so no two processes can make the
  same attempt; the claim pushes `next_attempt_at` past the attempt's time-out (a lease).
- `attempt` sends one attempt with no database transaction open, then records the outcome and
  schedules the next retry, or marks the delivery `failed` after the last one.
"""

import logging
import time
import uuid
from datetime import datetime, timedelta

from sqlalchemy import func, insert, select, update

from svc.config import setting
from svc.errors import not_found
from svc.extensions import db
from svc.models import Project, Report
from svc.models.base import utcnow
from svc.models.webhooks import FAILED, PENDING, SUCCEEDED, WebhookDelivery
from svc.webhooks import payloads, sender, signing
from svc.webhooks.formats import format_in_force

log = logging.getLogger(__name__)
USER_AGENT = "svc-webhooks/1.0"
LEASE_MARGIN = timedelta(seconds=60)


# A Core INSERT at once: the ORM's flush of one row costs more than writing it, and it runs
# in the part of a report's creation that runs one at a time (docs/performance.md).
_INSERT_DELIVERY = insert(WebhookDelivery.__table__)


def record(project: Project, event: str, report: Report, changes: dict | None = None) -> None:
    """Add the event's delivery to the current transaction, if the project has a webhook."""
    if not project.webhook_url:
        return
    now = utcnow()
    db.session.execute(
        _INSERT_DELIVERY,
        {
            "id": uuid.uuid4(),
            "project_id": project.id,
            "report_id": report.id,
            "event": event,
            "payload": payloads.event_payload(event, report, now, changes),
            "status": PENDING,
            "attempts": 0,
            "next_attempt_at": now,
            "created_at": now,
        },
    )


def claim_due(limit: int, now: datetime | None = None) -> list[tuple[uuid.UUID, int]]:
    """Claim up to `limit` due deliveries: [(id, number of the attempt now to be made)]."""
    now = now or utcnow()
    lease_until = now + timedelta(seconds=setting("SVC_WEBHOOK_TIMEOUT")) + LEASE_MARGIN
    candidates = db.session.execute(
        select(WebhookDelivery.id, WebhookDelivery.attempts)
        .where(WebhookDelivery.status == PENDING, WebhookDelivery.next_attempt_at <= now)
        .order_by(WebhookDelivery.next_attempt_at)
        .limit(limit)
    ).all()
    claimed = []
    for delivery_id, attempts in candidates:
        taken = db.session.execute(
            update(WebhookDelivery)
            .where(
                WebhookDelivery.id == delivery_id,
                WebhookDelivery.status == PENDING,
                WebhookDelivery.attempts == attempts,
                WebhookDelivery.next_attempt_at <= now,
            )
            .values(attempts=attempts + 1, next_attempt_at=lease_until)
            .execution_options(synchronize_session=False)
        ).rowcount
        if taken:
            claimed.append((delivery_id, attempts + 1))
    db.session.commit()
    return claimed


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
    if delivery is None or project is None:  # deleted with its project meanwhile
        db.session.rollback()
        return None
    url = project.webhook_url
    request = _request(delivery, project) if url else None
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


def _record_outcome(delivery_id: uuid.UUID, attempt_number: int, outcome: sender.Outcome) -> None:
    now = utcnow()
    values = {
        "last_status_code": outcome.status_code,
        "last_error": outcome.error[:500] if outcome.error else None,
        "updated_at": now,
    }
    delays = setting("SVC_WEBHOOK_RETRY_DELAYS")
    if outcome.succeeded:
        values.update(status=SUCCEEDED, next_attempt_at=None)
    elif attempt_number <= len(delays):
        values.update(next_attempt_at=now + timedelta(seconds=delays[attempt_number - 1]))
    else:
        values.update(status=FAILED, next_attempt_at=None)
    # Only if nothing moved it meanwhile (a redelivery restarts the count at 0).
    db.session.execute(
        update(WebhookDelivery)
        .where(
            WebhookDelivery.id == delivery_id,
            WebhookDelivery.attempts == attempt_number,
            WebhookDelivery.status == PENDING,
        )
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    db.session.commit()


def process_due(limit: int = 100) -> int:
    """Claim and attempt due deliveries one after another (for the CLI and tests)."""
    claimed = claim_due(limit)
    for delivery_id, attempt_number in claimed:
        attempt(delivery_id, attempt_number)
    return len(claimed)


# --- the delivery log ----------------------------------------------------------------------------


def page_for(project_id: uuid.UUID, page: int, page_size: int):
    condition = WebhookDelivery.project_id == project_id
    total = db.session.scalar(select(func.count()).select_from(WebhookDelivery).where(condition))
    items = db.session.scalars(
        select(WebhookDelivery)
        .where(condition)
        .order_by(WebhookDelivery.created_at.desc(), WebhookDelivery.id)
        .limit(page_size)
        .offset((page - 1) * page_size)
    ).all()
    return list(items), total


def redeliver(project_id: uuid.UUID, delivery_id: uuid.UUID) -> WebhookDelivery:
    """Start a new cycle of attempts for the same delivery id, due now."""
    delivery = db.session.get(WebhookDelivery, delivery_id)
    if delivery is None or delivery.project_id != project_id:
        raise not_found("Delivery not found")
    now = utcnow()
    delivery.status = PENDING
    delivery.attempts = 0
    delivery.next_attempt_at = now
    delivery.updated_at = now
    db.session.commit()
    return delivery
