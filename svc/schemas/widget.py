"""The widget's settings (PATCH /projects/{id} `settings.widget`) and what the widget reads with
the API key (docs/api.md §7.3)."""

from marshmallow import Schema, ValidationError, fields, post_load, validate

from svc import i18n
from svc.models.projects import WIDGET_POSITIONS
from svc.schemas.base import InSchema, OutSchema, Text, check_absolute_url

COLOUR = validate.Regexp(r"^#[0-9a-fA-F]{6}$", error="A colour as #rrggbb.")


class Flag(fields.Boolean):
    """true or false only: a settings form that sends "yes" or 1 has a bug worth hearing of."""

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, bool):
            raise self.make_error("invalid")
        return value


class Colour(fields.String):
    def __init__(self, **kwargs):
        super().__init__(validate=COLOUR, **kwargs)

    def _deserialize(self, value, attr, data, **kwargs):
        return super()._deserialize(value, attr, data, **kwargs).lower()


def validate_image_url(value: str | None) -> None:
    if value is not None:
        check_absolute_url(value, ("https", "http"))


def _auto_or_a_tag(value: str) -> None:
    if value != "auto" and i18n.usable(value) is None:
        raise ValidationError("auto, or a language tag such as de or pt-BR.")


def _label():
    return Text(validate=validate.Length(min=1, max=60))


class WidgetSettingsIn(InSchema):
    primary_color = Colour()
    button_text = _label()
    modal_title = _label()
    logo_url = fields.String(
        allow_none=True, validate=[validate.Length(max=2048), validate_image_url]
    )
    position = fields.String(validate=validate.OneOf(WIDGET_POSITIONS))
    enable_screenshot = Flag()
    enable_session_recording = Flag()
    show_watermark = Flag()
    capture_console = Flag()
    capture_network = Flag()
    capture_actions = Flag()
    capture_network_details = Flag()
    enable_replay = Flag()
    replay_seconds = fields.Integer(strict=True, validate=validate.Range(min=10, max=300))
    replay_mask_all_text = Flag()
    locale = fields.String(validate=_auto_or_a_tag)
    test_id_attribute = fields.String(
        validate=validate.Regexp(
            r"^[a-z][a-z0-9_.:-]{0,49}$", error="An attribute's name, lower-case: data-testid."
        )
    )

    @post_load
    def locale_as_written(self, data, **kwargs):
        """A tag as BCP 47 writes it (pt_br is pt-BR)."""
        if data.get("locale", "auto") != "auto":
            data["locale"] = i18n.usable(data["locale"])
        return data


class WidgetSettingsOut(OutSchema):
    """Every setting in force (what ProjectAccess.widget_settings derives)."""

    primary_color = fields.String(required=True)
    button_text = fields.String(required=True)
    modal_title = fields.String(required=True)
    logo_url = fields.String(required=True, allow_none=True)
    position = fields.String(required=True, validate=validate.OneOf(WIDGET_POSITIONS))
    enable_screenshot = fields.Boolean(required=True)
    enable_session_recording = fields.Boolean(required=True)
    show_watermark = fields.Boolean(required=True)
    capture_console = fields.Boolean(required=True)
    capture_network = fields.Boolean(required=True)
    capture_actions = fields.Boolean(required=True)
    capture_network_details = fields.Boolean(required=True)
    enable_replay = fields.Boolean(required=True)
    replay_seconds = fields.Integer(required=True)
    replay_mask_all_text = fields.Boolean(required=True)
    locale = fields.String(required=True)
    test_id_attribute = fields.String(required=True)


class WidgetConfigOut(WidgetSettingsOut):
    """What the widget reads on load (docs/api.md §7.3): its settings and the upload limit, so
    that the widget scales a screenshot down before it uploads rather than after a 413."""

    max_screenshot_bytes = fields.Integer(required=True)
    # The project mails reporters a receipt and its news (docs/reporter-updates.md): the
    # dialog's e-mail field says so.
    mails_reporters = fields.Boolean(required=True)


class ConsoleLogQuotaOut(Schema):
    allowed = fields.Boolean(required=True)
    remaining = fields.Integer(required=True, allow_none=True)
    limit = fields.Integer(required=True, allow_none=True)
