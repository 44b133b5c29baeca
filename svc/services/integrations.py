"""A project's issue trackers (docs/api.md §15, docs/integrations.md): the integrations, the
issues its reports have there, the calls svc makes in the background, and what a tracker's
deliveries change.

Three rules hold it together:
- A call to a tracker never runs inside a database transaction, and never inside the request
  that filed a report: auto-create and the sync's closing and reopening are rows of an outbox
  (IntegrationCall) the scheduler works, with retries, as it does webhooks.
- A change that came from a tracker is never sent back to it (apply_event records calls for the
  report's other linked issues only).
- A tracker's delivery is applied once: its id is kept (TrackerEvent), unique per integration.
"""

import hashlib
import json
import logging
import secrets as random
import uuid
from collections.abc import Callable, Iterable
from datetime import timedelta

from sqlalchemy import func, insert, select, update
from sqlalchemy.exc import IntegrityError

from svc import audit, database, secrets
from svc.config import setting
from svc.errors import (
    Conflict,
    NotFound,
    TrackerCheckFailed,
    TrackerRefused,
    Unauthorized,
    not_found,
)
from svc.extensions import db
from svc.integrations import TRACKERS
from svc.integrations.base import Connection, Content, Event, Linked, TrackerError
from svc.models import (
    DONE_STATUSES,
    MEMBER,
    OWNER,
    VIEWER,
    ExternalIssue,
    Integration,
    IntegrationCall,
    Project,
    Report,
    TrackerEvent,
    User,
)
from svc.models.activity import CHANGED, LINKED
from svc.models.base import utcnow
from svc.models.integrations import CLOSE, CLOSED, CREATE, OPEN, REOPEN
from svc.models.webhooks import FAILED, PENDING, SUCCEEDED
from svc.services import activity, projects, reporter_mails, stats
from svc.services.listing import Page, with_tracking_ids
from svc.webhooks import delivery, payloads

log = logging.getLogger(__name__)
# A report's issue body shows at most this many of each captured list (docs/api.md §15).
LIST_ITEMS = 20
LAST_EVENTS = 20
LEASE_MARGIN = timedelta(seconds=60)


# --- the integrations ----------------------------------------------------------------------------


def create(user: User, project_id: uuid.UUID, data: dict) -> Integration:
    """A new integration; its `webhook_secret` is shown in this answer only."""
    projects.access(user, project_id, at_least=OWNER)
    integration = Integration(
        id=uuid.uuid4(),
        project_id=project_id,
        kind=data["kind"],
        name=data["name"],
        config=data["config"],
        token_encrypted=secrets.encrypt(data["token"]),
        webhook_secret=random.token_hex(24),
        auto_create=data.get("auto_create"),
        sync_status=data.get("sync_status", True),
        created_at=utcnow(),
    )
    db.session.add(integration)
    audit.record(
        audit.INTEGRATION_CREATED,
        user,
        ("integration", integration.id),
        project_id=project_id,
        kind=integration.kind,
        name=integration.name,
    )
    db.session.commit()
    integration.shown_secret = integration.webhook_secret
    return integration


def list_for(user: User, project_id: uuid.UUID) -> list[Integration]:
    projects.access(user, project_id)
    return list(
        db.session.scalars(
            select(Integration)
            .where(Integration.project_id == project_id)
            .order_by(Integration.created_at, Integration.id)
        )
    )


def get_for(user: User, integration_id: uuid.UUID, at_least: str = VIEWER) -> Integration:
    """The integration, if the user has a role in its project (404 otherwise), at least
    `at_least` (403 otherwise)."""
    integration = db.session.get(Integration, integration_id)
    if integration is None:
        raise not_found("Integration not found")
    try:
        projects.access(user, integration.project_id, at_least=at_least)
    except NotFound:
        raise not_found("Integration not found") from None
    return integration


