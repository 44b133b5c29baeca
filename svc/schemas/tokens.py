from marshmallow import fields, validate

from svc.schemas.base import InSchema, OneLine, OutSchema, Timestamp


class TokenCreateIn(InSchema):
    name = OneLine(required=True, validate=validate.Length(min=1, max=100))
    expires_in_days = fields.Integer(
        strict=True, load_default=30, validate=validate.Range(min=1, max=365)
    )
    # Omitted or empty: everything the user may do. ["reports:read"]: a coding agent's token.
    scopes = fields.List(
        fields.String(validate=validate.OneOf(("reports:read", "reports:write"))),
        load_default=None,
        validate=validate.Length(max=2),
    )


class TokenOut(OutSchema):
    id = fields.UUID(required=True)
    name = fields.String(required=True)
    token_hint = fields.String(required=True)
    created_at = Timestamp(required=True)
    expires_at = Timestamp(required=True)
    last_used_at = Timestamp(required=True, allow_none=True)
    # null: everything its user may do.
    scopes = fields.Function(
        lambda token: token.scopes.split() if token.scopes else None, required=True
    )


class TokenCreatedOut(TokenOut):
    token = fields.String(required=True, attribute="value")
