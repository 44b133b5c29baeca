from marshmallow import ValidationError, fields, validate, validates_schema

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
    last_mail_error = fields.String(required=True, allow_none=True)
    second_factor_required = fields.Boolean(required=True)


# Second factors (docs/identity.md) ---------------------------------------------------------


class PendingSignInOut(OutSchema):
    """A password sign-in's answer (202) when a second factor is due: no session yet."""

    methods = fields.List(fields.String(), required=True)
    enrol = fields.Boolean(required=True)
    expires_at = Timestamp(required=True)


class SecondFactorAnswerIn(InSchema):
    """One of: a TOTP code, a recovery code, a passkey's answer (PublicKeyCredential JSON)."""

    code = fields.String(validate=validate.Length(min=1, max=20))
    recovery_code = fields.String(validate=validate.Length(min=1, max=40))
    credential = fields.Dict()

    @validates_schema
    def one_answer(self, data, **kwargs):
        if len(data) != 1:
            raise ValidationError("Give one of code, recovery_code or credential.", "code")


class SignedInOut(UserOut):
    """The user signed in; with `recoveryCodes` when this sign-in enrolled a first factor."""

    recovery_codes = fields.List(fields.String())


class TotpSetupOut(OutSchema):
    id = fields.UUID()
    secret = fields.String(required=True)
    otpauth_uri = fields.String(required=True)
    qr_code = fields.String(required=True)  # an SVG as a data: URL


class TotpConfirmIn(InSchema):
    code = fields.String(required=True, validate=validate.Length(min=1, max=20))


class RecoveryCodesOut(OutSchema):
    recovery_codes = fields.List(fields.String(), required=True)


class SecondFactorOut(OutSchema):
    id = fields.UUID(required=True)
    kind = fields.String(required=True)
    name = fields.String(required=True)
    created_at = Timestamp(required=True)
    last_used_at = Timestamp(required=True, allow_none=True)


class EnrolledOut(SecondFactorOut):
    """A factor just enrolled; a user's first comes with their recovery codes, shown once."""

    recovery_codes = fields.List(fields.String(), allow_none=True)


class SignInSecurityOut(OutSchema):
    """How the signed-in user signs in (the account page)."""

    sign_in_methods = fields.List(fields.String(), required=True)
    factors = fields.List(fields.Nested(SecondFactorOut), required=True)
    recovery_codes_left = fields.Integer(required=True)
    second_factor_required = fields.Boolean(required=True)


class PasskeyOptionsOut(OutSchema):
    # WebAuthn's own JSON (camelCase already), for navigator.credentials.create() or .get().
    public_key = fields.Dict(required=True)
    ticket = fields.String()


class PasskeyIn(InSchema):
    name = OneLine(load_default="Passkey", validate=validate.Length(min=1, max=100))
    credential = fields.Dict(required=True)
    ticket = fields.String(required=True, validate=validate.Length(min=1, max=1000))


class _SingleSignOnOut(OutSchema):
    name = fields.String(required=True)
    url = fields.String(required=True)


class SignInMethodsOut(OutSchema):
    """What the sign-in page offers."""

    password = fields.Boolean(required=True)
    registration = fields.String(required=True)
    single_sign_on = fields.Nested(_SingleSignOnOut, required=True, allow_none=True)
