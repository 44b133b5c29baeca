"""Jira Cloud (REST API 3, Atlassian Document Format) and Jira Server / Data Center (REST API
2, wiki text), told apart by the e-mail address a Cloud token goes with (docs/integrations.md)."""

import base64
import re

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

NAME = "Jira"
DONE = "done"  # the status category of every finished status, whatever its name
_KEY = re.compile(r"^[A-Z][A-Z0-9_]{0,49}-[0-9]{1,18}$")


def _cloud(connection: Connection) -> bool:
    return bool(connection.config.get("email"))


def api_of(config: dict) -> str:
    return config["site_url"].rstrip("/")


def _api(connection: Connection) -> str:
    version = "3" if _cloud(connection) else "2"
    return f"{connection.config['site_url'].rstrip('/')}/rest/api/{version}"


def _headers(connection: Connection) -> dict:
    if _cloud(connection):
        pair = f"{connection.config['email']}:{connection.token}".encode()
        return {"Authorization": "Basic " + base64.b64encode(pair).decode()}
    return {"Authorization": f"Bearer {connection.token}"}


def _browse(config: dict, key: str) -> str:
    return f"{config['site_url'].rstrip('/')}/browse/{key}"


def create(connection: Connection, content: Content) -> Linked:
    description = render.adf(content) if _cloud(connection) else render.wiki(content)
    fields = {
        "project": {"key": connection.config["project_key"]},
        "summary": content.title,
        "issuetype": {"name": connection.config.get("issue_type") or "Bug"},
        "description": description,
    }
    issue = connection.call(
        "POST", f"{_api(connection)}/issue", {"fields": fields}, _headers(connection)
    )
    # The id stays when the issue moves to another project; the key does not.
    return Linked(
        str(issue["id"]), issue["key"], _browse(connection.config, issue["key"]), str(issue["id"])
    )


def set_state(connection: Connection, address: str, closed: bool) -> None:
    """The first transition into a status of the `done` category (closing), or out of it
    (reopening: one to `indeterminate`, in progress, if there is one)."""
    url = f"{_api(connection)}/issue/{number_in(address)}/transitions"
    answer = connection.call("GET", url, None, _headers(connection))
    transitions = answer.get("transitions", []) if isinstance(answer, dict) else []

    def category(transition) -> str:
        return ((transition.get("to") or {}).get("statusCategory") or {}).get("key", "")

    if closed:
        usable = [t for t in transitions if category(t) == DONE]
    else:
        usable = sorted(
            (t for t in transitions if category(t) != DONE),
            key=lambda t: category(t) != "indeterminate",
        )
    if not usable:
        wanted = "a done status" if closed else "an open status"
        raise TrackerError(f"Jira offers no transition to {wanted} for this issue", 409)
    connection.call("POST", url, {"transition": {"id": usable[0]["id"]}}, _headers(connection))


def check(connection: Connection) -> str:
    key = connection.config["project_key"]
    project = connection.call(
        "GET", f"{_api(connection)}/project/{key}", None, _headers(connection)
    )
    return f"Reached {project.get('key')} ({project.get('name')})"


def verify(secret: str, headers: dict, body: bytes) -> bool:
    return same(headers.get("x-hub-signature"), "sha256=" + hmac_sha256(secret, body))


def delivery_id(headers: dict) -> str | None:
    return headers.get("x-atlassian-webhook-identifier")


def read_event(config: dict, headers: dict, payload: dict) -> Event | None:
    issue = payload.get("issue")
    if payload.get("webhookEvent") != "jira:issue_updated" or not isinstance(issue, dict):
        return None
    status = (issue.get("fields") or {}).get("status") or {}
    done = (status.get("statusCategory") or {}).get("key") == DONE
    items = (payload.get("changelog") or {}).get("items") or []
    status_changed = any(isinstance(item, dict) and item.get("field") == "status" for item in items)
    check_host(issue.get("self"), api_of(config))
    key = str(issue["key"])
    if not _KEY.match(key):
        return None
    # A moved issue has a new key; its page is built on the configured site.
    linked = Linked(str(issue["id"]), key, _browse(config, key), number_in(str(issue["id"])), done)
    return Event(linked, done if status_changed else None, f"status {status.get('name', '?')}")
