"""The repro kit (docs/repro-kit.md): a report's network log as a HAR 1.2 file,
and its clicks, route changes and typed fields as a Playwright test.

Both are built from what the report holds, already redacted (§6); a value the service or the
widget redacted is never written into either as if it were real.
"""

import functools
import json
import math
import re
from datetime import UTC, datetime
from http import HTTPStatus
from urllib.parse import parse_qsl, urlsplit

from svc.auth.api_keys import normalize_origin
from svc.models import Report, failed_request
from svc.models.projects import WIDGET_DEFAULTS
from svc.services import widget
from svc.services.grouping import evidence, signatures
from svc.webhooks import sender

# Placeholder values for typed fields, by the field's input type: what was typed is never captured.
PLACEHOLDERS = {
    "email": "user@example.com",
    "number": "1",
    "tel": "+15550100",
    "url": "https://example.com/",
    "date": "2024-01-31",
    "time": "12:00",
    "datetime-local": "2024-01-31T12:00",
    "month": "2024-01",
    "week": "2024-W05",
}
DEFAULT_PLACEHOLDER = "text"
# A longer pause between two steps is shortened to this in the test.
MAX_WAIT_MS = 3000
# Pauses shorter than this are what Playwright's own waiting covers.
MIN_WAIT_MS = 1000
# How long the end waits for each of the report's errors and failed requests: an error thrown
# by a failed request's handler comes a moment after it, and the test's end would miss it.
SETTLE_MS = 3000
# A route change this soon after a click is that click's doing, not the Back button's.
CLICK_CAUSED_MS = 1000
# The click a label passes to its field comes in the same task as the label's.
LABEL_FORWARD_MS = 50
_REDACTED = re.compile(r"\[redacted\]|%5bredacted%5d", re.IGNORECASE)
_LINE_BREAKS = re.compile(r"[\r\n\u2028\u2029\x85]+")
# What a terminal or an editor acts on rather than shows: C0 and C1 controls, DEL, the
# bidirectional controls that reorder a line, the line separators. A test is `cat`ed and read
# before it is run; none of these may hide a line from the reader.
_CONTROLS = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
# An error's message is looked for by its first this many characters.
MAX_PATTERN = 200
# The first lines of every test: whose steps they are.
UNTRUSTED = (
    "// Its steps come from the reporter, who may be anyone holding the project's public key:",
    "// read them before you run it with real credentials or a signed-in storageState.",
)


def escape_controls(text: str) -> str:
    """`text` with every control character written as `\\uXXXX` text."""
    return _CONTROLS.sub(lambda found: f"\\u{ord(found[0]):04x}", text)


def _encodable(text: str) -> str:
    """`text` with what UTF-8 cannot carry (a lone surrogate from a captured string) replaced."""
    return text.encode("utf-8", "replace").decode()


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _number(value) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _whole(value) -> int | None:
    """An integer given as a JSON number (200 or 200.0), else None."""
    number = _number(value)
    return int(number) if number is not None and number.is_integer() else None


def _is_redacted(value: str) -> bool:
    return bool(_REDACTED.search(value))


def _time(millis, default: datetime) -> datetime:
    if _number(millis) is not None:
        try:
            return datetime.fromtimestamp(millis / 1000, UTC)
        except (OverflowError, OSError, ValueError):
            pass
    return default


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _text(value) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


# --- HAR ---------------------------------------------------------------------------------------


def _headers(headers) -> list[dict]:
    """{name: value} or [{name, value}] / [[name, value]], as HAR's list of {name, value}."""
    if isinstance(headers, dict):
        pairs = headers.items()
    elif isinstance(headers, list):
        pairs = [
            (item.get("name"), item.get("value")) if isinstance(item, dict) else tuple(item)
            for item in headers
            if isinstance(item, dict) or (isinstance(item, list) and len(item) == 2)
        ]
    else:
        pairs = ()
    return [{"name": str(name), "value": _text(value)} for name, value in pairs if name]


