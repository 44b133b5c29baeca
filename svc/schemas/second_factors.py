"""Second factors and passkeys (docs/api.md §3.1, docs/identity.md)."""

from marshmallow import ValidationError, fields, validate, validates_schema

from svc.schemas.base import InSchema, OneLine, OutSchema, Timestamp
from svc.schemas.users import UserOut


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


class ProofIn(InSchema):
    """Who changes how an account signs in proves it is its owner: the current password, or a
    current code (an enrolled authenticator app's, or a recovery code)."""

    current_password = fields.String(validate=validate.Length(max=128))
    current_code = fields.String(validate=validate.Length(max=40))


class TotpConfirmIn(ProofIn):
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


class PasskeyIn(ProofIn):
    name = OneLine(load_default="Passkey", validate=validate.Length(min=1, max=100))
    credential = fields.Dict(required=True)
    ticket = fields.String(required=True, validate=validate.Length(min=1, max=1000))
