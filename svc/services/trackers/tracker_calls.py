"""The outbox of calls svc makes to a project's trackers (docs/integrations.md): an issue
auto-created for a new report, a linked issue closed or reopened with its report. Rows
(IntegrationCall) the scheduler claims and makes outside any transaction, retried as webhook
deliveries are; the rules they keep are in svc.services.trackers.integrations' docstring."""

import logging
import uuid
from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import insert, select, update

from svc import database, outbox
from svc.config import setting
from svc.errors import Conflict, not_found
from svc.extensions import db
from svc.integrations import TRACKERS
from svc.integrations.base import TrackerError, reading
from svc.models import (
    DONE_STATUSES,
    MEMBER,
    ExternalIssue,
    Integration,
    IntegrationCall,
    Report,
    User,
)
from svc.models.base import utcnow
from svc.models.integrations import CLOSE, CLOSED, CREATE, OPEN, REOPEN
from svc.models.webhooks import FAILED, PENDING
from svc.services.listing import Page, with_tracking_ids
from svc.services.trackers import integrations

log = logging.getLogger(__name__)
# A call may make two requests to the tracker (Jira reads an issue's transitions, then makes
# one), each within SVC_WEBHOOK_TIMEOUT: its lease is three of them.
REQUESTS_PER_CALL = 3


def calls_page(user: User, integration_id: uuid.UUID, page: int, page_size: int) -> Page:
    integrations.get_for(user, integration_id)
    condition = IntegrationCall.integration_id == integration_id
    items, total = database.newest_first(IntegrationCall, condition, page, page_size)
    return Page(items=with_tracking_ids(items), total=total, page=page, page_size=page_size)


def retry_call(user: User, integration_id: uuid.UUID, call_id: uuid.UUID) -> IntegrationCall:
    """A call that failed for good, made again: a new cycle of attempts, due now (members and
    owners), as a webhook delivery is redelivered."""
    integrations.get_for(user, integration_id, MEMBER)
    call = db.session.get(IntegrationCall, call_id)
    if call is None or call.integration_id != integration_id:
        raise not_found("Call not found")
    if call.status != FAILED:
        raise Conflict(
            "Only a call that failed for good can be retried: this one is " + call.status
        )
    now = utcnow()
    call.status, call.attempts, call.next_attempt_at, call.updated_at = PENDING, 0, now, now
    db.session.commit()
    return with_tracking_ids([call])[0]


# --- the outbox: auto-create, closing and reopening ----------------------------------------------


def auto_create_targets(project_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, list[tuple]]:
    """{project: [(integration id, auto_create rule)]} of the integrations that auto-create."""
    targets: dict[uuid.UUID, list[tuple]] = {}
    for integration_id, project_id, rule in db.session.execute(
        select(Integration.id, Integration.project_id, Integration.auto_create).where(
            Integration.project_id.in_(list(project_ids)), Integration.auto_create.is_not(None)
        )
    ):
        targets.setdefault(project_id, []).append((integration_id, rule))
    return targets


def matches(rule: dict, severity: str, category: str) -> bool:
    """An empty list in the rule matches anything."""
    severities, categories = rule.get("severities") or [], rule.get("categories") or []
    return (not severities or severity in severities) and (not categories or category in categories)


def record_calls(calls: list[tuple[uuid.UUID, uuid.UUID, str]]) -> None:
    """Add (integration id, report id, action) calls to the current transaction, due now."""
    if not calls:
        return
    now = utcnow()
    db.session.execute(
        insert(IntegrationCall.__table__),
        [
            {
                "id": uuid.uuid4(),
                "integration_id": integration_id,
                "report_id": report_id,
                "action": action,
                "status": PENDING,
                "attempts": 0,
                "next_attempt_at": now,
                "created_at": now,
                "updated_at": now,
            }
            for integration_id, report_id, action in calls
        ],
    )


def status_changed(report: Report, old: str, new: str, except_integration=None) -> None:
    """A report gone to resolved or closed closes its open linked issues; one reopened reopens
    its closed ones, in the background, where the integration syncs status. The integration a
    change came from (`except_integration`) is not told of it."""
    was_done, done = old in DONE_STATUSES, new in DONE_STATUSES
    if was_done == done:
        return
    action, from_state = (CLOSE, OPEN) if done else (REOPEN, CLOSED)
    linked = db.session.execute(
        select(ExternalIssue.integration_id)
        .join(Integration, Integration.id == ExternalIssue.integration_id)
        .where(
            ExternalIssue.report_id == report.id,
            ExternalIssue.state == from_state,
            Integration.sync_status.is_(True),
        )
    ).scalars()
    record_calls(
        [
            (integration_id, report.id, action)
            for integration_id in linked
            if integration_id != except_integration
        ]
    )


