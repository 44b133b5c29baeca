"""What every tracker shares: one call to its API through the webhooks' outbound guard, its
refusals turned into plain words, and the shapes the tracker modules hand back."""

import base64
import contextlib
import hmac
import json
import re
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import quote, quote_plus, urlsplit

from svc.webhooks import sender

USER_AGENT = "svc-integrations/1.0"
# A tracker's JSON answer (an issue, a page of transitions) is small; more is not read.
MAX_ANSWER_BYTES = 1024 * 1024
# Statuses worth another attempt later; any other refusal stays a refusal (docs/integrations.md).
_TRANSIENT = {408, 425, 429, 500, 502, 503, 504}


class TrackerError(Exception):
    """The tracker refused, or could not be reached. `words` is safe to show (never the
    token); `final` says whether trying again later can help."""

    def __init__(self, words: str, status_code: int | None = None, retry_after: float = 0):
        super().__init__(words)
        self.words = words[:480]
        self.status_code = status_code
        self.retry_after = retry_after
        self.final = status_code is not None and status_code not in _TRANSIENT


class RefusedDelivery(Exception):
    """A signed delivery refused whatever else it says: it names an issue somewhere else than
    the integration's tracker (an address svc would later send the token to), or is too old."""


def host_of(url) -> str:
    """`host[:port]` of an address, lower-cased; "" for anything else."""
    try:
        return urlsplit(url).netloc.rpartition("@")[2].lower() if isinstance(url, str) else ""
    except ValueError:
        return ""


def check_host(named, *allowed: str) -> None:
    """RefusedDelivery unless the address a delivery names is on one of the `allowed` hosts."""
    host = host_of(named)
    if host not in {host_of(url) for url in allowed}:
        raise RefusedDelivery(f"it names {host or 'no host'}, not this integration's tracker")


_NUMBER = re.compile(r"(?:^|/)(\d{1,18})$")


def number_in(address: str) -> str:
    """The issue's number (or numeric id) an address ends with: what svc builds the issue's
    API address from, on the configured host (an address stored before svc built them itself
    was a whole URL, or GitLab's "project/iid")."""
    found = _NUMBER.search(address or "")
    if found is None:
        raise TrackerError(f"svc cannot tell the issue's number from {address!r}", 422)
    return found[1]


@contextlib.contextmanager
def reading(name: str):
    """A tracker's answer that lacks what svc reads (an issue without its `url`) is the
    tracker's fault: a TrackerError naming it and what was missing, never a traceback."""
    try:
        yield
    except KeyError as exc:
        raise TrackerError(f"{name} answered without {exc.args[0]!r}, which svc needs") from None
    except (TypeError, IndexError, AttributeError):
        raise TrackerError(f"{name} answered in a shape svc does not know") from None


@dataclass(frozen=True)
class Connection:
    """Where and how to reach one integration's tracker."""

    name: str  # "GitHub", for the words of errors
    config: dict
    token: str
    timeout: float
    allow_private: bool
    ca_bundle: str | None

    def call(self, method: str, url: str, payload=None, headers: dict | None = None):
        """One JSON request; the decoded answer, or TrackerError."""
        body = None if payload is None else json.dumps(payload).encode()
        all_headers = {"Accept": "application/json", "User-Agent": USER_AGENT, **(headers or {})}
        if body is not None:
            all_headers["Content-Type"] = "application/json"
        reply = sender.exchange(
            method,
            url,
            body,
            all_headers,
            timeout=self.timeout,
            allow_private=self.allow_private,
            ca_bundle=self.ca_bundle,
            max_bytes=MAX_ANSWER_BYTES,
        )
        if reply.error is not None:
            raise TrackerError(self.hide(f"{self.name} could not be reached: {reply.error}"))
        answer = _decoded(reply.body)
        if not 200 <= reply.status_code < 300:
            raise self.refusal(reply.status_code, answer, reply.headers or {})
        return answer

    def refusal(self, status: int, answer, headers: dict) -> TrackerError:
        words = _their_words(answer)
        meaning = _MEANINGS.get(status, "refused the request")
        text = f"{self.name} {meaning} (HTTP {status})" + (f": {words}" if words else "")
        retry_after = _seconds(headers.get("retry-after")) if status == 429 else 0
        if retry_after:
            text += f"; it asks to wait {retry_after:g} s"
        return TrackerError(self.hide(text), status, retry_after)

    def hide(self, text: str) -> str:
        """Whatever a tracker echoes, the token never leaves in svc's words: as it is,
        percent-encoded, or inside Basic's base64 (Jira Cloud's `email:token`)."""
        if not self.token:
            return text
        forms = {self.token, quote(self.token, safe=""), quote_plus(self.token)}
        email = self.config.get("email")
        pairs = [f"{email}:{self.token}"] if email else []
        forms |= {base64.b64encode(pair.encode()).decode() for pair in pairs}
        for form in sorted(forms, key=len, reverse=True):
            text = text.replace(form, "[token]")
        return text


