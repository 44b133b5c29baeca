"""The instance's administration (docs/api.md §5): accounts, their activity and their
administrators. Deactivating ends the account's sessions at once; its personal access tokens
are refused while it stays deactivated (svc.auth.guard) and work again if it is reactivated."""

import uuid
from collections import defaultdict
from datetime import timedelta

from sqlalchemy import func, select, true

from svc import audit, storage
from svc.auth import sessions
from svc.config import setting
from svc.errors import Conflict, StorageUnavailable, not_found
from svc.extensions import db
from svc.mail import outbox
from svc.models import (
    IntegrationCall,
    Notification,
    OutgoingMail,
    ReportEvent,
    Reproduction,
    SecondFactor,
    User,
    WebhookDelivery,
)
from svc.models.base import utcnow
from svc.models.mail import FAILED, LIMITED, PENDING
from svc.models.reproductions import QUEUED
from svc.services.grouping import signatures
from svc.services.identity import password_resets, users
from svc.services.instance import leadership
from svc.services.listing import Shown
from svc.services.reproductions import runs

LAST_ADMIN = "The instance needs an active administrator: make someone else one first"


def list_users() -> list[Shown]:
    """Every account, with the kinds of second factor it has and whether it signs in with single
    sign-on (the admin page says so beside "Reset second factors")."""
    return _listed(list(db.session.scalars(select(User).order_by(User.created_at, User.id))))


def _listed(users: list[User]) -> list[Shown]:
    confirmed = select(SecondFactor.user_id, SecondFactor.kind).where(
        SecondFactor.confirmed_at.is_not(None),
        SecondFactor.user_id.in_([user.id for user in users]),
    )
    kinds = defaultdict(set)
    for user_id, kind in db.session.execute(confirmed):
        kinds[user_id].add(kind)
    return [
        Shown(user, second_factors=sorted(kinds[user.id]), single_sign_on=bool(user.oidc_subject))
        for user in users
    ]


_CHANGE_ACTIONS = {
    ("active", False): audit.USER_DEACTIVATED,
    ("active", True): audit.USER_REACTIVATED,
    ("is_admin", True): audit.ADMIN_GRANTED,
    ("is_admin", False): audit.ADMIN_REVOKED,
}


def update_user(admin: User, user_id: uuid.UUID, changes: dict) -> Shown:
    """Set `active` and/or `is_admin`; the last active administrator keeps both (409)."""
    user = _user(user_id)
    losing_admin = (
        user.is_admin
        and user.active
        and (changes.get("active") is False or changes.get("is_admin") is False)
    )
    if losing_admin and _other_active_admins(user.id) == 0:
        db.session.rollback()
        raise Conflict(LAST_ADMIN)
    for field in ("active", "is_admin"):
        if field in changes and getattr(user, field) != changes[field]:
            setattr(user, field, changes[field])
            audit.record(_CHANGE_ACTIONS[field, changes[field]], admin, ("user", user.id))
    db.session.commit()
    if changes.get("active") is False:
        sessions.end_sessions_of(user.id)
    return _listed([user])[0]


def _other_active_admins(user_id: uuid.UUID) -> int:
    """Counted with the administrators' rows locked, so two admins demoting each other at once
    cannot leave none (PostgreSQL; SQLite's writes are serial already)."""
    others = db.session.scalars(
        select(User.id)
        .where(User.is_admin.is_(True), User.active.is_(True), User.id != user_id)
        .with_for_update()
    ).all()
    return len(others)


def send_reset_link(admin: User, user_id: uuid.UUID) -> None:
    user = _user(user_id)
    if not user.active:
        raise Conflict("This account is deactivated: reactivate it first")
    audit.record(audit.RESET_LINK_SENT, admin, ("user", user.id))
    password_resets.send_reset_link(user)


def make_admin(email: str) -> User:
    """For the operator's `flask --app svc make-admin`: also reactivates the account."""
    user = by_email(email)
    if not user.is_admin:
        audit.record(audit.ADMIN_GRANTED, None, ("user", user.id), via="operator")
    if not user.active:
        audit.record(audit.USER_REACTIVATED, None, ("user", user.id), via="operator")
    user.is_admin = True
    user.active = True
    db.session.commit()
    return user


