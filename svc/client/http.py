"""The API as the command line uses it: a bearer token, JSON in and out, and every failure as
a `Failure` with the exit code it means (0 ok, 1 error, 2 usage, 3 not signed in or token
refused, 4 not found)."""

import ipaddress
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

ERROR, USAGE, UNAUTHORIZED, NOT_FOUND = 1, 2, 3, 4
TIMEOUT = 30
# A read the service could not answer just then (a 503 of a database busy or restarting, a
# proxy's 502 or 504) is asked again, three times at most, after its Retry-After (at most
# 10 s; without one at once, then after 1 and 2 s): one page of `reports list --all` need not
# end the whole command. A change is never sent twice, and nothing is retried after a
# time-out (the service may still be at work on it).
READ_RETRIES = Retry(
    total=3,
    connect=0,
    read=0,
    other=0,
    status=3,
    allowed_methods=frozenset({"GET"}),
    status_forcelist=frozenset({502, 503, 504}),
    backoff_factor=0.5,
    retry_after_max=10,
    raise_on_status=False,  # the last answer's `detail` is what the user reads
)


class Failure(Exception):
    def __init__(self, message: str, exit_code: int = ERROR, status: int | None = None):
        super().__init__(message)
        self.exit_code = exit_code
        self.status = status  # the HTTP status that said it, if one did


def plain_http_refused(url: str) -> bool:
    """Whether sending a token to `url` would put it on the wire in clear: http:// to anything
    but this machine."""
    parts = urlsplit(url)
    if parts.scheme != "http":
        return False
    host = parts.hostname or ""
    if host == "localhost":
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True


class Api:
    # `svc --insecure` sets it: a token may then go over plain http:// to another host.
    insecure = False

    def __init__(self, url: str | None, token: str | None):
        if not url or not token:
            raise Failure("Not signed in: run `svc login --url https://...`", UNAUTHORIZED)
        if plain_http_refused(url) and not Api.insecure:
            raise Failure(
                f"Refusing to send your token to {url} over plain http://, where anyone on the "
                "way can read it: use https://, or --insecure if you must",
                USAGE,
            )
        self.base = url.rstrip("/") + "/api/v1"
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"
        for scheme in ("https://", "http://"):
            self.session.mount(scheme, HTTPAdapter(max_retries=READ_RETRIES))

    def request(self, method: str, path: str, **kwargs) -> requests.Response:
        try:
            response = self.session.request(method, self.base + path, timeout=TIMEOUT, **kwargs)
        except requests.RequestException as error:
            raise Failure(f"Cannot reach {self.base}: {_why(error)}") from None
        if response.status_code >= 400:
            raise Failure(_detail(response), _exit_code(response.status_code), response.status_code)
        return response

    def get(self, path: str, **params):
        return self.request("GET", path, params=params).json()

    def post(self, path: str, body: dict):
        return self.request("POST", path, json=body).json()

    def patch(self, path: str, body: dict):
        return self.request("PATCH", path, json=body).json()

    def delete(self, path: str) -> None:
        self.request("DELETE", path)


def _detail(response: requests.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return f"HTTP {response.status_code}"
    detail = body.get("detail", f"HTTP {response.status_code}")
    errors = body.get("errors") or {}
    fields = "; ".join(f"{name}: {' '.join(messages)}" for name, messages in errors.items())
    return f"{detail} ({fields})" if fields else detail


def _exit_code(status: int) -> int:
    if status == 401:
        return UNAUTHORIZED
    if status == 404:
        return NOT_FOUND
    return ERROR


def _why(error: requests.RequestException) -> str:
    """What went wrong in a few words, not urllib3's chain of wrapped errors ("Max retries
    exceeded with url: ... (Caused by NewConnectionError(...))")."""
    if isinstance(error, requests.exceptions.SSLError):
        return "its TLS certificate was refused"
    if isinstance(error, requests.exceptions.Timeout):
        return "it did not answer in time"
    if isinstance(error, requests.exceptions.ConnectionError):
        text = str(error)
        if "Name or service not known" in text or "nodename nor servname" in text:
            return "no such host"
        if "Connection refused" in text:
            return "connection refused (is svc running there?)"
        return "the connection failed"
    return type(error).__name__