def _content_type(headers: list[dict], body: str) -> str:
    for header in headers:
        if header["name"].lower() == "content-type":
            return header["value"]
    return "application/json" if body.lstrip()[:1] in ("{", "[") else "text/plain"


def _body(entry: dict, *names: str) -> str | None:
    for name in names:
        if entry.get(name) is not None:
            return _text(entry[name])
    return None


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def _har_entry(entry: dict, default_time: datetime) -> dict:
    url = str(entry.get("url") or "")
    duration = max(_number(entry.get("duration")) or 0.0, 0.0)
    status = _whole(entry.get("status"))
    status = status if status is not None and 100 <= status <= 599 else 0
    try:
        query = parse_qsl(urlsplit(url).query, keep_blank_values=True)
    except ValueError:  # not a URL at all (`http://[::1`)
        query = []
    request_headers = _headers(entry.get("requestHeaders", entry.get("headers")))
    response_headers = _headers(entry.get("responseHeaders"))
    request_body = _body(entry, "requestBody", "request_body", "body")
    response_body = _body(entry, "responseBody", "response_body")
    request = {
        "method": str(entry.get("method") or "GET").upper(),
        "url": url,
        "httpVersion": "HTTP/1.1",
        "cookies": [],
        "headers": request_headers,
        "queryString": [{"name": name, "value": value} for name, value in query],
        "headersSize": -1,
        "bodySize": _size(request_body) if request_body is not None else -1,
    }
    if request_body is not None:
        request["postData"] = {
            "mimeType": _content_type(request_headers, request_body),
            "text": request_body,
        }
    content = {"size": 0, "mimeType": "x-unknown"}
    if response_body is not None:
        content = {
            "size": _size(response_body),
            "mimeType": _content_type(response_headers, response_body),
            "text": response_body,
        }
    response = {
        "status": status,
        "statusText": _phrase(status),
        "httpVersion": "HTTP/1.1" if status else "",
        "cookies": [],
        "headers": response_headers,
        "content": content,
        "redirectURL": "",
        "headersSize": -1,
        "bodySize": content["size"] if response_body is not None else -1,
    }
    if not status:
        # As Chromium's DevTools writes a request that never got an answer.
        response["_error"] = _text(entry.get("error")) or "failed"
    return {
        "pageref": "page_1",
        "startedDateTime": _iso(_time(entry.get("timestamp"), default_time)),
        "time": duration,
        "request": request,
        "response": response,
        "cache": {},
        "timings": {
            "blocked": -1,
            "dns": -1,
            "connect": -1,
            "send": 0,
            "wait": duration,
            "receive": 0,
            "ssl": -1,
        },
        "_resourceType": "xhr" if entry.get("type") == "xhr" else "fetch",
    }


def har(report: Report) -> dict:
    """The report's network log as HAR 1.2: one page (where the report started), one entry per
    request, oldest first; a request that failed has status 0 and its error in `_error`."""
    created = report.created_at.replace(tzinfo=UTC)
    entries = sorted(
        (
            _har_entry(entry, created)
            for entry in report.detail.network_logs
            if isinstance(entry, dict)
        ),
        key=lambda item: item["startedDateTime"],
    )
    return {
        "log": {
            "version": "1.2",
            "creator": {"name": "svc", "version": "1.0"},
            "pages": [
                {
                    "startedDateTime": entries[0]["startedDateTime"] if entries else _iso(created),
                    "id": "page_1",
                    "title": start_url(report) or report.title,
                    "pageTimings": {"onContentLoad": -1, "onLoad": -1},
                }
            ],
            "entries": entries,
            "comment": f"{report.tracking_id}: {report.title}",
        }
    }


# --- the Playwright test -----------------------------------------------------------------------


def start_url(report: Report) -> str | None:
    """Where the captured actions began: the address the first route change left, else the
    page's address when the report was filed."""
    for action in report.detail.user_actions:
        if isinstance(action, dict) and action.get("type") == "navigation":
            data = action.get("data")
            origin = data.get("from") if isinstance(data, dict) else None
            if isinstance(origin, str) and origin:
                return origin
    url = (report.meta or {}).get("url")
    return url if isinstance(url, str) and url else None


