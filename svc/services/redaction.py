"""Secrets never reach storage: the redaction of contract section 6, applied to every report
before it is stored, whatever client sent it."""

import re
from collections.abc import Iterable

from svc import json_codec

REDACTED = "[redacted]"
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "x-api-key",
        "x-auth-token",
        "x-access-token",
        "x-csrf-token",
    }
)
SECRET_PARAMETERS = frozenset(
    {
        "token",
        "access_token",
        "refresh_token",
        "id_token",
        "code",
        "password",
        "secret",
        "client_secret",
        "api_key",
        "apikey",
        "key",
        "signature",
        "sig",
    }
)
HEADER_FIELDS = ("requestHeaders", "responseHeaders", "headers")
# Three base64url segments, the first starting eyJ (base64 of '{"'); the signature may be empty.
JWT = re.compile(r"eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
_QUERY = re.compile(r"\?([^#]*)")


def _redact_jwts(value):
    """Every JWT inside strings anywhere in `value` (dicts and lists walked)."""
    if isinstance(value, str):
        return JWT.sub(REDACTED, value)
    if isinstance(value, dict):
        return {key: _redact_jwts(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_redact_jwts(item) for item in value]
    return value


def _may_hold_jwt(value) -> bool:
    """False when no string in `value` contains the start of a JWT: one serialisation is much
    faster than walking the whole structure (docs/performance.md)."""
    text = json_codec.dumps_bytes(value)
    return text is None or b"eyJ" in text


def redact_url(url: str, names: Iterable[str]) -> str:
    """Replace the values of the named query parameters; everything else stays byte for byte."""
    names = frozenset(names)

    def redact_query(match: re.Match) -> str:
        pairs = []
        for pair in match.group(1).split("&"):
            name, equals, _ = pair.partition("=")
            if equals and name.lower() in names:
                pair = f"{name}={REDACTED}"
            pairs.append(pair)
        return "?" + "&".join(pairs)

    return _QUERY.sub(redact_query, url, count=1)


def _redact_headers(headers, names: frozenset[str]):
    """Headers as an object {name: value}, or as a list of {name, value} / [name, value]."""
    if isinstance(headers, dict):
        return {
            name: REDACTED if str(name).lower() in names else value
            for name, value in headers.items()
        }
    if isinstance(headers, list):
        redacted = []
        for item in headers:
            if isinstance(item, dict) and str(item.get("name", "")).lower() in names:
                item = {**item, "value": REDACTED}
            elif isinstance(item, list) and len(item) == 2 and str(item[0]).lower() in names:
                item = [item[0], REDACTED]
            redacted.append(item)
        return redacted
    return headers


def redact_network_entry(
    entry: dict, header_names: frozenset[str], parameter_names: frozenset[str]
) -> dict:
    entry = dict(entry)
    for field in HEADER_FIELDS:
        if field in entry:
            entry[field] = _redact_headers(entry[field], header_names)
    if isinstance(entry.get("url"), str):
        entry["url"] = redact_url(entry["url"], parameter_names)
    return _redact_jwts(entry) if _may_hold_jwt(entry) else entry


def redact_console_entry(entry: dict) -> dict:
    if isinstance(entry.get("message"), str):
        return {**entry, "message": _redact_jwts(entry["message"])}
    return entry


def redact_report(data: dict, extra_names: Iterable[str] = ()) -> dict:
    """A copy of a report's fields with every secret the contract names replaced."""
    extra = frozenset(name.lower() for name in extra_names)
    header_names = SECRET_HEADERS | extra
    parameter_names = SECRET_PARAMETERS | extra
    redacted = dict(data)
    if "network_logs" in data:
        redacted["network_logs"] = [
            redact_network_entry(entry, header_names, parameter_names)
            for entry in data["network_logs"]
        ]
    if "console_logs" in data:
        redacted["console_logs"] = [redact_console_entry(entry) for entry in data["console_logs"]]
    metadata = data.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("url"), str):
        redacted["metadata"] = {**metadata, "url": redact_url(metadata["url"], parameter_names)}
    return redacted