def update_for(
    user: User, integration_id: uuid.UUID, changes: dict, check_config: Callable
) -> Integration:
    """`check_config(kind, config)` checks the merged config (the schema of its kind)."""
    integration = get_for(user, integration_id, OWNER)
    if "token" in changes:
        integration.token_encrypted = secrets.encrypt(changes["token"])
    if "config" in changes:
        integration.config = check_config(
            integration.kind, {**integration.config, **changes["config"]}
        )
    for field in ("name", "auto_create", "sync_status", "webhook_secret"):
        if field in changes:
            setattr(integration, field, changes[field])
    audit.record(
        audit.INTEGRATION_UPDATED,
        user,
        ("integration", integration.id),
        project_id=integration.project_id,
        fields=sorted(changes),
    )
    db.session.commit()
    return integration


def delete(user: User, integration_id: uuid.UUID) -> None:
    integration = get_for(user, integration_id, OWNER)
    audit.record(
        audit.INTEGRATION_DELETED,
        user,
        ("integration", integration.id),
        project_id=integration.project_id,
        kind=integration.kind,
        name=integration.name,
    )
    db.session.delete(integration)
    db.session.commit()


def test(user: User, integration_id: uuid.UUID) -> dict:
    """One harmless call to the tracker (reading the repository, project or account)."""
    integration = get_for(user, integration_id, MEMBER)
    tracker = TRACKERS[integration.kind]
    db.session.commit()  # nothing stays open while the tracker answers
    try:
        detail = tracker.check(_connection(integration))
    except TrackerError as exc:
        _note_outcome(integration_id, exc.words)
        raise TrackerCheckFailed(exc.words) from None
    _note_outcome(integration_id, None)
    return {"ok": True, "detail": detail}


def recent_events(user: User, integration_id: uuid.UUID) -> list[TrackerEvent]:
    get_for(user, integration_id)
    return list(
        db.session.scalars(
            select(TrackerEvent)
            .where(TrackerEvent.integration_id == integration_id)
            .order_by(TrackerEvent.received_at.desc(), TrackerEvent.id)
            .limit(LAST_EVENTS)
        )
    )


def calls_page(user: User, integration_id: uuid.UUID, page: int, page_size: int) -> Page:
    get_for(user, integration_id)
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
    get_for(user, integration_id, MEMBER)
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


def _connection(integration: Integration) -> Connection:
    """How to reach the tracker; TrackerError (final) when no key opens the token any more."""
    try:
        token = secrets.decrypt(integration.token_encrypted)
    except secrets.Undecryptable:
        raise TrackerError(
            "svc cannot decrypt this integration's token: SVC_ENCRYPTION_KEYS no longer holds "
            "the key it was stored with. Enter the token again.",
            401,
        ) from None
    return Connection(
        name=TRACKERS[integration.kind].NAME,
        config=integration.config,
        token=token,
        timeout=setting("SVC_WEBHOOK_TIMEOUT"),
        allow_private=setting("SVC_WEBHOOK_ALLOW_PRIVATE"),
        ca_bundle=setting("SVC_WEBHOOK_CA_BUNDLE"),
    )


def _note_outcome(integration_id: uuid.UUID, error: str | None) -> None:
    """The integration's lastUsedAt and lastError (None after a call that went through)."""
    db.session.execute(
        update(Integration)
        .where(Integration.id == integration_id)
        .values(last_used_at=utcnow(), last_error=error)
        .execution_options(synchronize_session=False)
    )
    db.session.commit()


# --- a report's issues ---------------------------------------------------------------------------


def issues_of(report_id: uuid.UUID) -> list[ExternalIssue]:
    return list(
        db.session.scalars(
            select(ExternalIssue)
            .where(ExternalIssue.report_id == report_id)
            .order_by(ExternalIssue.created_at, ExternalIssue.id)
        )
    )


