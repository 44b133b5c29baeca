"""JSON of request bodies, stored JSON columns and responses: orjson, which writes and reads a
report several times faster than the standard library (figures in docs/performance.md), with
the standard library wherever orjson would answer differently, so that every value comes out as
it did before.

Imports nothing of svc.
"""

import json

import orjson
from flask.json.provider import DefaultJSONProvider

# orjson reads an integer past 64 bits (19 digits or more) as a float; the standard library keeps
# it exact. Digits mapped to one digit, then a plain substring search: far faster than a regex.
_ONE_DIGIT = bytes.maketrans(b"0123456789", b"0000000000")
_LONG_NUMBER = b"0" * 19
# Flask's own encoding of dates (HTTP dates) and dataclasses, not orjson's.
_FLASK_TYPES = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def loads(raw: bytes, **kwargs):
    """Parse JSON; `kwargs` go to json.loads, which takes over from orjson for what it refuses
    (invalid JSON, so that the error is the standard library's; UTF-16; a byte-order mark)."""
    if _LONG_NUMBER not in raw.translate(_ONE_DIGIT):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    return json.loads(raw, **kwargs)


def loads_stored(text: str | bytes):
    """A stored JSON column's value, as the database driver hands it (SQLite's as text,
    psycopg's as bytes): through `loads`, as request bodies are."""
    return loads(text.encode() if isinstance(text, str) else text)


_CONTAINERS = (dict, list)  # all that JSON nests; parsed JSON holds no subclasses of them


def nested_deeper_than(value, levels: int) -> bool:
    """Whether arrays and objects in `value` nest more than `levels` deep (`value` itself is
    level 1). Walked level by level, without recursion: the recursive walkers behind it
    (validation, redaction) would run out of Python's stack on what this refuses. What it
    costs a report: docs/performance.md, "Rate limits and the hardening"."""
    level = [value] if type(value) in _CONTAINERS else []
    depth = 0
    while level:
        depth += 1
        if depth > levels:
            return True
        below = []
        for node in level:
            for child in node.values() if type(node) is dict else node:
                if type(child) in _CONTAINERS:
                    below.append(child)
        level = below
    return False


def dumps(value) -> str:
    """Serialise for storage. orjson refuses integers past 64 bits and non-string keys."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return json.dumps(value)


def dumps_readable(value) -> str:
    """Compact JSON with non-ASCII as it is, as the API's answers write values (an export's
    lines and cells): orjson, the standard library where orjson refuses the value."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def dumps_bytes(value) -> bytes | None:
    """UTF-8 JSON of `value`; None when it holds an unpaired surrogate (or anything else that
    orjson refuses)."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return None


class JSONProvider(DefaultJSONProvider):
    """Flask's JSON for responses, written by orjson (Flask's own rules for its extra types).
    orjson writes compact UTF-8; indented output (debug mode) is left to Flask."""

    def dumps(self, obj, **kwargs) -> str:
        if kwargs.keys() - {"separators"}:
            return super().dumps(obj, **kwargs)
        option = _FLASK_TYPES | (orjson.OPT_SORT_KEYS if self.sort_keys else 0)
        try:
            return orjson.dumps(obj, default=self.default, option=option).decode()
        except TypeError:
            return super().dumps(obj, **kwargs)
