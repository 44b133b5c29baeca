from marshmallow import ValidationError, fields, validate

from svc.models.activity import (
    CHANGED,
    COMMENT_DELETED,
    COMMENTED,
    CREATED,
    DUPLICATE,
    LINKED,
    REOPENED,
    REPORTER,
    REPRODUCED,
)
from svc.models.integrations import KINDS
from svc.schemas.base import InSchema, OutSchema, Timestamp

MAX_COMMENT = 10_000


def _not_blank(value: str) -> None:
    if not value.strip():
        raise ValidationError("Write something.")


class CommentIn(InSchema):
    """Plain text; the dashboard shows it as text and makes its links clickable."""

    body = fields.String(
        required=True, validate=[validate.Length(min=1, max=MAX_COMMENT), _not_blank]
    )


class NewCommentIn(CommentIn):
    # Shown on the report's status page and mailed to its reporter (docs/reporter-updates.md).
    public = fields.Boolean(load_default=False)


class PersonOut(OutSchema):
    id = fields.UUID(required=True, allow_none=True)
    name = fields.String(required=True, allow_none=True)


class CommentOut(OutSchema):
    id = fields.UUID(required=True)
    report_id = fields.UUID(required=True)
    # Null once the author's account is gone.
    author = fields.Nested(PersonOut, required=True, allow_none=True)
    body = fields.String(required=True)
    public = fields.Boolean(required=True)
    # Written by the reporter on the status page (`author` is null then).
    from_reporter = fields.Boolean(required=True)
    created_at = Timestamp(required=True)
    updated_at = Timestamp(required=True)


class ChangeOut(OutSchema):
    from_ = fields.Raw(required=True, allow_none=True, attribute="from", data_key="from")
    to = fields.Raw(required=True, allow_none=True)


class ActivityOut(OutSchema):
    id = fields.UUID(required=True)
    kind = fields.String(
        required=True,
        validate=validate.OneOf(
            (CREATED, CHANGED, COMMENTED, COMMENT_DELETED, DUPLICATE, LINKED, REOPENED, REPRODUCED)
        ),
    )
    # Null for the widget (a report's creation), a tracker's change and what the reporter did
    # on the status page (`via` names which).
    actor = fields.Nested(PersonOut, required=True, allow_none=True)
    via = fields.String(validate=validate.OneOf((*KINDS, REPORTER)))
    at = Timestamp(required=True)
    changes = fields.Dict(keys=fields.String(), values=fields.Nested(ChangeOut))
    comment_id = fields.UUID()