_MEANINGS = {
    400: "refused the request as malformed",
    401: "refused the token: it is wrong, expired or revoked",
    403: "does not let this token do that (missing scope or permission)",
    404: "found no such repository, project or issue, or the token cannot see it",
    409: "reported a conflict",
    410: "says it is gone",
    422: "refused the issue's fields",
    429: "asks svc to slow down (rate limit)",
}


def _decoded(raw: bytes):
    try:
        return json.loads(raw) if raw else None
    except (ValueError, UnicodeDecodeError):
        return raw[:200].decode("utf-8", "replace")


def _their_words(answer) -> str:
    """The tracker's own explanation, from the forms their error bodies take."""
    if isinstance(answer, str):
        return " ".join(answer.split())[:300]
    if not isinstance(answer, dict):
        return ""
    parts = []
    for key in ("message", "error", "error_description"):
        if isinstance(answer.get(key), str):
            parts.append(answer[key])
    for key in ("errorMessages", "errors"):
        value = answer.get(key)
        if isinstance(value, list):
            parts += [
                item.get("message", "") if isinstance(item, dict) else str(item) for item in value
            ]
        elif isinstance(value, dict):
            parts += [f"{name}: {text}" for name, text in value.items()]
    return "; ".join(part for part in parts if part)[:300]


def _seconds(raw: str | None) -> float:
    try:
        return max(0.0, float(raw))
    except (TypeError, ValueError):
        return 0.0


@dataclass(frozen=True)
class Linked:
    """An issue as the tracker describes it: its stable id, its human key (#12, PROJ-7), its page
    (None: keep the one known), what later calls name it by (its number, key or id, never a URL:
    svc builds the address on the configured host), and whether it is done."""

    remote_id: str
    key: str
    url: str | None
    address: str
    closed: bool = False


@dataclass(frozen=True)
class Event:
    """What a tracker's delivery says of one of its issues: None for `closed` when it says
    nothing of the issue's state (an edit of its title)."""

    issue: Linked
    closed: bool | None
    words: str = ""  # "closed", "moved to Done", for the integration's page


@dataclass
class Content:
    """A report made into an issue: the title, and the parts of its body in order."""

    title: str
    description: str
    facts: list[tuple[str, str]] = field(default_factory=list)  # ("Severity", "high")
    lists: list[tuple[str, list[str]]] = field(default_factory=list)  # ("Console errors", [...])
    links: list[tuple[str, str]] = field(default_factory=list)  # ("Report in svc", url)


class Tracker(Protocol):
    """What svc asks of an issue tracker; each module of svc/integrations is one (a module
    meets a Protocol with its functions, as svc.storage's stores do with their methods)."""

    NAME: str  # as people write it: "GitHub"

    def api_of(self, config: dict) -> str:
        """Where svc calls the tracker with the token, by an integration's settings."""

    def create(self, connection: Connection, content: Content) -> Linked:
        """A new issue made of a report; TrackerError when the tracker refuses."""

    def set_state(self, connection: Connection, address: str, closed: bool) -> None:
        """Close (or reopen) the issue at `address` (Linked.address)."""

    def check(self, connection: Connection) -> str:
        """One harmless call (reading the repository, project or account): what it found."""

    def verify(self, secret: str, headers: dict, body: bytes) -> bool:
        """Whether a delivery is the tracker's own, signed with the integration's secret."""

    def delivery_id(self, headers: dict) -> str | None:
        """The delivery's own id, where the tracker sends one (each is applied once)."""

    def read_event(self, config: dict, headers: dict, payload: dict) -> Event | None:
        """What a delivery says of an issue; None when it is not about one svc reads;
        RefusedDelivery when it names an issue on another host than `config`'s, or is stale."""


def same(given: str | None, expected: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())
