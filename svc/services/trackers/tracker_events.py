"""What a tracker's deliveries change (docs/integrations.md, "Status sync"): a linked issue
closed or reopened there resolves or reopens its report here, once per delivery, and never
tells that tracker back."""

import hashlib
import json
import uuid

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from svc.errors import Unauthorized
from svc.extensions import db
from svc.integrations import TRACKERS
from svc.integrations.base import Event, RefusedDelivery, TrackerError
from svc.models import (
    DONE_STATUSES,
    ExternalIssue,
    Integration,
    Report,
    TrackerEvent,
    User,
)
from svc.models.base import utcnow
from svc.models.integrations import CLOSED, OPEN
from svc.services.reporting import report_changes
from svc.services.trackers import integrations

LAST_EVENTS = 20


def recent_events(user: User, integration_id: uuid.UUID) -> list[TrackerEvent]:
    integrations.get_for(user, integration_id)
    return list(
        db.session.scalars(
            select(TrackerEvent)
            .where(TrackerEvent.integration_id == integration_id)
            .order_by(TrackerEvent.received_at.desc(), TrackerEvent.id)
            .limit(LAST_EVENTS)
        )
    )


# --- what the trackers send ----------------------------------------------------------------------


def apply_event(integration_id: uuid.UUID, headers: dict, body: bytes) -> str:
    """A tracker's delivery: checked against the integration's secret (401 when it does not
    match), applied once per delivery id and once per body (an id is not signed: a body sent
    again under a new one is a replay). What svc made of it, in words."""
    integration = db.session.get(Integration, integration_id)
    if integration is None:
        raise Unauthorized("Unknown integration or bad signature")
    tracker = TRACKERS[integration.kind]
    secret = integrations.webhook_secret_of(integration)
    if secret is None or not tracker.verify(secret, headers, body):
        raise Unauthorized("Unknown integration or bad signature")
    body_sha256 = hashlib.sha256(body).hexdigest()
    delivery_id = tracker.delivery_id(headers) or body_sha256
    receipt = TrackerEvent(
        id=uuid.uuid4(),
        integration_id=integration_id,
        delivery_id=delivery_id[:200],
        body_sha256=body_sha256,
        received_at=utcnow(),
        outcome="received",
    )
    db.session.add(receipt)
    try:
        db.session.flush()
    except IntegrityError:
        db.session.rollback()
        return "already applied"
    receipt.outcome = _apply(integration, tracker, headers, body)[:300]
    db.session.commit()
    return receipt.outcome


def _apply(integration: Integration, tracker, headers: dict, body: bytes) -> str:
    try:
        payload = json.loads(body)
        event = (
            tracker.read_event(integration.config, headers, payload)
            if isinstance(payload, dict)
            else None
        )
    except RefusedDelivery as exc:
        return f"refused: {exc}"
    except (KeyError, TypeError, ValueError, TrackerError):
        return "ignored: not an issue event svc reads"
    if event is None:
        return "ignored: not an issue event svc reads"
    issue = db.session.scalar(
        select(ExternalIssue).where(
            ExternalIssue.integration_id == integration.id,
            ExternalIssue.remote_id == event.issue.remote_id,
        )
    )
    if issue is None:
        return f"ignored: {event.issue.key} is not linked to a report"
    # The issue moved (a Jira project): follow its key. Its address and page are never taken
    # from a delivery (svc builds them on the configured host; docs/integrations.md).
    issue.key = event.issue.key
    if event.issue.url is not None:
        issue.url = event.issue.url
    issue.updated_at = utcnow()
    if event.closed is None:
        return f"{issue.key}: {event.words or 'updated'}"
    issue.state = CLOSED if event.closed else OPEN
    issue.last_error = None
    happened = f"{issue.key} {'closed' if event.closed else 'reopened'}"
    if not integration.sync_status:
        return f"{happened}; status sync is off"
    report = db.session.get(Report, issue.report_id)
    new_status = _status_after(report.status, event)
    if new_status is None:
        return f"{happened}; {report.tracking_id} already {report.status}"
    report_changes.update(report, {"status": new_status}, report_changes.tracker(integration))
    return f"{report.tracking_id} {new_status} ({happened})"


def _status_after(status: str, event: Event) -> str | None:
    if event.closed and status not in DONE_STATUSES:
        return "resolved"
    if not event.closed and status in DONE_STATUSES:
        return "in_progress"
    return None
