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
    # Mark every report a duplicate of this one (docs/api.md §8.11): they close.
    duplicate_of = fields.String(validate=validate.Length(min=1, max=64))

    @validates_schema
    def something_to_set(self, data, **kwargs):
        if not data:
            raise ValidationError(
                "Give at least one of status, severity, category, assignee_id, duplicate_of."
            )
        if "duplicate_of" in data and "status" in data:
            raise ValidationError("duplicate_of closes the reports: give no status with it.")


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
