from marshmallow import ValidationError, fields, pre_load, validate

from svc.models.notifications import NEW_REPORT_CHOICES
from svc.schemas.base import InSchema, OutSchema


class NotificationChoiceIn(InSchema):
    """snake_case as everywhere; the camelCase names GET answers with are taken too, so an
    answer can be sent back as it came."""

    _ALIASES = {"projectId": "project_id", "newReports": "new_reports"}

    project_id = fields.UUID(required=True)
    new_reports = fields.String(required=True, validate=validate.OneOf(NEW_REPORT_CHOICES))

    @pre_load
    def merge_aliases(self, data, **kwargs):
        if not isinstance(data, dict):
            return data
        data = dict(data)
        data.pop("projectName", None)  # part of GET's answer, not a choice
        for alias, name in self._ALIASES.items():
            if alias in data:
                if name in data:
                    raise ValidationError(f"Give {name} or {alias}, not both.", alias)
                data[name] = data.pop(alias)
        return data


class NotificationChoiceOut(OutSchema):
    project_id = fields.UUID(required=True)
    project_name = fields.String(required=True)
    new_reports = fields.String(required=True, validate=validate.OneOf(NEW_REPORT_CHOICES))


class UnsubscribedOut(OutSchema):
    email = fields.String(required=True)
    # Null when the link was for every project.
    project_name = fields.String(required=True, allow_none=True)
