"""What in a report's captured logs is the app's own, and so evidence of its bug (docs/api.md
§8.9): real pages log the noise of browser extensions, `ResizeObserver`, cross-origin scripts,
analytics and chat widgets, usually before the bug itself. As Sentry picks in-app frames:

- a console error is the app's when its stack's frames, or its `source`, are on the page's
  origin or one of the project's `allowed_origins`; one with no address at all is taken as the
  app's, unless it is one of the messages browsers log for nothing the app did (BENIGN);
  an extension's address anywhere in it makes it never the app's;
- a failed request is the app's when its address is on those origins (or relative).

Of the app's own, the last before the report was filed is its evidence: what the reporter saw
go wrong, not the first hiccup of the page's life.

And one error, three wordings: Chrome, Firefox and Safari word the same TypeError differently,
and a release renames minified variables; `error_text` writes them as one. Pure functions, no
database.
"""

import re
from urllib.parse import urlsplit

from svc.models import failed_request

EXTENSION_SCHEMES = (
    "chrome-extension:",
    "moz-extension:",
    "safari-extension:",
    "safari-web-extension:",
    "ms-browser-extension:",
    "webkit-masked-url:",
)
# Logged by browsers for nothing the app did (the first words of the message, lower-case,
# "Uncaught " taken off).
BENIGN = (
    "resizeobserver loop",
    "script error",  # a cross-origin script's error, its details withheld by the browser
    "extension context invalidated",
    "can't access dead object",
    "non-error promise rejection captured",
    "the play() request was interrupted",
    "the operation was aborted",
)
_ADDRESS = re.compile(
    r"\b[a-z][a-z0-9+.-]*://[^\s()'\"]+|\b(?:[a-z-]+-extension|webkit-masked-url):[^\s()'\"]*", re.I
)
_PREFIX = re.compile(r"^(uncaught\s+(\(in promise\)\s+)?|unhandled promise rejection:\s*)", re.I)


def origin_of(url) -> str | None:
    """scheme://host[:port] of an absolute http(s) address, lower-case; None otherwise."""
    if not isinstance(url, str) or "://" not in url:
        return None
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    default = {"http": 80, "https": 443}[parts.scheme.lower()]
    suffix = f":{port}" if port and port != default else ""
    return f"{parts.scheme.lower()}://{parts.hostname.lower()}{suffix}"


def app_origins(page_url, allowed_origins) -> frozenset[str]:
    """The origins whose scripts and endpoints are the app's: the page's and the project's."""
    found = {origin_of(page_url), *(origin_of(origin) for origin in allowed_origins or ())}
    return frozenset(origin for origin in found if origin)


def _is_apps_error(entry: dict, origins: frozenset[str]) -> bool:
    message = _PREFIX.sub("", str(entry["message"])).strip().lower()
    if message.startswith(BENIGN):
        return False
    where = " ".join(str(entry.get(name) or "") for name in ("stack", "source"))
    addresses = _ADDRESS.findall(where) + _ADDRESS.findall(message)
    if any(address.lower().startswith(EXTENSION_SCHEMES) for address in addresses):
        return False
    web = [origin_of(address) for address in addresses]
    web = [origin for origin in web if origin]
    # Frames only elsewhere: a third party's script (analytics, chat, a CDN's widget).
    return not web or any(origin in origins for origin in web)


def _is_apps_request(entry: dict, origins: frozenset[str]) -> bool:
    url = str(entry.get("url") or "")
    if url.lower().startswith(EXTENSION_SCHEMES):
        return False
    origin = origin_of(url)
    if origin is None:  # a relative address is the page's own; another scheme is not the app's
        return not re.match(r"^[a-z][a-z0-9+.-]*:", url, re.I)
    return origin in origins


def app_errors(console_logs, origins: frozenset[str]) -> list[dict]:
    """The console errors that are the app's, in order."""
    return [
        entry
        for entry in console_logs or ()
        if isinstance(entry, dict)
        and entry.get("level") == "error"
        and entry.get("message")
        and _is_apps_error(entry, origins)
    ]


def app_requests(network_logs, origins: frozenset[str]) -> list[dict]:
    """The failed requests to the app's own origins, in order."""
    return [
        entry
        for entry in network_logs or ()
        if isinstance(entry, dict) and failed_request(entry) and _is_apps_request(entry, origins)
    ]


def app_error(console_logs, origins: frozenset[str]) -> dict | None:
    """The last console error that is the app's, or None."""
    return next(reversed(app_errors(console_logs, origins)), None)


def app_request(network_logs, origins: frozenset[str]) -> dict | None:
    """The last failed request to the app's own origins, or None."""
    return next(reversed(app_requests(network_logs, origins)), None)


# --- one error, three wordings --------------------------------------------------------------

_EXPRESSION = r"[\w$.\[\]'\"]+?"
# (pattern, replacement): each engine's wording of a common error, to one form. A property read
# off undefined or null is named by the property alone (the object's name is minified).
_WORDINGS = (
    # Chrome: Cannot read properties of undefined (reading 'id'); older: ... property 'id' of
    (re.compile(r"cannot read propert(?:y|ies) of (undefined|null) \(reading ['\"]([^'\"]*)['\"]\)", re.I),  # noqa: E501
     r"cannot read property \2 of \1"),
    (re.compile(r"cannot read property ['\"]([^'\"]*)['\"] of (undefined|null)", re.I),
     r"cannot read property \1 of \2"),
    # Firefox: can't access property "id", k3.paymentMethod is undefined
    (re.compile(r"can't access property ['\"]([^'\"]*)['\"],? " + _EXPRESSION + r" is (undefined|null)", re.I),  # noqa: E501
     r"cannot read property \1 of \2"),
    # Safari: undefined is not an object (evaluating 'k3.paymentMethod.id')
    (re.compile(r"(undefined|null) is not an object \(evaluating '(?:[^']*[.\[])?([\w$]+)\]?'\)", re.I),  # noqa: E501
     r"cannot read property \2 of \1"),
    # Safari's "not a function" adds where: k3.map is not a function. (In 'k3.map(x)', ...)
    (re.compile(r"( is not a function)\. \(in '.*$", re.I), r"\1"),
    # Safari: Can't find variable: grecaptcha; Chrome and Firefox: grecaptcha is not defined
    (re.compile(r"can't find variable: ([\w$]+)", re.I), r"\1 is not defined"),
    # Chrome: Invalid time value; Firefox: invalid date; Safari: Invalid Date
    (re.compile(r"rangeerror: (invalid time value|invalid date)", re.I), "rangeerror: invalid date"),  # noqa: E501
)  # fmt: skip
# A member chain (k3.paymentMethod.total): its last name alone; the rest is minified or the
# app's variable names, which a release changes.
_CHAIN = re.compile(r"\b[\w$]+(?:\.[\w$]+)+(?=\s+is\s+(?:not|undefined|null))")


def bare(message: str) -> str:
    """An error's message without what the browser put before it ("Uncaught ")."""
    return _PREFIX.sub("", message.strip())


def error_text(message: str) -> str:
    """An error's message as one wording, whatever the engine: "Uncaught " off, the common
    TypeErrors, ReferenceErrors and RangeErrors written Chrome's way with the property alone."""
    text = bare(message)
    for pattern, replacement in _WORDINGS:
        text = pattern.sub(replacement, text)
    return _CHAIN.sub(lambda chain: chain[0].rsplit(".", 1)[1], text)
