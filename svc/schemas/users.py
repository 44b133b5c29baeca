from marshmallow import fields, validate

from svc.schemas.base import EmailAddress, InSchema, OneLine, OutSchema, Timestamp

PASSWORD = validate.Length(min=8, max=128)


class RegisterIn(InSchema):
    name = OneLine(required=True, validate=validate.Length(min=1, max=100))
    email = EmailAddress(required=True)
    password = fields.String(required=True, validate=PASSWORD)


class LoginIn(InSchema):
    email = fields.String(required=True, validate=validate.Length(min=1, max=320))
    # Bounded only so that hashing cannot be made expensive; the policy is not revealed here.
    password = fields.String(required=True, validate=validate.Length(min=1, max=1024))


class PasswordChangeIn(InSchema):
    current_password = fields.String(required=True, validate=validate.Length(min=1, max=1024))
    new_password = fields.String(required=True, validate=PASSWORD)


class ForgotPasswordIn(InSchema):
    email = fields.String(required=True, validate=validate.Length(min=1, max=320))


class ResetPasswordIn(InSchema):
    token = fields.String(required=True, validate=validate.Length(min=1, max=200))
    password = fields.String(required=True, validate=PASSWORD)


class UserOut(OutSchema):
    id = fields.UUID(required=True)
    name = fields.String(required=True)
    email = fields.String(required=True)
    is_admin = fields.Boolean(required=True)
    created_at = Timestamp(required=True)


class AdminUserOut(UserOut):
    """An account as the admin page lists it."""

    active = fields.Boolean(required=True)
    last_sign_in_at = Timestamp(required=True, allow_none=True)


class AdminUserIn(InSchema):
    active = fields.Boolean()
    is_admin = fields.Boolean()


class _SchedulerHealth(OutSchema):
    holder = fields.String(required=True, allow_none=True)
    since = Timestamp(required=True, allow_none=True)
    renewed_at = Timestamp(required=True, allow_none=True)


class _OutboxHealth(OutSchema):
    webhooks_pending = fields.Integer(required=True)
    mails_pending = fields.Integer(required=True)
    oldest_pending_at = Timestamp(required=True, allow_none=True)


class _PartHealth(OutSchema):
    kind = fields.String(required=True)
    ok = fields.Boolean(required=True)


class HealthOut(OutSchema):
    scheduler = fields.Nested(_SchedulerHealth, required=True)
    outbox = fields.Nested(_OutboxHealth, required=True)
    storage = fields.Nested(_PartHealth, required=True)
    database = fields.Nested(_PartHealth, required=True)


class InstanceStatusOut(OutSchema):
    mail_enabled = fields.Boolean(required=True)
    mail_from = fields.String(required=True)
    public_url = fields.String(required=True, allow_none=True)
    registration = fields.String(required=True)
    mails_pending = fields.Integer(required=True)
    mails_failed = fields.Integer(required=True)
