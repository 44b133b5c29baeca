"""GitLab (gitlab.com and self-managed): the REST API v4's issues (docs/integrations.md)."""

from urllib.parse import quote

from svc.integrations import render
from svc.integrations.base import Connection, Content, Event, Linked, same

NAME = "GitLab"
API_URL = "https://gitlab.com/api/v4"


def _api(connection: Connection) -> str:
    return (connection.config.get("api_url") or API_URL).rstrip("/")


def _headers(connection: Connection) -> dict:
    return {"PRIVATE-TOKEN": connection.token}


def _project_url(connection: Connection) -> str:
    # "group/name" is one path segment, its slash encoded; a numeric id is as it is.
    return f"{_api(connection)}/projects/{quote(str(connection.config['project']), safe='')}"


def _linked(issue: dict, url_key: str = "web_url") -> Linked:
    # The numeric project id survives a rename or a move of the project; the path does not.
    return Linked(
        str(issue["id"]),
        f"#{issue['iid']}",
        issue[url_key],
        f"{issue['project_id']}/{issue['iid']}",
        issue.get("state") == "closed",
    )


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
    return _linked(issue)


def set_state(connection: Connection, address: str, closed: bool) -> None:
    project_id, iid = address.split("/", 1)
    connection.call(
        "PUT",
        f"{_api(connection)}/projects/{project_id}/issues/{iid}",
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


def read_event(headers: dict, payload: dict) -> Event | None:
    attributes = payload.get("object_attributes")
    if payload.get("object_kind") != "issue" or not isinstance(attributes, dict):
        return None
    action = attributes.get("action")
    return Event(_linked(attributes, "url"), _STATES.get(action), str(action))
