from marshmallow import fields, validate

from svc.audit import ACTIONS
from svc.schemas.base import OutSchema, PageQuery, QueryTime, Timestamp, page_of


class AuditQuery(PageQuery):
    """The audit log's filters (docs/api.md §14): who, what, which project, from and until when."""

    actor = fields.UUID()
    action = fields.String(validate=validate.OneOf(ACTIONS))
    project_id = fields.UUID()
    since = QueryTime()
    until = QueryTime()


class AuditActorOut(OutSchema):
    id = fields.UUID(required=True)
    name = fields.String(required=True, allow_none=True)


class AuditTargetOut(OutSchema):
    type = fields.String(required=True)
    id = fields.String(required=True, allow_none=True)


class AuditEntryOut(OutSchema):
    id = fields.UUID(required=True)
    at = Timestamp(required=True)
    actor = fields.Nested(AuditActorOut, required=True, allow_none=True)
    action = fields.String(required=True, validate=validate.OneOf(ACTIONS))
    target = fields.Nested(AuditTargetOut, required=True)
    project_id = fields.UUID(required=True, allow_none=True)
    ip = fields.String(required=True, allow_none=True)
    detail = fields.Dict(required=True)


AuditPageOut = page_of(AuditEntryOut, "AuditPageOut")
