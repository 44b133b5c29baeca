"""The wire format that responses and webhook payloads share: camelCase names, timestamps, and
text made one line for a header, a chat message or a list item. The bottom layer: imports
nothing of svc, so that schemas, services, webhooks and tracker adapters can all use it.
"""

from datetime import UTC


def camelcase(name: str) -> str:
    """`page_size` -> `pageSize`: how a snake_case name is written on the wire."""
    first, *rest = name.split("_")
    return first + "".join(part.title() for part in rest)


def iso_timestamp(value) -> str:
    """ISO 8601 UTC with millisecond precision and a Z: 2026-11-22T10:00:00.123Z."""
    # isoformat cuts the microseconds to milliseconds as this format does; its +00:00 -> Z.
    return value.astimezone(UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


def one_line(text, limit: int | None = None) -> str:
    """`text` on one line: every run of white space, line breaks of every kind included
    (U+2028, NEL, form feed), as one space; cut to `limit` characters with an ellipsis."""
    flat = " ".join(str(text).split())
    if limit is None or len(flat) <= limit:
        return flat
    return flat[: limit - 1] + "…"
