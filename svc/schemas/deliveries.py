from marshmallow import fields, validate

from svc.models.webhooks import FAILED, PENDING, SUCCEEDED
from svc.schemas.base import OutSchema, PageQuery, Timestamp, page_of


class DeliveryListQuery(PageQuery):
    pass


class AttemptsOut(OutSchema):
    """What an outbox row shows of its attempts: webhook deliveries, calls to trackers."""

    id = fields.UUID(required=True)
    report_id = fields.UUID(required=True, allow_none=True)
    # The report's tracking id (WS-12); null once the report is deleted.
    tracking_id = fields.String(required=True, allow_none=True)
    status = fields.String(required=True, validate=validate.OneOf((PENDING, SUCCEEDED, FAILED)))
    attempts = fields.Integer(required=True)
    last_status_code = fields.Integer(required=True, allow_none=True)
    last_error = fields.String(required=True, allow_none=True)
    next_attempt_at = Timestamp(required=True, allow_none=True)
    created_at = Timestamp(required=True)
    updated_at = Timestamp(required=True)


class DeliveryOut(AttemptsOut):
    event = fields.String(required=True)


DeliveryPageOut = page_of(DeliveryOut, "DeliveryPageOut")
