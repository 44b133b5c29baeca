from urllib.parse import urlsplit

from flask import current_app
from marshmallow import ValidationError, fields, post_load, pre_dump, validate

from svc.auth.api_keys import normalize_origin
from svc.models import (
    MAX_RETENTION_DAYS,
    OWNER,
    REPORTER_EVENTS,
    ROLES,
    STATUSES,
)
from svc.schemas.base import InSchema, OneLine, OutSchema, Timestamp, check_absolute_url
from svc.schemas.widget import WidgetSettingsIn, WidgetSettingsOut
from svc.webhooks.formats import FORMATS, format_in_force

PREFIX = validate.Regexp(
    r"^[A-Z][A-Z0-9]{1,9}$", error=("2 to 10 uppercase letters and digits, starting with a letter.")
)
MAX_ALLOWED_ORIGINS = 50


def validate_webhook_url(value: str | None) -> None:
    if value is not None:
        allow_http = current_app.config["SVC_WEBHOOK_ALLOW_HTTP"]
        check_absolute_url(value, ("https", "http") if allow_http else ("https",))


def validate_origin(value: str) -> None:
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 (raises ValueError for a bad port)
    except ValueError:
        raise ValidationError("Not a valid origin.") from None
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.username
        or parts.password
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
        or any(char.isspace() for char in value)
    ):
        raise ValidationError("An origin is scheme://host[:port], e.g. https://shop.example.com.")


def _webhook_url_field():
    return fields.String(
        allow_none=True, validate=[validate.Length(max=2048), validate_webhook_url]
    )


def _webhook_format_field():
    return fields.String(allow_none=True, validate=validate.OneOf(FORMATS))


def _allowed_origins_field():
    return fields.List(
        fields.String(validate=[validate.Length(max=255), validate_origin]),
        validate=validate.Length(max=MAX_ALLOWED_ORIGINS),
    )


class RetentionIn(InSchema):
    days = fields.Integer(allow_none=True, validate=validate.Range(1, MAX_RETENTION_DAYS))
    statuses = fields.List(
        fields.String(validate=validate.OneOf(STATUSES)), validate=validate.Length(min=1)
    )


class RetentionOut(OutSchema):
    days = fields.Integer(required=True, allow_none=True)
    statuses = fields.List(fields.String(), required=True)


class ReporterUpdatesIn(InSchema):
    enabled = fields.Boolean()
    events = fields.List(fields.String(validate=validate.OneOf(REPORTER_EVENTS)))


class ReporterUpdatesOut(OutSchema):
    enabled = fields.Boolean(required=True)
    events = fields.List(fields.String(), required=True)


class ReproIn(InSchema):
    """Where a report's steps are run (docs/repro-kit.md, "The runner"): an origin the owner
    names, never one a reporter sent."""

    origin = fields.String(allow_none=True, validate=[validate.Length(max=255), validate_origin])
    auto = fields.Boolean()
    timeout_seconds = fields.Integer(validate=validate.Range(10, 300))
    timeoutSeconds = fields.Integer(validate=validate.Range(10, 300))

    @post_load
    def merge_aliases(self, data, **kwargs):
        if "timeoutSeconds" in data:
            if "timeout_seconds" in data:
                raise ValidationError("Give timeout_seconds or timeoutSeconds, not both.")
            data["timeout_seconds"] = data.pop("timeoutSeconds")
        if data.get("origin"):
            data["origin"] = normalize_origin(data["origin"])
        return data


class ReproOut(OutSchema):
    origin = fields.String(required=True, allow_none=True)
    auto = fields.Boolean(required=True)
    timeout_seconds = fields.Integer(required=True)


class ProjectSettingsIn(InSchema):
    """snake_case as everywhere, and interface.md's camelCase names as aliases."""

    webhook_url = _webhook_url_field()
    webhook_format = _webhook_format_field()
    allowed_origins = _allowed_origins_field()
    webhookUrl = _webhook_url_field()
    webhookFormat = _webhook_format_field()
    allowedOrigins = _allowed_origins_field()
    widget = fields.Nested(WidgetSettingsIn)
    retention = fields.Nested(RetentionIn)
    reporter_updates = fields.Nested(ReporterUpdatesIn)
    reporterUpdates = fields.Nested(ReporterUpdatesIn)
    repro = fields.Nested(ReproIn)

    _ALIASES = {
        "webhookUrl": "webhook_url",
        "webhookFormat": "webhook_format",
        "allowedOrigins": "allowed_origins",
        "reporterUpdates": "reporter_updates",
    }

    @post_load
    def merge_aliases(self, data, **kwargs):
        for alias, name in self._ALIASES.items():
            if alias in data:
                if name in data:
                    raise ValidationError(f"Give {name} or {alias}, not both.", alias)
                data[name] = data.pop(alias)
        if "allowed_origins" in data:
            data["allowed_origins"] = list(
                dict.fromkeys(normalize_origin(origin) for origin in data["allowed_origins"])
            )
        return data


