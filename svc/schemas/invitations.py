from marshmallow import fields, validate

from svc.models import MEMBER, ROLES
from svc.schemas.base import EmailAddress, InSchema, OneLine, OutSchema, Timestamp
from svc.schemas.projects import ProjectSummaryOut
from svc.schemas.users import PASSWORD, UserOut

TOKEN = validate.Length(min=1, max=200)


class InvitationIn(InSchema):
    email = EmailAddress(required=True)
    role = fields.String(load_default=MEMBER, validate=validate.OneOf(ROLES))


class InviterOut(OutSchema):
    id = fields.UUID(required=True)
    name = fields.String(required=True)


class InvitationOut(OutSchema):
    id = fields.UUID(required=True)
    project_id = fields.UUID(required=True)
    email = fields.String(required=True)
    role = fields.String(required=True, validate=validate.OneOf(ROLES))
    # Null once the inviter's account is gone.
    invited_by = fields.Nested(InviterOut, required=True, allow_none=True)
    created_at = Timestamp(required=True)
    expires_at = Timestamp(required=True)


class InvitationLinkOut(InvitationOut):
    """A new or resent invitation, with the link: shown in this answer and the mail only."""

    url = fields.String(required=True)


class InvitationTokenIn(InSchema):
    token = fields.String(required=True, validate=TOKEN)


class AcceptIn(InvitationTokenIn):
    """`token` alone with a session; `name` and `password` too without one (a new account)."""

    name = OneLine(validate=validate.Length(min=1, max=100))
    password = fields.String(validate=PASSWORD)


class AcceptedOut(OutSchema):
    user = fields.Nested(UserOut, required=True)
    project = fields.Nested(ProjectSummaryOut, required=True)


class InvitationPreviewOut(OutSchema):
    """What the invitation page shows before accepting."""

    email = fields.String(required=True)
    role = fields.String(required=True, validate=validate.OneOf(ROLES))
    project_name = fields.String(required=True, attribute="project.name")
    invited_by = fields.Nested(InviterOut, required=True, allow_none=True)
    expires_at = Timestamp(required=True)
    # Whether to offer signing in or creating the account.
    account_exists = fields.Boolean(required=True)