def _string(value) -> str:
    """A JavaScript string literal (JSON's is one; `\\uXXXX` is an escape in both)."""
    return escape_controls(json.dumps(_encodable(str(value)), ensure_ascii=False))


def _comment(text: str, limit: int = 200) -> str:
    """One line of a `//` comment: captured text must not end the comment and become code."""
    line = escape_controls(_LINE_BREAKS.sub(" ", _encodable(str(text))).strip())
    return "// " + (line if len(line) <= limit else line[:limit] + "…")


# What a browser's parse (WHATWG) and urlsplit read differently: a backslash is a slash to the
# one and part of the user name to the other; tabs and line breaks a browser drops; spaces.
_AMBIGUOUS = re.compile(r"[\\\x00-\x20\x7f]")


def _whatwg_url(address: str):
    """ada's parse of an address (a ValueError where it has none). Imported on first use, not
    by every process that loads svc, for a repro kit or a run now and then."""
    import ada_url

    return ada_url.URL(address)


def conformant_url(url: str) -> str | None:
    """`url` as a browser would open it (the WHATWG URL standard, through ada), when that parse
    and the service's (urlsplit) agree on it: http(s), the same host and port, no user name or
    password, nothing the two read differently. Else None. What is written is this normalised
    address, never the reporter's string (contract v6)."""
    if not isinstance(url, str) or _AMBIGUOUS.search(url):
        return None
    try:
        parsed, split = _whatwg_url(url), urlsplit(url)
        split_port = split.port
    except ValueError:
        return None
    if parsed.protocol not in ("http:", "https:") or parsed.username or parsed.password:
        return None
    if split.username is not None or split.password is not None:
        return None
    default_port = {"http": 80, "https": 443}.get(split.scheme.lower())
    same_port = (int(parsed.port) if parsed.port else default_port) == (split_port or default_port)
    same_host = (split.hostname or "").lower() == parsed.hostname.strip("[]").lower()
    return parsed.href if same_host and same_port else None


def staging_origin(report: Report) -> str | None:
    """The origin the project's owner named for reproductions (`settings.repro.origin`)."""
    return report.project.repro_in_force["origin"]