class ProjectCreateIn(InSchema):
    name = OneLine(required=True, validate=validate.Length(min=1, max=100))
    tracking_prefix = fields.String(validate=PREFIX)


class ProjectUpdateIn(InSchema):
    name = OneLine(validate=validate.Length(min=1, max=100))
    tracking_prefix = fields.String(validate=PREFIX)
    settings = fields.Nested(ProjectSettingsIn)


class ProjectSettingsOut(OutSchema):
    webhook_url = fields.String(required=True, allow_none=True)
    webhook_format = fields.String(required=True, validate=validate.OneOf(FORMATS))
    allowed_origins = fields.List(fields.String(), required=True)
    widget = fields.Nested(WidgetSettingsOut, required=True)
    retention = fields.Nested(RetentionOut, required=True)
    reporter_updates = fields.Nested(ReporterUpdatesOut, required=True)
    repro = fields.Nested(ReproOut, required=True)


class ProjectOut(OutSchema):
    """Dumps a `services.projects.ProjectAccess`: the project as its caller sees it."""

    id = fields.UUID(required=True)
    name = fields.String(required=True)
    tracking_prefix = fields.String(required=True)
    api_key = fields.String(required=True)
    # Present for the owner only, and never in the list.
    webhook_secret = fields.String()
    role = fields.String(required=True, validate=validate.OneOf(ROLES))
    settings = fields.Nested(ProjectSettingsOut, required=True)
    created_at = Timestamp(required=True)
    updated_at = Timestamp(required=True)

    @pre_dump
    def flatten(self, access, **kwargs):
        project = access.project
        data = {
            "id": project.id,
            "name": project.name,
            "tracking_prefix": project.tracking_prefix,
            "api_key": project.api_key,
            "role": access.role,
            "settings": {
                # For Slack and Discord the address is itself the credential: owners only.
                "webhook_url": project.webhook_url if access.role == OWNER else None,
                "webhook_format": format_in_force(project.webhook_format, project.webhook_url),
                "allowed_origins": list(project.allowed_origins or []),
                "widget": access.widget_settings,
                "retention": project.retention_in_force,
                "reporter_updates": project.reporter_updates_in_force,
                "repro": project.repro_in_force,
            },
            "created_at": project.created_at,
            "updated_at": project.updated_at,
        }
        if access.role == OWNER:
            data["webhook_secret"] = project.webhook_secret
        return data


class MemberRoleIn(InSchema):
    role = fields.String(required=True, validate=validate.OneOf(ROLES))


class MemberOut(OutSchema):
    user_id = fields.UUID(required=True)
    name = fields.String(required=True, attribute="user.name")
    email = fields.String(required=True, attribute="user.email")
    role = fields.String(required=True, validate=validate.OneOf(ROLES))
    added_at = Timestamp(required=True)


class ProjectSummaryOut(ProjectOut):
    """A project in the list: never with the webhook secret."""

    class Meta:
        exclude = ("webhook_secret",)


class ReporterIn(InSchema):
    reporter_identifier = fields.String(required=True, validate=validate.Length(min=1, max=320))


class ObjectsOut(OutSchema):
    count = fields.Integer(required=True)
    bytes = fields.Integer(required=True)


class ErasedOut(OutSchema):
    reports = fields.Integer(required=True)


class ProjectUsageOut(OutSchema):
    reports = fields.Integer(required=True)
    comments = fields.Integer(required=True)
    objects = fields.Nested(ObjectsOut, required=True)
    oldest_report_at = Timestamp(required=True, allow_none=True)


class _ProjectUsageRow(OutSchema):
    id = fields.UUID(required=True)
    name = fields.String(required=True)
    reports = fields.Integer(required=True)
    objects = fields.Nested(ObjectsOut, required=True)


class _UsageTotals(OutSchema):
    reports = fields.Integer(required=True)
    objects = fields.Nested(ObjectsOut, required=True)


class _DatabaseUsage(OutSchema):
    bytes = fields.Integer(required=True, allow_none=True)


class InstanceUsageOut(OutSchema):
    projects = fields.List(fields.Nested(_ProjectUsageRow), required=True)
    totals = fields.Nested(_UsageTotals, required=True)
    database = fields.Nested(_DatabaseUsage, required=True)
