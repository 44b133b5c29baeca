"""Accounts (docs/api.md §3): registering, signing in, passwords, the user as shown, and what the
sign-in page offers."""

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


class _SingleSignOnOut(OutSchema):
    name = fields.String(required=True)
    url = fields.String(required=True)


class SignInMethodsOut(OutSchema):
    """What the sign-in page offers."""

    password = fields.Boolean(required=True)
    registration = fields.String(required=True)
    single_sign_on = fields.Nested(_SingleSignOnOut, required=True, allow_none=True)
