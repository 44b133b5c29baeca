"""The status page's JSON (docs/reporter-updates.md): what the reporter sees of a report."""

from marshmallow import fields

from svc.schemas.base import OutSchema, Timestamp


class StatusCommentOut(OutSchema):
    body = fields.String(required=True)
    # A member's name, or "You" for what the reporter wrote.
    author = fields.String(required=True)
    from_reporter = fields.Boolean(required=True)
    created_at = Timestamp(required=True)


class StatusPageOut(OutSchema):
    tracking_id = fields.String(required=True)
    project_name = fields.String(required=True)
    title = fields.String(required=True)
    status = fields.String(required=True)
    # A duplicate's page shows its primary's status and replies (docs/api.md §8.11).
    merged = fields.Boolean(required=True)
    # new again after it was resolved or closed (the page says "open again")
    reopened = fields.Boolean(required=True)
    created_at = Timestamp(required=True)
    updated_at = Timestamp(required=True)
    comments = fields.List(fields.Nested(StatusCommentOut), required=True)


class StatusLinkOut(OutSchema):
    url = fields.String(required=True)
