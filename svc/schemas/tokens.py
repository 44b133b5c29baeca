from marshmallow import fields, validate

from svc.schemas.base import InSchema, OneLine, OutSchema, Timestamp


class TokenCreateIn(InSchema):
    name = OneLine(required=True, validate=validate.Length(min=1, max=100))
    expires_in_days = fields.Integer(
        strict=True, load_default=30, validate=validate.Range(min=1, max=365)
    )


class TokenOut(OutSchema):
    id = fields.UUID(required=True)
    name = fields.String(required=True)
    token_hint = fields.String(required=True)
    created_at = Timestamp(required=True)
    expires_at = Timestamp(required=True)
    last_used_at = Timestamp(required=True, allow_none=True)


class TokenCreatedOut(TokenOut):
    token = fields.String(required=True, attribute="value")
