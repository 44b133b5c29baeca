"""GitLab (gitlab.com and self-managed): the REST API v4's issues (docs/integrations.md)."""

from urllib.parse import quote

from svc.integrations import render
from svc.integrations.base import (
    Connection,
    Content,
    Event,
    Linked,
    check_host,
    number_in,
    same,
)

NAME = "GitLab"
API_URL = "https://gitlab.com/api/v4"


def _api(connection: Connection) -> str:
    return api_of(connection.config)


def api_of(config: dict) -> str:
    return (config.get("api_url") or API_URL).rstrip("/")


def _headers(connection: Connection) -> dict:
    return {"PRIVATE-TOKEN": connection.token}


def _project_url(connection: Connection) -> str:
    # "group/name" is one path segment, its slash encoded; a numeric id is as it is.
    return f"{_api(connection)}/projects/{quote(str(connection.config['project']), safe='')}"


def create(connection: Connection, content: Content) -> Linked:
    issue = connection.call(
        "POST",
        f"{_project_url(connection)}/issues",
        {
            "title": content.title,
            "description": render.markdown(content),
            "labels": ",".join(connection.config.get("labels") or []),
        },
        _headers(connection),
    )
    # The iid, on the configured project, is what later calls name.
    return Linked(str(issue["id"]), f"#{issue['iid']}", issue["web_url"], str(issue["iid"]))


def set_state(connection: Connection, address: str, closed: bool) -> None:
    connection.call(
        "PUT",
        f"{_project_url(connection)}/issues/{number_in(address)}",
        {"state_event": "close" if closed else "reopen"},
        _headers(connection),
    )


def check(connection: Connection) -> str:
    project = connection.call("GET", _project_url(connection), None, _headers(connection))
    return f"Reached {project.get('path_with_namespace')}"


def verify(secret: str, headers: dict, body: bytes) -> bool:
    # GitLab sends the secret token itself, not a signature of the body.
    return same(headers.get("x-gitlab-token"), secret)


def delivery_id(headers: dict) -> str | None:
    return headers.get("idempotency-key") or headers.get("x-gitlab-event-uuid")


_STATES = {"close": True, "reopen": False}


def read_event(config: dict, headers: dict, payload: dict) -> Event | None:
    attributes = payload.get("object_attributes")
    if payload.get("object_kind") != "issue" or not isinstance(attributes, dict):
        return None
    check_host(attributes.get("url"), api_of(config))
    action = attributes.get("action")
    iid = str(attributes["iid"])
    linked = Linked(str(attributes["id"]), f"#{iid}", None, iid)
    return Event(linked, _STATES.get(action), str(action))