def claim_due(
    limit: int, running=(), now: datetime | None = None
) -> list[tuple[uuid.UUID, int, uuid.UUID]]:
    """Claim due calls as every outbox claims its rows (svc.outbox.claim_due): [(id, attempt
    number, integration id)], none of those in `running` (attempts still under way)."""
    now = now or utcnow()
    due = select(
        IntegrationCall.id, IntegrationCall.attempts, IntegrationCall.integration_id
    ).where(IntegrationCall.status == PENDING, IntegrationCall.next_attempt_at <= now)
    if running:
        due = due.where(IntegrationCall.id.not_in(list(running)))
    due = due.order_by(IntegrationCall.next_attempt_at, IntegrationCall.id).limit(limit)
    seconds = setting("SVC_WEBHOOK_TIMEOUT") * REQUESTS_PER_CALL
    return outbox.claim_due(IntegrationCall, due, now=now, attempt_seconds=seconds, limit=limit)


def attempt(call_id: uuid.UUID, attempt_number: int) -> None:
    """Make one claimed call and record what came of it."""
    call = db.session.get(IntegrationCall, call_id)
    integration = db.session.get(Integration, call.integration_id) if call else None
    report = db.session.get(Report, call.report_id) if call else None
    if call is None or integration is None:
        db.session.rollback()  # the integration was deleted since the claim
        return
    if report is None:
        db.session.rollback()
        _finish(call_id, attempt_number, None, "Not made: the report was deleted", final=True)
        return
    issue = integrations.linked_issue(integration.id, report.id)
    if call.action == CREATE and issue is not None:
        db.session.rollback()  # made meanwhile (by hand, or by an earlier attempt): not twice
        _finish(call_id, attempt_number, None, None)
        return
    if call.action != CREATE and issue is None:
        db.session.rollback()
        _finish(call_id, attempt_number, None, "Not made: the report has no issue here", final=True)
        return
    action, kind, report_id = call.action, integration.kind, report.id
    tracker = TRACKERS[kind]
    content = integrations.content_of(report) if action == CREATE else None
    address = issue.address if issue else None
    db.session.commit()  # no transaction stays open while the tracker takes its time
    try:
        connection = integrations.connection(integration)
        with reading(tracker.NAME):
            if action == CREATE:
                linked = tracker.create(connection, content)
            else:
                tracker.set_state(connection, address, action == CLOSE)
    except TrackerError as exc:
        log.info("integration call %s attempt %d: %s", call_id, attempt_number, exc.words)
        integrations.note_outcome(integration.id, exc.words)
        if address is not None:
            error = f"{action.capitalize()} failed: {exc.words}"
            _set_issue(integration.id, report_id, last_error=error[:500])
        _finish(call_id, attempt_number, exc.status_code, exc.words, exc.final, exc.retry_after)
        return
    if action == CREATE:
        integrations.link(integration.id, kind, report_id, linked, None)
    else:
        state = CLOSED if action == CLOSE else OPEN
        _set_issue(integration.id, report_id, state=state, last_error=None)
    integrations.note_outcome(integration.id, None)
    _finish(call_id, attempt_number, 200, None)


def _set_issue(integration_id, report_id, **values) -> None:
    """Record on the report's linked issue what a close or reopen came to."""
    db.session.execute(
        update(ExternalIssue)
        .where(ExternalIssue.integration_id == integration_id, ExternalIssue.report_id == report_id)
        .values(**values, updated_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    db.session.commit()


def _finish(
    call_id,
    attempt_number: int,
    status_code,
    error,
    final: bool = False,
    wait: float = 0,
    now: datetime | None = None,
) -> None:
    """Succeeded, retried after the next delay (at least what a 429 asked), or failed: after
    the last retry, or at once when retrying cannot help (a 401, 404, 422)."""
    now = now or utcnow()
    delays = setting("SVC_INTEGRATION_RETRY_DELAYS")
    values = outbox.settled(now, attempt_number, delays, succeeded=error is None, final=final,
                            at_least=wait)  # fmt: skip
    values.update(last_status_code=status_code, last_error=error, updated_at=now)
    outbox.record_outcome(IntegrationCall, call_id, attempt_number, values)