def create_issue(user: User, report: Report, integration_id: uuid.UUID) -> ExternalIssue:
    """The report's issue in the integration's tracker, made now: 409 if it has one there, 502
    with the tracker's words if the tracker refuses (and nothing is recorded)."""
    integration = db.session.get(Integration, integration_id)
    if integration is None or integration.project_id != report.project_id:
        raise not_found("Integration not found")
    if _linked_issue(integration.id, report.id) is not None:
        raise Conflict("The report already has an issue in this integration")
    content, report_id, kind = _content(report), report.id, integration.kind
    db.session.commit()
    try:
        linked = TRACKERS[kind].create(_connection(integration), content)
    except TrackerError as exc:
        _note_outcome(integration_id, exc.words)
        raise TrackerRefused(exc.words) from None
    issue = _link(integration_id, kind, report_id, linked, user)
    if issue is None:
        raise Conflict("The report already has an issue in this integration")
    _note_outcome(integration_id, None)
    return issue


def _linked_issue(integration_id: uuid.UUID, report_id: uuid.UUID) -> ExternalIssue | None:
    return db.session.scalar(
        select(ExternalIssue).where(
            ExternalIssue.integration_id == integration_id, ExternalIssue.report_id == report_id
        )
    )


def _link(
    integration_id: uuid.UUID, kind: str, report_id: uuid.UUID, linked: Linked, user: User | None
) -> ExternalIssue | None:
    """Record the issue and the report's `linked` activity; None if another request linked one
    meanwhile (the unique constraint decides) or the report is gone."""
    report = db.session.get(Report, report_id)
    if report is None:
        db.session.rollback()
        return None
    now = utcnow()
    issue = ExternalIssue(
        id=uuid.uuid4(),
        report_id=report_id,
        integration_id=integration_id,
        kind=kind,
        remote_id=linked.remote_id,
        key=linked.key,
        url=linked.url,
        address=linked.address,
        state=CLOSED if linked.closed else OPEN,
        created_at=now,
        updated_at=now,
    )
    db.session.add(issue)
    activity.record(report, user, LINKED, {"issue": {"from": None, "to": linked.key}}, via=kind)
    try:
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        return None
    return issue


def _content(report: Report) -> Content:
    """What the issue says: never more than the report showed (its logs were redacted when it
    was filed), at most LIST_ITEMS of each list."""
    detail = report.detail
    meta = report.meta or {}
    facts = [("Severity", report.severity), ("Category", report.category)]
    for name, key in (("Page", "url"), ("Browser", "userAgent"), ("Viewport", "viewport")):
        if isinstance(meta.get(key), str | int | float) and str(meta[key]):
            facts.append((name, str(meta[key])))
    if report.reporter_identifier:
        facts.append(("Reported by", report.reporter_identifier))
    console = [
        f"[{entry.get('level')}] {entry.get('message', '')}"
        for entry in (detail.console_logs if detail else [])
        if isinstance(entry, dict) and entry.get("level") == "error"
    ][-LIST_ITEMS:]
    failed = [
        f"{entry.get('method', 'GET')} {entry.get('url', '')} -> {entry.get('status')}"
        for entry in (detail.network_logs if detail else [])
        if isinstance(entry, dict) and _failed_request(entry.get("status"))
    ][-LIST_ITEMS:]
    actions = [
        " ".join(str(entry.get(key)) for key in ("type", "target") if entry.get(key))
        for entry in (detail.user_actions if detail else [])
        if isinstance(entry, dict)
    ][-LIST_ITEMS:]
    links = []
    public_url = (setting("SVC_PUBLIC_URL") or "").rstrip("/")
    if public_url:
        links.append((f"{report.tracking_id} in svc", f"{public_url}/reports/{report.tracking_id}"))
        for name, key in (
            ("Screenshot", report.screenshot_key),
            ("Annotated screenshot", report.annotated_screenshot_key),
        ):
            if key:
                links.append((name, f"{public_url}/api/v1/screenshots/{key}"))
    return Content(
        title=f"[{report.tracking_id}] {report.title}",
        description=report.description,
        facts=facts,
        lists=[("Console errors", console), ("Failed requests", failed), ("Last actions", actions)],
        links=links,
    )


