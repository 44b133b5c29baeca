"""A project's issue trackers (docs/api.md §15, docs/integrations.md): the integrations
themselves, and the issues a report has there (made now by a member, or by the outbox).

Its neighbours: svc.services.trackers.tracker_calls, the outbox of calls svc makes to trackers in
the
background (auto-create, closing and reopening), and svc.services.trackers.tracker_events, what a
tracker's deliveries change. Three rules hold them together:
- A call to a tracker never runs inside a database transaction, and never inside the request
  that filed a report: auto-create and the sync's closing and reopening are rows of an outbox
  (IntegrationCall) the scheduler works, with retries, as it does webhooks.
- A change that came from a tracker is never sent back to it (tracker_events records calls for
  the report's other linked issues only).
- A tracker's delivery is applied once: its id is kept (TrackerEvent), unique per integration.
"""

import secrets as random
import uuid
from collections.abc import Callable

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from svc import audit, secrets
from svc.config import report_url, setting
from svc.errors import (
    Conflict,
    NotFound,
    TrackerCheckFailed,
    TrackerRefused,
    field_error,
    not_found,
)
from svc.extensions import db
from svc.integrations import TRACKERS
from svc.integrations.base import Connection, Content, Linked, TrackerError, host_of, reading
from svc.models import (
    MEMBER,
    OWNER,
    VIEWER,
    ExternalIssue,
    Integration,
    Report,
    User,
    failed_request,
)
from svc.models.activity import LINKED
from svc.models.base import utcnow
from svc.models.integrations import CLOSED, OPEN
from svc.services import projects
from svc.services.listing import Shown
from svc.services.reporting import activity

# A report's issue body shows at most this many of each captured list (docs/api.md §15).
LIST_ITEMS = 20
# The settings that say where the token is sent, or for whom (docs/integrations.md, "Tokens").
WHERE_THE_TOKEN_GOES = ("api_url", "site_url", "email", "repository", "project")


# --- the integrations ----------------------------------------------------------------------------


def create(user: User, project_id: uuid.UUID, data: dict) -> Shown:
    """A new integration; its `webhook_secret` is shown in this answer only (`shown_secret`)."""
    projects.access(user, project_id, at_least=OWNER)
    webhook_secret = random.token_hex(24)
    integration = Integration(
        id=uuid.uuid4(),
        project_id=project_id,
        kind=data["kind"],
        name=data["name"],
        config=data["config"],
        token_encrypted=secrets.encrypt(data["token"]),
        webhook_secret_encrypted=secrets.encrypt(webhook_secret),
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
    return Shown(integration, shown_secret=webhook_secret)


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
    """`check_config(kind, config)` checks the merged config (the schema of its kind). A
    change of where the token goes (the host, the account's e-mail, the repository or project)
    needs the token in the same request: the write-only token is never sent somewhere its
    owner did not give it to."""
    integration = get_for(user, integration_id, OWNER)
    before = integration.config
    if "config" in changes:
        merged = check_config(integration.kind, {**integration.config, **changes["config"]})
        moved = sorted(key for key in WHERE_THE_TOKEN_GOES if merged.get(key) != before.get(key))
        if moved and "token" not in changes:
            raise field_error(
                "token",
                f"Changing {', '.join(moved)} sends the token somewhere else: give the token "
                "again in the same request.",
            )
        integration.config = merged
    if "token" in changes:
        integration.token_encrypted = secrets.encrypt(changes["token"])
    if "webhook_secret" in changes:
        integration.webhook_secret_encrypted = secrets.encrypt(changes["webhook_secret"])
    for field in ("name", "auto_create", "sync_status"):
        if field in changes:
            setattr(integration, field, changes[field])
    audit.record(
        audit.INTEGRATION_UPDATED,
        user,
        ("integration", integration.id),
        project_id=integration.project_id,
        fields=sorted(changes),
        **_host_change(integration.kind, before, integration.config),
    )
    db.session.commit()
    return integration


def _host_change(kind: str, before: dict, after: dict) -> dict:
    """The audit entry's `fromHost` and `toHost` when the tracker's host changed."""
    old, new = (host_of(TRACKERS[kind].api_of(config)) for config in (before, after))
    return {"fromHost": old, "toHost": new} if old != new else {}


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
        with reading(tracker.NAME):
            detail = tracker.check(connection(integration))
    except TrackerError as exc:
        note_outcome(integration_id, exc.words)
        raise TrackerCheckFailed(exc.words) from None
    note_outcome(integration_id, None)
    return {"ok": True, "detail": detail}


def connection(integration: Integration) -> Connection:
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


def webhook_secret_of(integration: Integration) -> str | None:
    """The secret its tracker signs deliveries with; None when no key opens it any more."""
    try:
        return secrets.decrypt(integration.webhook_secret_encrypted)
    except secrets.Undecryptable:
        return None


def note_outcome(integration_id: uuid.UUID, error: str | None) -> None:
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
    with the tracker's words if the tracker refuses (and nothing is recorded). A duplicate's
    issue is made for its primary, where its problem is worked (docs/api.md §8.11); an issue
    it had before it was merged stays with it."""
    report = report.primary  # a duplicate's issue is its primary's
    integration = db.session.get(Integration, integration_id)
    if integration is None or integration.project_id != report.project_id:
        raise not_found("Integration not found")
    if linked_issue(integration.id, report.id) is not None:
        raise Conflict("The report already has an issue in this integration")
    content, report_id, kind = content_of(report), report.id, integration.kind
    db.session.commit()
    try:
        with reading(TRACKERS[kind].NAME):
            linked = TRACKERS[kind].create(connection(integration), content)
    except TrackerError as exc:
        note_outcome(integration_id, exc.words)
        raise TrackerRefused(exc.words) from None
    issue = link(integration_id, kind, report_id, linked, user)
    if issue is None:
        raise Conflict("The report already has an issue in this integration")
    note_outcome(integration_id, None)
    return issue


def linked_issue(integration_id: uuid.UUID, report_id: uuid.UUID) -> ExternalIssue | None:
    return db.session.scalar(
        select(ExternalIssue).where(
            ExternalIssue.integration_id == integration_id, ExternalIssue.report_id == report_id
        )
    )


def link(
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
    # A member's, or auto-create's (no actor): an issue made with the project's token.
    audit.record(
        audit.ISSUE_CREATED,
        user,
        ("report", report_id),
        project_id=report.project_id,
        trackingId=report.tracking_id,
        integrationId=str(integration_id),
        issue=linked.key,
    )
    try:
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        return None
    return issue


def content_of(report: Report) -> Content:
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
        if isinstance(entry, dict) and failed_request(entry)
    ][-LIST_ITEMS:]
    actions = [
        " ".join(str(entry.get(key)) for key in ("type", "target") if entry.get(key))
        for entry in (detail.user_actions if detail else [])
        if isinstance(entry, dict)
    ][-LIST_ITEMS:]
    links = []
    page = report_url(report.tracking_id, configured_only=True)
    if page:
        public_url = setting("SVC_PUBLIC_URL").rstrip("/")
        links.append((f"{report.tracking_id} in svc", page))
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
