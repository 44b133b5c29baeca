"""Secrets never reach storage: the redaction of docs/api.md §8.1.1, applied to every report
before it is stored, whatever client sent it."""

import functools
import json
import re
from collections.abc import Iterable
from urllib.parse import unquote, unquote_plus

from svc import json_codec

REDACTED = "[redacted]"


def canonical(name) -> str:
    """A parameter's or header's name as it is compared: without regard to case, `-` and `_`
    (`access-token`, `Access_Token` and `accessToken` are all `accesstoken`)."""
    if type(name) is str and len(name) <= 64:
        return _canonical_short(name)
    return str(name).strip().lower().replace("-", "").replace("_", "")


@functools.lru_cache(maxsize=4096)
def _canonical_short(name: str) -> str:
    # Reports repeat the same few header and parameter names thousands of times; only short
    # ones are kept, so that a reporter's long names cannot fill a worker's memory.
    return name.strip().lower().replace("-", "").replace("_", "")


# Signed-URL parameters and headers of the cloud stores: a presigned URL is a working download.
_CLOUD_SECRETS = (
    "x-amz-signature",
    "x-amz-credential",
    "x-amz-security-token",
    "x-goog-signature",
    "x-goog-credential",
)
SECRET_HEADERS = frozenset(
    canonical(name)
    for name in (
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "x-api-key",
        "x-auth-token",
        "x-access-token",
        "x-csrf-token",
        *_CLOUD_SECRETS,
    )
)
# Every name the widget's SECRET_NAME redacts is here too (contract v6; tests/test_widget.py keeps
# the two in step), so that a report sent by any client is redacted as the widget's would be.
SECRET_PARAMETERS = frozenset(
    canonical(name)
    for name in (
        "token",
        "access_token",
        "refresh_token",
        "id_token",
        "auth_token",
        "private_token",
        "session_token",
        "code",
        "password",
        "passwd",
        "pwd",
        "secret",
        "client_secret",
        "api_key",
        "key",
        "signature",
        "sig",
        "auth",
        "authorization",
        "session",
        "sessionid",
        "jwt",
        # Payment cards and accounts: short names that would match too much as parts of others.
        "card",
        "cc",
        "pan",
        *_CLOUD_SECRETS,
    )
)
HEADER_FIELDS = ("requestHeaders", "responseHeaders", "headers")
# Fields of a network entry that may hold a request or response body, as text or as JSON.
BODY_FIELDS = ("requestBody", "responseBody", "body", "request_body", "response_body")
# A key of a JSON body whose name holds one of these (any case, without - and _) holds a secret.
SECRET_KEY_PARTS = (
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "authorization",
    "apikey",
    "cookie",
    "credential",
    "privatekey",
    "cardnumber",
    "ccnumber",
    "cvv",
    "cvc",
    "iban",
)
# What clients put in place of a secret themselves: kept as sent.
MASKS = frozenset({"[redacted]", "%5bredacted%5d", "[filtered]"})
# Three base64url segments, the first starting eyJ (base64 of '{"'); the signature may be empty.
JWT = re.compile(r"eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
# 13 to 19 digits, spaces or dashes between them allowed: a card number when Luhn says so.
_CARD_NUMBER = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")
# What a captured header's name or value may not hold: it ends up in a HAR, a cURL command, a
# terminal.
_HEADER_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")
# scheme://user:password@ at the start of a URL.
_USERINFO = re.compile(r"^(\s*[A-Za-z][A-Za-z0-9+.-]*://[^/?#@:]*):([^/?#@]*)@")


def is_masked(value) -> bool:
    return isinstance(value, str) and (
        value.lower() in MASKS or (len(value) >= 3 and value.strip("*") == "")
    )


def _redact_jwts(value):
    """Every JWT inside strings anywhere in `value` (dicts and lists walked)."""
    if isinstance(value, str):
        return JWT.sub(REDACTED, value)
    if isinstance(value, dict):
        return {key: _redact_jwts(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_redact_jwts(item) for item in value]
    return value


def _without_jwts(value, text: bytes | None = None):
    """`value` with every JWT redacted; as it is, unserialised and unwalked, when no string in
    it holds the start of one: one serialisation is much faster than walking the whole
    structure (docs/performance.md). `text`: `value` serialised, when the caller has it."""
    text = text or json_codec.dumps_bytes(value)
    return _redact_jwts(value) if text is None or b"eyJ" in text else value


def _redact_pairs(text: str, names: frozenset[str]) -> str:
    """`name=value&...` with the values of the named parameters replaced. A name counts as it
    decodes (`acc%65ss_token` is `access_token`); a value the client masked stays."""
    pairs = []
    for pair in text.split("&"):
        name, equals, value = pair.partition("=")
        if equals and canonical(unquote_plus(name)) in names and not is_masked(unquote(value)):
            pair = f"{name}={REDACTED}"
        pairs.append(pair)
    return "&".join(pairs)


def redact_url(url: str, names: Iterable[str]) -> str:
    """Replace the password of `user:password@`, and the values of the named parameters in the
    query and in a fragment that carries parameters (`#access_token=...`, `#/route?token=...`);
    everything else stays byte for byte."""
    if "?" not in url and "#" not in url and "@" not in url:
        return url  # nothing below can match: most URLs of a report
    names = frozenset(names)
    url = _USERINFO.sub(
        lambda match: (
            match.group(0)
            if is_masked(unquote(match.group(2)))
            else (f"{match.group(1)}:{REDACTED}@")
        ),
        url,
        count=1,
    )
    address, hash_mark, fragment = url.partition("#")
    path, question_mark, query = address.partition("?")
    if question_mark:
        address = f"{path}?{_redact_pairs(query, names)}"
    if "?" in fragment:
        route, _, fragment_query = fragment.partition("?")
        fragment = f"{route}?{_redact_pairs(fragment_query, names)}"
    elif "=" in fragment:
        fragment = _redact_pairs(fragment, names)
    return address + hash_mark + fragment


def _luhn_valid(digits: str) -> bool:
    total = 0
    for position, digit in enumerate(reversed(digits)):
        value = int(digit) * (2 if position % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def _card_masked(match: re.Match) -> str:
    digits = match[0].replace(" ", "").replace("-", "")
    return REDACTED if _luhn_valid(digits) else match[0]


def mask_card_numbers(text: str) -> str:
    """`text` with every card number (13 to 19 digits that pass Luhn's check) replaced."""
    return _CARD_NUMBER.sub(_card_masked, text)


def _printable(value):
    if type(value) is str and value.isprintable():  # no control characters: most values
        return value
    return _HEADER_CONTROLS.sub("", value) if isinstance(value, str) else value


def _header(name, value, names: frozenset[str]) -> tuple:
    """One header without control characters, its value replaced when its name is a secret's."""
    name, value = _printable(name), _printable(value)
    if canonical(name) in names and not is_masked(value):
        value = REDACTED
    return name, value


def _redact_headers(headers, names: frozenset[str]):
    """Headers as an object {name: value}, or as a list of {name, value} / [name, value]."""
    if isinstance(headers, dict):
        return dict(_header(name, value, names) for name, value in headers.items())
    if isinstance(headers, list):
        redacted = []
        for item in headers:
            if isinstance(item, dict) and "name" in item:
                name, value = _header(item["name"], item.get("value"), names)
                item = {**item, "name": name} | ({"value": value} if "value" in item else {})
            elif isinstance(item, list) and len(item) == 2:
                item = list(_header(item[0], item[1], names))
            redacted.append(item)
        return redacted
    return headers


def _is_secret_key(key, names: frozenset[str]) -> bool:
    name = canonical(key)
    return name in names or any(part in name for part in SECRET_KEY_PARTS)


def _redact_secret_keys(value, names: frozenset[str]):
    """A JSON value with whatever sits under a secret-looking key replaced, at any depth, and
    card numbers masked wherever they stand."""
    if isinstance(value, str):
        return mask_card_numbers(value)
    if isinstance(value, int) and not isinstance(value, bool) and 10**12 <= abs(value) < 10**19:
        return REDACTED if _luhn_valid(str(abs(value))) else value
    if isinstance(value, dict):
        return {
            key: (
                REDACTED
                if _is_secret_key(key, names) and not is_masked(item)
                else _redact_secret_keys(item, names)
            )
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_redact_secret_keys(item, names) for item in value]
    return value


def _redact_body(body, names: frozenset[str]):
    """A body given as JSON, or as the text of a JSON object or array; other text as it is."""
    if isinstance(body, dict | list):
        return _redact_secret_keys(body, names)
    if not isinstance(body, str):
        return body
    if body.lstrip()[:1] not in ("{", "["):
        return mask_card_numbers(body)
    try:
        parsed = json.loads(body)
    except ValueError:
        return mask_card_numbers(body)
    redacted = _redact_secret_keys(parsed, names)
    return body if redacted == parsed else json.dumps(redacted, ensure_ascii=False)


def redact_network_entry(
    entry: dict,
    header_names: frozenset[str],
    parameter_names: frozenset[str],
    details: bool = True,
) -> dict:
    """One request, redacted; without its headers and bodies when the project does not capture
    them (`details`), whatever the client sent."""
    entry = dict(entry)
    if not details:
        for field in (*HEADER_FIELDS, *BODY_FIELDS):
            entry.pop(field, None)
    for field in HEADER_FIELDS:
        if field in entry:
            entry[field] = _redact_headers(entry[field], header_names)
    for field in BODY_FIELDS:
        if field in entry:
            entry[field] = _redact_body(entry[field], parameter_names | header_names)
    if isinstance(entry.get("url"), str):
        entry["url"] = redact_url(entry["url"], parameter_names)
    return entry


# Bytes of serialised ASCII JSON as `canonical` compares names: letters lower-cased, digits
# kept, everything else a space between words (`-` and `_` are deleted as they are read).
_AS_WORDS = (
    bytes(
        byte | 0x20 if chr(byte).isalpha() else byte if chr(byte).isdigit() else ord(" ")
        for byte in range(128)
    )
    + b" " * 128
)
_BODY_WORDS = frozenset(canonical(field).encode() for field in BODY_FIELDS)


def _nothing_to_redact(text: bytes | None, names: frozenset[str]) -> bool:
    """Whether network entries, serialised as `text`, hold nothing that redact_network_entry
    would change, told from the text alone (most reports' requests; walking them was the larger
    part of redaction). Never yes when it cannot tell: ASCII only, no escapes (control
    characters would be), no `@` (user:password@) or `%` (encoded names), and no word, in the
    form `canonical` compares, that names a secret or a body field. A secret's name, as a
    header's or a URL parameter's, is such a word."""
    if text is None or not text.isascii():
        return False
    if b"\\" in text or b"@" in text or b"%" in text or b"\x7f" in text:
        return False
    redacting = _words_redacting(names)
    return redacting is not None and redacting.isdisjoint(text.translate(_AS_WORDS, b"-_").split())


@functools.lru_cache(maxsize=64)
def _words_redacting(names: frozenset[str]) -> frozenset[bytes] | None:
    """The words that would make network entries worth walking: the names and the body
    fields; None when a configured name is no single word (then they are walked). Made once
    per set of names (the same on every request: SVC_REDACT_NAMES)."""
    if not all(name.isascii() and name.isalnum() for name in names):
        return None
    return frozenset(name.encode() for name in names) | _BODY_WORDS


def _redact_urls(value, names: frozenset[str]):
    """Every string in `value` that reads as a URL (`scheme://...`, or a path from `/`)."""
    if isinstance(value, str):
        return redact_url(value, names) if "://" in value or value.startswith("/") else value
    if isinstance(value, dict):
        return {key: _redact_urls(item, names) for key, item in value.items()}
    if isinstance(value, list):
        return [_redact_urls(item, names) for item in value]
    return value


def _redact_strings(value, parameter_names: frozenset[str]):
    """Every string of a JSON value: URLs by the parameter names, JSON Web Tokens anywhere. One
    serialisation tells whether any string may be a URL (`://` in it, or `"/` starting it),
    as it tells for JWTs: most user actions hold none, and are then not walked."""
    text = json_codec.dumps_bytes(value)
    if text is not None and b"://" not in text and b'"/' not in text:
        return _without_jwts(value, text)
    return _without_jwts(_redact_urls(value, parameter_names))


def redact_strings(value, extra_names: Iterable[str] = ()):
    """A replay's events, as a report's user actions and metadata are redacted."""
    return _redact_strings(value, SECRET_PARAMETERS | frozenset(map(canonical, extra_names)))


def redact_report(data: dict, extra_names: Iterable[str] = (), details: bool = True) -> dict:
    """A copy of a report's fields with every secret docs/api.md §8.1.1 names replaced; the
    requests' headers and bodies left out unless the project captures them (`details`)."""
    extra = frozenset(canonical(name) for name in extra_names)
    header_names = SECRET_HEADERS | extra
    parameter_names = SECRET_PARAMETERS | extra
    redacted = dict(data)
    if "network_logs" in data:
        logs = data["network_logs"]
        text = json_codec.dumps_bytes(logs)
        if not details or not _nothing_to_redact(text, header_names | parameter_names):
            logs = [
                redact_network_entry(entry, header_names, parameter_names, details)
                for entry in logs
            ]
            text = None
        redacted["network_logs"] = _without_jwts(logs, text)
    if "console_logs" in data:
        # Messages, stacks and arguments alike.
        redacted["console_logs"] = _without_jwts(data["console_logs"])
    if "user_actions" in data:
        # Targets, data strings and the URLs of navigations, as console entries and metadata.
        redacted["user_actions"] = _redact_strings(data["user_actions"], parameter_names)
    if isinstance(data.get("metadata"), dict):
        redacted["metadata"] = _redact_strings(data["metadata"], parameter_names)
    return redacted
