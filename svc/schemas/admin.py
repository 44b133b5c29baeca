"""The instance's administration (docs/api.md §5, §13): accounts as an administrator sees them,
health and status."""

from marshmallow import fields

from svc.schemas.base import InSchema, OutSchema, Timestamp
from svc.schemas.users import UserOut


class AdminUserOut(UserOut):
    """An account as the admin page lists it."""

    active = fields.Boolean(required=True)
    last_sign_in_at = Timestamp(required=True, allow_none=True)
    second_factors = fields.List(fields.String(), required=True)  # the kinds: passkey, totp
    single_sign_on = fields.Boolean(required=True)


class AdminUserIn(InSchema):
    active = fields.Boolean()
    is_admin = fields.Boolean()


class _StandbyHealth(OutSchema):
    holder = fields.String(required=True)
    since = Timestamp(required=True)
    renewed_at = Timestamp(required=True)


class _SchedulerHealth(OutSchema):
    holder = fields.String(required=True, allow_none=True)
    since = Timestamp(required=True, allow_none=True)
    renewed_at = Timestamp(required=True, allow_none=True)
    standbys = fields.List(fields.Nested(_StandbyHealth), required=True)


class _OutboxHealth(OutSchema):
    webhooks_pending = fields.Integer(required=True)
    mails_pending = fields.Integer(required=True)
    tracker_calls_pending = fields.Integer(required=True)
    events_pending = fields.Integer(required=True)  # reports' events not yet fanned out
    notifications_pending = fields.Integer(required=True)  # not yet mailed
    oldest_pending_at = Timestamp(required=True, allow_none=True)
    reporter_mails_limited = fields.Integer(required=True)
    signatures_outdated = fields.Integer(required=True)
    # The newest mail that met an error (the SMTP server's answer), and when it was queued.
    last_mail_error = fields.String(required=True, allow_none=True)
    last_mail_error_at = Timestamp(required=True, allow_none=True)


class _PartHealth(OutSchema):
    kind = fields.String(required=True)
    ok = fields.Boolean(required=True)


class _ReproductionsHealth(OutSchema):
    unavailable = fields.String(required=True, allow_none=True)
    queued = fields.Integer(required=True)


class HealthOut(OutSchema):
    scheduler = fields.Nested(_SchedulerHealth, required=True)
    outbox = fields.Nested(_OutboxHealth, required=True)
    storage = fields.Nested(_PartHealth, required=True)
    database = fields.Nested(_PartHealth, required=True)
    reproductions = fields.Nested(_ReproductionsHealth, required=True)


class InstanceStatusOut(OutSchema):
    mail_enabled = fields.Boolean(required=True)
    mail_from = fields.String(required=True)
    public_url = fields.String(required=True, allow_none=True)
    registration = fields.String(required=True)
    mails_pending = fields.Integer(required=True)
    mails_failed = fields.Integer(required=True)
    last_mail_error = fields.String(required=True, allow_none=True)
    second_factor_required = fields.Boolean(required=True)
