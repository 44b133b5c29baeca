from marshmallow import ValidationError, fields, validate, validates_schema

from svc.models import CATEGORIES, SEVERITIES, STATUSES
from svc.schemas.base import InSchema, OutSchema

MAX_BULK = 500
REPORT_IDS = fields.List(
    fields.String(validate=validate.Length(min=1, max=64)),
    required=True,
    validate=validate.Length(min=1, max=MAX_BULK),
)


class BulkSetIn(InSchema):
    status = fields.String(validate=validate.OneOf(STATUSES))
    severity = fields.String(validate=validate.OneOf(SEVERITIES))
    category = fields.String(validate=validate.OneOf(CATEGORIES))
    assignee_id = fields.UUID(allow_none=True)

    @validates_schema
    def something_to_set(self, data, **kwargs):
        if not data:
            raise ValidationError("Give at least one of status, severity, category, assignee_id.")


class BulkUpdateIn(InSchema):
    """`ids`: 1 to 500 report ids or tracking ids (WS-12)."""

    ids = REPORT_IDS
    set = fields.Nested(BulkSetIn, required=True)


class BulkDeleteIn(InSchema):
    ids = REPORT_IDS


class BulkUpdatedOut(OutSchema):
    updated = fields.Integer(required=True)


class BulkDeletedOut(OutSchema):
    deleted = fields.Integer(required=True)