def _failed_request(status) -> bool:
    return status == 0 or (isinstance(status, int) and status >= 400)


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
    issue = _linked_issue(integration.id, report.id)
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
    content = _content(report) if action == CREATE else None
    address = issue.address if issue else None
    db.session.commit()  # no transaction stays open while the tracker takes its time
    try:
        connection = _connection(integration)
        if action == CREATE:
            linked = tracker.create(connection, content)
        else:
            tracker.set_state(connection, address, action == CLOSE)
    except TrackerError as exc:
        log.info("integration call %s attempt %d: %s", call_id, attempt_number, exc.words)
        _note_outcome(integration.id, exc.words)
        if address is not None:
            error = f"{action.capitalize()} failed: {exc.words}"
            _set_issue(integration.id, report_id, last_error=error[:500])
        _finish(call_id, attempt_number, exc.status_code, exc.words, exc.final, exc.retry_after)
        return
    if action == CREATE:
        _link(integration.id, kind, report_id, linked, None)
    else:
        state = CLOSED if action == CLOSE else OPEN
        _set_issue(integration.id, report_id, state=state, last_error=None)
    _note_outcome(integration.id, None)
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
    elif attempt_number <= len(delays) and not final:
        delay = max(delays[attempt_number - 1], wait)
        values.update(next_attempt_at=now + timedelta(seconds=delay))
    else:
        values.update(status=FAILED, next_attempt_at=None)
    db.session.execute(
        update(IntegrationCall)
        .where(IntegrationCall.id == call_id, IntegrationCall.attempts == attempt_number)
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    db.session.commit()


# --- what the trackers send ----------------------------------------------------------------------


def apply_event(integration_id: uuid.UUID, headers: dict, body: bytes) -> str:
    """A tracker's delivery: checked against the integration's secret (401 when it does not
    match), applied once per delivery id. What svc made of it, in words."""
    integration = db.session.get(Integration, integration_id)
    if integration is None:
        raise Unauthorized("Unknown integration or bad signature")
    tracker = TRACKERS[integration.kind]
    if not tracker.verify(integration.webhook_secret, headers, body):
        raise Unauthorized("Unknown integration or bad signature")
    delivery_id = tracker.delivery_id(headers) or hashlib.sha256(body).hexdigest()
    receipt = TrackerEvent(
        id=uuid.uuid4(),
        integration_id=integration_id,
        delivery_id=delivery_id[:200],
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
        event = tracker.read_event(headers, payload) if isinstance(payload, dict) else None
    except (KeyError, TypeError, ValueError):
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
    # The issue moved (a Jira project) or its repository was renamed: follow it.
    issue.key, issue.url, issue.address = event.issue.key, event.issue.url, event.issue.address
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
    _set_status_from_tracker(report, new_status, integration)
    return f"{report.tracking_id} {new_status} ({happened})"


def _status_after(status: str, event: Event) -> str | None:
    if event.closed and status not in DONE_STATUSES:
        return "resolved"
    if not event.closed and status in DONE_STATUSES:
        return "in_progress"
    return None


def _set_status_from_tracker(report: Report, status: str, integration: Integration) -> None:
    """As a member's change would (counters, webhook, activity), with no actor but the
    tracker, and telling the report's other trackers, never this one."""
    before = stats.Counted.of(report)
    old = report.status
    changed = {"status": {"from": old, "to": status}}
    report.status = status
    report.updated_at = utcnow()
    stats.recount(report, before)
    project = db.session.get(Project, report.project_id)
    delivery.record(project, payloads.UPDATED, report, changed)
    activity.record(report, None, CHANGED, changed, via=integration.kind)
    status_changed(report, old, status, except_integration=integration.id)
    reporter_mails.status_changed(report, old, status)
