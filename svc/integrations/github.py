"""GitHub and GitHub Enterprise Server: the REST API's issues (docs/integrations.md)."""

from svc.integrations import render
from svc.integrations.base import (
    Connection,
    Content,
    Event,
    Linked,
    TrackerError,
    check_host,
    number_in,
    same,
)
from svc.webhooks.signing import hmac_sha256

NAME = "GitHub"
API_URL = "https://api.github.com"


def _headers(connection: Connection) -> dict:
    return {
        "Authorization": f"Bearer {connection.token}",
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28",
    }


def api_of(config: dict) -> str:
    return (config.get("api_url") or API_URL).rstrip("/")


def _repository_url(connection: Connection) -> str:
    return f"{api_of(connection.config)}/repos/{connection.config['repository']}"


def create(connection: Connection, content: Content) -> Linked:
    issue = connection.call(
        "POST",
        f"{_repository_url(connection)}/issues",
        {
            "title": content.title,
            "body": render.markdown(content),
            "labels": list(connection.config.get("labels") or []),
        },
        _headers(connection),
    )
    # `id` never changes; the number, on the configured repository, is what later calls name.
    return Linked(str(issue["id"]), f"#{issue['number']}", issue["html_url"], str(issue["number"]))


def set_state(connection: Connection, address: str, closed: bool) -> None:
    state = {"state": "closed", "state_reason": "completed"} if closed else {"state": "open"}
    url = f"{_repository_url(connection)}/issues/{number_in(address)}"
    connection.call("PATCH", url, state, _headers(connection))


def check(connection: Connection) -> str:
    repository = connection.call("GET", _repository_url(connection), None, _headers(connection))
    if not repository.get("has_issues", True):
        raise TrackerError(f"{repository.get('full_name')} has its issues turned off")
    return f"Reached {repository.get('full_name')}"


def verify(secret: str, headers: dict, body: bytes) -> bool:
    return same(headers.get("x-hub-signature-256"), "sha256=" + hmac_sha256(secret, body))


def delivery_id(headers: dict) -> str | None:
    return headers.get("x-github-delivery")


_STATES = {"closed": True, "reopened": False}


def read_event(config: dict, headers: dict, payload: dict) -> Event | None:
    issue = payload.get("issue")
    if headers.get("x-github-event") != "issues" or not isinstance(issue, dict):
        return None
    check_host(issue.get("url"), api_of(config))
    action = payload.get("action")
    linked = Linked(str(issue["id"]), f"#{issue['number']}", None, str(issue["number"]))
    return Event(linked, _STATES.get(action), str(action))