def status() -> dict:
    """What the admin page tells about the instance's mail."""
    counts = dict(
        db.session.execute(
            select(OutgoingMail.status, func.count())
            .where(OutgoingMail.status.in_((PENDING, FAILED)))
            .group_by(OutgoingMail.status)
        ).all()
    )
    return {
        "mail_enabled": bool(setting("SVC_SMTP_URL")),
        "mail_from": outbox.sender_address(),
        "public_url": setting("SVC_PUBLIC_URL"),
        "registration": setting("SVC_REGISTRATION"),
        "mails_pending": counts.get(PENDING, 0),
        "mails_failed": counts.get(FAILED, 0),
        "second_factor_required": setting("SVC_REQUIRE_2FA"),
        # The newest mail that went wrong says why (the server refused STARTTLS, a password):
        # shown on the admin page, not only in the scheduler's log.
        "last_mail_error": db.session.scalar(
            select(OutgoingMail.last_error)
            .where(OutgoingMail.last_error.is_not(None))
            .order_by(OutgoingMail.created_at.desc())
            .limit(1)
        ),
    }


def health() -> dict:
    """GET /admin/health: the active scheduler, the outboxes' backlog, the store, the database
    (which answered the queries before it, or this would be a 503)."""
    # Everything that waits for the scheduler: the three outboxes, the reports' events not yet
    # fanned out, the notifications not yet mailed.
    waiting = {
        "webhooks": (WebhookDelivery, WebhookDelivery.status == PENDING),
        "mails": (OutgoingMail, OutgoingMail.status == PENDING),
        "tracker_calls": (IntegrationCall, IntegrationCall.status == PENDING),
        "events": (ReportEvent, true()),
        "notifications": (Notification, Notification.mailed_at.is_(None)),
    }
    outbox_rows = {
        name: db.session.execute(
            select(func.count(), func.min(model.created_at)).where(condition)
        ).one()
        for name, (model, condition) in waiting.items()
    }
    oldest = [first for _, first in outbox_rows.values() if first is not None]
    limited = db.session.scalar(
        select(func.count()).where(
            OutgoingMail.status == LIMITED, OutgoingMail.created_at > utcnow() - timedelta(days=1)
        )
    )
    # The newest mail that met an error: a refused relay is otherwise a line in the scheduler's
    # log alone (the outbox keeps SVC_MAIL_LOG_DAYS of mails).
    last_mail_error = db.session.execute(
        select(OutgoingMail.last_error, OutgoingMail.created_at)
        .where(OutgoingMail.last_error.is_not(None))
        .order_by(OutgoingMail.created_at.desc())
        .limit(1)
    ).first()
    store = storage.current_store()
    try:
        store.check()
        store_ok = True
    except StorageUnavailable:
        store_ok = False
    return {
        "scheduler": {**leadership.current(), "standbys": leadership.standbys()},
        "outbox": {
            "webhooks_pending": outbox_rows["webhooks"][0],
            "mails_pending": outbox_rows["mails"][0],
            "tracker_calls_pending": outbox_rows["tracker_calls"][0],
            "events_pending": outbox_rows["events"][0],
            "notifications_pending": outbox_rows["notifications"][0],
            "oldest_pending_at": min(oldest, default=None),
            # reporter mails not sent in the last 24 hours: over an address's daily limits
            "reporter_mails_limited": limited,
            # signature rows made by older rules, which the sign-reports job makes again
            "signatures_outdated": signatures.outdated(),
            "last_mail_error": last_mail_error.last_error if last_mail_error else None,
            "last_mail_error_at": last_mail_error.created_at if last_mail_error else None,
        },
        "storage": {"kind": store.kind, "ok": store_ok},
        "database": {"kind": db.engine.dialect.name, "ok": True},
        # Runs of reports' steps on staging (docs/repro-kit.md): why this host cannot, if so.
        "reproductions": {
            "unavailable": runs.unavailable(),
            "queued": db.session.scalar(select(func.count()).where(Reproduction.status == QUEUED)),
        },
    }


def by_email(email: str) -> User:
    user = db.session.scalar(select(User).where(User.email == users.normalize_email(email)))
    if user is None:
        raise not_found(f"No account has the address {email}")
    return user


def _user(user_id: uuid.UUID) -> User:
    user = db.session.get(User, user_id)
    if user is None:
        raise not_found("User not found")
    return user