def _is_private(host: str) -> bool:
    """A host named by an address no webhook may reach either (svc.webhooks.sender's rule:
    loopback, private, link-local, the cloud's metadata service...), or `localhost`."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return not sender.is_public(host)
    except ValueError:  # a name, not an address
        return False


def _on_staging(origin: str, address: str) -> str:
    """`address` (conformant) with its origin replaced by the staging origin."""
    parsed = _whatwg_url(address)
    return origin + parsed.pathname + parsed.search + parsed.hash


def _openable(report: Report, url: str) -> str | None:
    """The address the test may open, normalised. With a staging origin (the owner's, §25):
    the reporter's path on it, never the reporter's host. Without: a conformant http(s) address
    on one of the project's allowed origins, and never a loopback, private or link-local one.
    The reporter names the address; the test opens it on a developer's machine or CI, signed
    in: never a file, a script, the cloud's metadata address or an intranet host of their
    choosing, so a project with neither gets no goto (contract v6)."""
    address = conformant_url(url)
    if address is None:
        return None
    if origin := staging_origin(report):
        return _on_staging(origin, address)
    allowed = report.project.allowed_origins
    parsed = _whatwg_url(address)
    if not allowed or _is_private(parsed.hostname):
        return None
    return address if normalize_origin(parsed.origin) in allowed else None


def _expected_url(report: Report, url: str) -> str:
    """An address the page should reach, as the test expects it: on the staging origin when
    there is one and the address is the app's (the reporter's page's origin or an allowed one)."""
    origin = staging_origin(report)
    address = conformant_url(url) if origin else None
    if address is None:
        return url
    apps = evidence.app_origins(start_url(report), report.project.allowed_origins)
    return _on_staging(origin, address) if evidence.origin_of(address) in apps else url


def _locator(action: dict) -> str:
    """The captured element as a Playwright locator: test id, role and name, label, text, CSS."""
    found = action.get("locator")
    if isinstance(found, dict):
        if isinstance(found.get("testId"), str):
            return f"page.getByTestId({_string(found['testId'])})"
        if isinstance(found.get("role"), str) and isinstance(found.get("name"), str):
            role, name = _string(found["role"]), _string(found["name"])
            return f"page.getByRole({role}, {{ name: {name}, exact: true }})"
        if isinstance(found.get("label"), str):
            return f"page.getByLabel({_string(found['label'])}, {{ exact: true }})"
        if isinstance(found.get("text"), str):
            return f"page.getByText({_string(found['text'])}, {{ exact: true }})"
        if isinstance(found.get("css"), str):
            return f"page.locator({_string(found['css'])})"
    # A widget before 1.1 captured only its short CSS-like name (`button#pay`).
    return f"page.locator({_string(action.get('target') or 'body')})"


def _action_lines(
    action: dict, previous: dict | None, visited: list[str], expected=lambda url: url
) -> list[str]:
    kind = action.get("type")
    data = action.get("data") if isinstance(action.get("data"), dict) else {}
    if kind == "click":
        return [f"await {_locator(action)}.click();"]
    if kind == "input":
        field = str(data.get("field") or "text")
        if field in ("select-one", "select-multiple", "select"):
            return [
                _comment(
                    f"The reporter chose an option in {action.get('target')} "
                    "(which one was not captured)"
                )
            ]
        if field in ("checkbox", "radio", "file", "range", "color"):
            return [_comment(f"The reporter changed {action.get('target')} ({field})")]
        value = PLACEHOLDERS.get(field, DEFAULT_PLACEHOLDER)
        return [
            _comment(f"Typed into {action.get('target')}: the value was never captured"),
            f"await {_locator(action)}.fill({_string(value)});",
        ]
    if kind == "navigation":
        url = str(action.get("target") or "")
        via = data.get("via")
        clicked = (
            previous is not None
            and previous.get("type") == "click"
            and _gap(previous, action) <= CLICK_CAUSED_MS
        )
        lines = []
        if via == "popstate" and not clicked and url in visited[:-1]:
            lines.append("await page.goBack();")
        visited.append(url)
        if _is_redacted(url):
            lines.append(_comment(f"The page went to {url} (parts redacted in the report)"))
        elif url:  # no target, no assertion: toHaveURL("") could never pass
            lines.append(f"await expect(page).toHaveURL({_string(expected(url))});")
        return lines
    return []


def _gap(earlier: dict, later: dict) -> float:
    start, end = _number(earlier.get("timestamp")), _number(later.get("timestamp"))
    return max(0.0, end - start) if start is not None and end is not None else 0.0


def _forwarded_by_label(previous: dict | None, action: dict) -> bool:
    """A click on a label is followed at once by the click the browser passes to its field."""
    return (
        previous is not None
        and previous.get("type") == action.get("type") == "click"
        and str(previous.get("target", "")).startswith("label")
        and _gap(previous, action) <= LABEL_FORWARD_MS
    )


def _marks(report: Report) -> list[dict]:
    """Failed requests and console errors, as comments at their moment in the test."""
    marks = []
    for entry in report.detail.network_logs:
        if not isinstance(entry, dict):
            continue
        status = entry.get("status")
        if failed_request(entry):
            what = f"{str(entry.get('method') or 'GET').upper()} {entry.get('url')}"
            outcome = entry.get("error") or (f"status {status}" if status else "no answer")
            marks.append(
                {"timestamp": entry.get("timestamp"), "text": f"Failed request: {what} ({outcome})"}
            )
    for entry in report.detail.console_logs:
        if isinstance(entry, dict) and str(entry.get("level", "")).lower() == "error":
            marks.append(
                {
                    "timestamp": entry.get("timestamp"),
                    "text": f"Console error: {entry.get('message')}",
                }
            )
    return marks


def _sort_key(item: dict) -> float:
    return _number(item.get("timestamp")) or 0.0


def _step_title(number: int, action: dict) -> str:
    """What a step does, in a line: its number first (a run's failed step is named by it)."""
    kind = action.get("type")
    what = {"click": "click", "input": "fill", "navigation": "reach"}.get(kind, kind)
    target = action.get("target") or ("a page" if kind == "navigation" else "")
    text = escape_controls(_LINE_BREAKS.sub(" ", _encodable(str(target))).strip())
    return f"{number}. {what} {text[:80]}"


def _error_pattern(message: str) -> str:
    """A regular expression (JavaScript's and Python's alike) for an error's message: its words
    as they are, what signatures normalise (numbers, ids, quoted values) any text."""
    text = evidence.bare(_LINE_BREAKS.split(message, 1)[0])[:MAX_PATTERN]
    parts, last = [], 0
    for start, end in signatures.variable_spans(text):
        parts += [re.escape(text[last:start]), ".+?"]
        last = end
    return "".join([*parts, re.escape(text[last:])])


def _request_pattern(entry: dict) -> str:
    """A regular expression for a failed request as the test writes it ("POST /path -> 500"):
    the same method and status, the path's ids any segment, a language prefix or none."""
    method = str(entry.get("method") or "GET").upper()[:10]
    template = signatures.path_template(str(entry.get("url") or ""))
    path = "/".join("[^/]+" if part == ":id" else re.escape(part) for part in template.split("/"))
    status = entry.get("status") or 0
    return f"^{re.escape(method)} (?:/[a-z]{{2}}(?:[-_][a-z]{{2}})?)?{path} -> {status}$"


def evidence_patterns(report: Report) -> list[str]:
    """What the test looks for at its end: the report's own error and failed request (§21)."""
    error, request, _ = signatures.evidence_entries(
        report.meta,
        report.detail.console_logs,
        report.detail.network_logs,
        report.project.allowed_origins,
    )
    patterns = [_error_pattern(str(error["message"]))] if error else []
    return patterns + ([_request_pattern(request)] if request else [])


# What the test sees go wrong, in the words the evidence's patterns match.
WATCH = (
    "// What goes wrong, to look for the report's own error and failed request at the end.",
    "const seen: string[] = [];",
    "page.on('pageerror', (error) => seen.push(`${error.name}: ${error.message}`));",
    "page.on('console', (message) => { if (message.type() === 'error') seen.push(message.text()); });",  # noqa: E501
    "const where = (url: string) => new URL(url).pathname;",
    "page.on('response', (response) => { if (response.status() >= 400) seen.push(",
    "  `${response.request().method()} ${where(response.url())} -> ${response.status()}`); });",
    "page.on('requestfailed', (request) => seen.push(`${request.method()} ${where(request.url())} -> 0`));",  # noqa: E501
)


def playwright_spec(report: Report, sandbox: str | None = None) -> str:
    """A Playwright test (TypeScript) that opens the report's first page address (on the
    staging origin when the project names one) and replays its clicks, route changes and typed
    fields in order, each a numbered `test.step`, with the failed requests and console errors as
    comments where they happened; it ends by expecting the report's own error or failed request
    to come again (none: it says it cannot tell). `sandbox`: the module svc's runner gives
    `test` from (docs/repro-kit.md, "The runner"), instead of @playwright/test."""
    start = start_url(report)
    actions = [
        a
        for a in report.detail.user_actions
        if isinstance(a, dict) and a.get("type") in ("click", "input", "navigation")
    ]
    steps = sorted(
        [{"kind": "action", "action": a, "timestamp": a.get("timestamp")} for a in actions]
        + [{"kind": "mark", **mark} for mark in _marks(report)],
        key=_sort_key,
    )
    title = f"{report.tracking_id}: {report.title}"
    source = _string(sandbox) if sandbox else "'@playwright/test'"
    lines = [
        _comment(title),
        *UNTRUSTED,
        "// Made by svc from the report's captured clicks, route changes and typed fields",
        "// (docs/repro-kit.md). Typed values were never captured: fields get placeholders.",
        f"import {{ test, expect }} from {source};",
        "",
    ]
    attribute = widget.settings_in_force(report.project)["test_id_attribute"]
    if attribute != WIDGET_DEFAULTS["test_id_attribute"]:  # the project's own (repro-kit.md)
        lines += [f"test.use({{ testIdAttribute: {_string(attribute)} }});", ""]
    viewport = (report.meta or {}).get("viewport")
    if isinstance(viewport, dict) and all(
        0 < (_whole(viewport.get(side)) or 0) < 100_000 for side in ("width", "height")
    ):
        lines += [
            f"test.use({{ viewport: {{ width: {int(viewport['width'])}, "
            f"height: {int(viewport['height'])} }} }});",
            "",
        ]
    body = [*WATCH]
    number = 0

    def step(action: dict, code: list[str]) -> None:
        nonlocal number
        number += 1
        body.append(f"await test.step({_string(_step_title(number, action))}, async () => {{")
        body.extend("  " + line for line in code)
        body.append("});")

    if start is None:
        body.append("// The report holds no page address: put the page's address here.")
        body.append("await page.goto('about:blank');")
    elif (opened := _openable(report, start)) is None:
        body.append("// Not opened: with no staging origin (the project's settings.repro), only")
        body.append("// http(s) addresses of its allowed origins are, never a private one.")
        body.append(_comment(f"The reporter's address: {start}"))
        body.append("// Fill in the page's address: await page.goto('https://...');")
    else:
        if _is_redacted(start):
            body.append("// Parts of this address were redacted in the report: fill them in.")
        step({"type": "navigation", "target": opened}, [f"await page.goto({_string(opened)});"])
    visited = [start or ""]
    previous = None
    expected = functools.partial(_expected_url, report)
    for item in steps:
        if item["kind"] == "mark":
            body.append(_comment(item["text"]))
            continue
        action = item["action"]
        if _forwarded_by_label(previous, action):
            continue  # replaying the label's click makes this one again
        if previous is not None:
            pause = _gap(previous, action)
            if pause >= MIN_WAIT_MS:
                body.append(
                    f"await page.waitForTimeout({int(min(pause, MAX_WAIT_MS))});"
                    f" // the reporter paused {pause / 1000:.1f} s"
                )
        code = _action_lines(action, previous, visited, expected)
        if any(not line.startswith("//") for line in code):
            step(action, code)
        else:
            body.extend(code)
        previous = action
    final = (report.meta or {}).get("url")
    if isinstance(final, str) and final:
        body.append("// Where the reporter was when they filed the report:")
        if _is_redacted(final):
            body.append(_comment(final + " (parts redacted in the report)"))
        else:
            body.append(f"await expect.soft(page).toHaveURL({_string(expected(final))});")
    if patterns := evidence_patterns(report):
        body.append("// The bug is back when the report's own error or failed request comes again")
        body.append(f"// (up to {SETTLE_MS // 1000} s for each: an error follows its request).")
        body.append(
            "const bug = ["
            + ", ".join(f"new RegExp({_string(pattern)}, 'i')" for pattern in patterns)
            + "];"
        )
        body.append(f"for (let waited = 0; waited < {SETTLE_MS} && bug.some((pattern) =>")
        body.append("  !seen.some((line) => pattern.test(line))); waited += 100) {")
        body.append("  await page.waitForTimeout(100);")
        body.append("}")
        body.append(
            "expect(seen.filter((line) => bug.some((pattern) => pattern.test(line))),"
            ' "the report\'s error or failed request").not.toEqual([]);'
        )
    else:
        body.append("// The report holds no error and no failed request of the app's own: this")
        body.append("// test replays the steps and cannot tell whether the bug is back.")
        body.append("test.info().annotations.push({ type: 'svc', description: 'inconclusive' });")
    lines.append(f"test({_string(title)}, async ({{ page }}) => {{")
    lines += ["  " + line for line in body]
    lines += ["});", ""]
    return "\n".join(lines)
