"""The conventions every schema shares (docs/api.md §1)."""

import re
from datetime import UTC, datetime
from urllib.parse import urlsplit

from marshmallow import (
    EXCLUDE,
    RAISE,
    Schema,
    ValidationError,
    fields,
    post_dump,
    post_load,
    pre_load,
    validate,
)

from svc import json_codec
from svc.wire import camelcase, iso_timestamp

MAX_QUERY_INT = 2_147_483_647


def check_absolute_url(value: str, schemes: tuple[str, ...]) -> None:
    """A URL with one of `schemes` (the first named in the message) and a host, no white space."""
    parts = urlsplit(value)
    if parts.scheme not in schemes or not parts.hostname:
        named = " or ".join(f"{scheme}://" for scheme in reversed(schemes))
        raise ValidationError(f"Must be an absolute {named} URL.")
    if any(char.isspace() for char in value):
        raise ValidationError("Must not contain white space.")


class Timestamp(fields.DateTime):
    """A datetime field written as `iso_timestamp` does."""

    def _serialize(self, value, attr, obj, **kwargs):
        return None if value is None else iso_timestamp(value)


class Text(fields.String):
    """A string with surrounding white space trimmed before it is validated."""

    def _deserialize(self, value, attr, data, **kwargs):
        return super()._deserialize(value, attr, data, **kwargs).strip()


# Line breaks and every other control character (C0, DEL, C1) and the Unicode line and
# paragraph separators: a name goes into mail headers and one-line displays.
_NOT_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


class OneLine(Text):
    """A name: one line of text, checked as received (before the trim, which would take a
    leading U+0085 off and let one character too many through)."""

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, str) and _NOT_ONE_LINE.search(value):
            raise ValidationError("One line of text, without control characters.")
        return super()._deserialize(value, attr, data, **kwargs)


class EmailAddress(fields.Email):
    """Trimmed and lower-cased, as e-mail addresses are stored."""

    def __init__(self, **kwargs):
        super().__init__(validate=validate.Length(max=320), **kwargs)

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, str):
            value = value.strip().lower()
        return super()._deserialize(value, attr, data, **kwargs)


def _unstorable(text: str) -> bool:
    """NUL or an unpaired surrogate: PostgreSQL cannot store either, so neither is accepted."""
    if "\x00" in text:
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _all_storable(data) -> bool:
    """The quick answer for the usual body: serialised once, no NUL and nothing that UTF-8
    cannot encode (an unpaired surrogate). Only a body that fails it is walked for the paths."""
    text = json_codec.dumps_bytes(data)
    return text is not None and b"\\u0000" not in text


def find_unstorable_strings(value, path: str = "") -> list[str]:
    """Dotted paths (list items by index) of every unstorable string, keys included."""
    found: list[str] = []
    if isinstance(value, str):
        if _unstorable(value):
            found.append(path or "_schema")
    elif isinstance(value, dict):
        for key, item in value.items():
            key_path = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and _unstorable(key):
                found.append(path or "_schema")
            else:
                found.extend(find_unstorable_strings(item, key_path))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(find_unstorable_strings(item, f"{path}.{index}" if path else str(index)))
    return found


class InSchema(Schema):
    """Request bodies and query strings: snake_case names as sent, unknown fields rejected."""

    class Meta:
        unknown = RAISE

    @pre_load
    def reject_unstorable_strings(self, data, **kwargs):
        if _all_storable(data):
            return data
        paths = find_unstorable_strings(data)
        if paths:
            raise ValidationError(
                {path: ["Contains a NUL character or an unpaired surrogate."] for path in paths}
            )
        return data


class OutSchema(Schema):
    """The service's own objects in responses: camelCase names."""

    def on_bind_field(self, field_name, field_obj):
        field_obj.data_key = camelcase(field_obj.data_key or field_name)


class ErrorOut(Schema):
    detail = fields.String(required=True)
    errors = fields.Dict(keys=fields.String(), values=fields.List(fields.String()))


class QueryInt(fields.Integer):
    """An integer from a query string, within what the databases can compare (contract
    section 1)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("validate", validate.Range(max=MAX_QUERY_INT))
        super().__init__(**kwargs)


class QueryTime(fields.String):
    """An ISO 8601 date or date and time; without a zone, UTC."""

    def _deserialize(self, value, attr, data, **kwargs) -> datetime:
        text = super()._deserialize(value, attr, data, **kwargs)
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise ValidationError("An ISO 8601 date or time, e.g. 2026-11-24T09:30:00Z.") from None
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


MAX_PAGE_SIZE = 100


class PageQuery(InSchema):
    """page and page_size of every paged list; unknown query parameters are ignored."""

    class Meta:
        unknown = EXCLUDE

    page = QueryInt(load_default=1, validate=validate.Range(min=1, max=2_147_483_647))
    page_size = QueryInt(load_default=20, validate=validate.Range(min=1, max=2_147_483_647))

    @post_load
    def clamp_page_size(self, data, **kwargs):
        data["page_size"] = min(data["page_size"], MAX_PAGE_SIZE)
        return data


def page_of(item_schema: type[Schema], name: str, bounded: bool = False) -> type[OutSchema]:
    """The envelope of every paged list, `{items, total, page, pageSize}`, around the items'
    schema; `name` is the schema's name in the OpenAPI description. A `bounded` list's total
    may be a lower bound: then, and only then, the envelope says `totalExact: false`."""
    envelope = {
        "items": fields.List(fields.Nested(item_schema), required=True),
        "total": fields.Integer(required=True),
        "page": fields.Integer(required=True),
        "page_size": fields.Integer(required=True),
    }
    if bounded:
        envelope["total_exact"] = fields.Boolean()
    return (_BoundedPage if bounded else OutSchema).from_dict(envelope, name=name)


class _BoundedPage(OutSchema):
    @post_dump
    def _exact_goes_without_saying(self, data: dict, **kwargs) -> dict:
        if data.get("totalExact"):
            del data["totalExact"]
        return data
