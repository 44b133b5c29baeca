"""The wire format that responses and webhook payloads share: camelCase names and timestamps.
The bottom layer: imports nothing of svc, so that schemas, services and webhooks can all use it.
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
