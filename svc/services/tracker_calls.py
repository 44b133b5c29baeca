"""The outbox of calls svc makes to a project's trackers (docs/integrations.md): an issue
auto-created for a new report, a linked issue closed or reopened with its report. Rows
(IntegrationCall) the scheduler claims and makes outside any transaction, retried as webhook
deliveries are; the rules they keep are in svc.services.integrations' docstring."""

import logging
import uuid
from collections.abc import Iterable
from datetime import timedelta

from sqlalchemy import func, insert, select, update

from svc import database
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
from svc.models.webhooks import FAILED, PENDING, SUCCEEDED
from svc.retry import next_attempt
from svc.services import integrations
from svc.services.listing import Page, with_tracking_ids

log = logging.getLogger(__name__)
LEASE_MARGIN = timedelta(seconds=60)


def calls_page(user: User, integration_id: uuid.UUID, page: int, page_size: int) -> Page:
    integrations.get_for(user, integration_id)
    condition = IntegrationCall.integration_id == integration_id
    total = db.session.scalar(select(func.count()).select_from(IntegrationCall).where(condition))
    items = db.session.scalars(
        select(IntegrationCall)
        .where(condition)
        .order_by(IntegrationCall.created_at.desc(), IntegrationCall.id)
        .limit(page_size)
        .offset((page - 1) * page_size)
    ).all()
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


def claim_due(limit: int, running=()) -> list[tuple[uuid.UUID, int, uuid.UUID]]:
    """Claim due calls as svc.webhooks.delivery.claim_due claims deliveries: [(id, attempt
    number, integration id)], a conditional UPDATE each, so that no two processes make one."""
    now = utcnow()
    lease_until = now + timedelta(seconds=setting("SVC_WEBHOOK_TIMEOUT")) * 3 + LEASE_MARGIN
    due = select(
        IntegrationCall.id, IntegrationCall.attempts, IntegrationCall.integration_id
    ).where(IntegrationCall.status == PENDING, IntegrationCall.next_attempt_at <= now)
    if running:
        due = due.where(IntegrationCall.id.not_in(list(running)))
    # The poll, every second, takes no write lock (on SQLite a writer's BEGIN IMMEDIATE would
    # queue behind every other, the scheduler's own job store among them).
    database.begin_read_only(db.session())
    candidates = db.session.execute(
        due.order_by(IntegrationCall.next_attempt_at, IntegrationCall.id).limit(limit)
    ).all()
    db.session.commit()
    claimed = []
    for call_id, attempts, integration_id in candidates:
        taken = db.session.execute(
            update(IntegrationCall)
            .where(
                IntegrationCall.id == call_id,
                IntegrationCall.status == PENDING,
                IntegrationCall.attempts == attempts,
                IntegrationCall.next_attempt_at <= now,
            )
            .values(attempts=attempts + 1, next_attempt_at=lease_until)
            .execution_options(synchronize_session=False)
        ).rowcount
        if taken:
            claimed.append((call_id, attempts + 1, integration_id))
    db.session.commit()
    return claimed


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
    call_id, attempt_number: int, status_code, error, final: bool = False, wait: float = 0
) -> None:
    """Succeeded, retried after the next delay (at least what a 429 asked), or failed: after
    the last retry, or at once when retrying cannot help (a 401, 404, 422)."""
    now = utcnow()
    values = {"last_status_code": status_code, "last_error": error, "updated_at": now}
    delays = setting("SVC_INTEGRATION_RETRY_DELAYS")
    if error is None:
        values.update(status=SUCCEEDED, next_attempt_at=None)
    elif again := next_attempt(now, attempt_number, delays, final, at_least=wait):
        values.update(next_attempt_at=again)
    else:
        values.update(status=FAILED, next_attempt_at=None)
    db.session.execute(
        update(IntegrationCall)
        .where(IntegrationCall.id == call_id, IntegrationCall.attempts == attempt_number)
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    db.session.commit()
