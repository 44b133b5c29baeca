from marshmallow import fields, validate

from svc.models import CATEGORIES, SEVERITIES
from svc.models.reports import OPEN_STATUSES
from svc.schemas.base import InSchema, OutSchema, QueryInt


class StatsQuery(InSchema):
    class Meta:
        unknown = "exclude"

    project_id = fields.UUID()
    days = QueryInt(load_default=30, validate=validate.Range(min=1, max=365))


def _counts(keys) -> fields.Dict:
    # Keys as they are (statuses, severities, categories), not camelCased.
    return fields.Dict(
        keys=fields.String(validate=validate.OneOf(keys)), values=fields.Integer(), required=True
    )


class OpenCountsOut(OutSchema):
    by_status = _counts(OPEN_STATUSES)
    by_severity = _counts(SEVERITIES)
    by_category = _counts(CATEGORIES)


class DayOut(OutSchema):
    date = fields.String(required=True)  # YYYY-MM-DD, UTC
    created = fields.Integer(required=True)
    resolved = fields.Integer(required=True)


class StatsOut(OutSchema):
    open = fields.Nested(OpenCountsOut, required=True)
    per_day = fields.List(fields.Nested(DayOut), required=True)
    median_hours_to_resolve = fields.Float(required=True, allow_none=True)
