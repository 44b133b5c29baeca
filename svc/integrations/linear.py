"""Linear: its GraphQL API (docs/integrations.md)."""

import time

from svc.integrations import render
from svc.integrations.base import (
    Connection,
    Content,
    Event,
    Linked,
    RefusedDelivery,
    TrackerError,
    check_host,
    same,
)
from svc.webhooks.signing import hmac_sha256

NAME = "Linear"
API_URL = "https://api.linear.app/graphql"
WEB_URL = "https://linear.app"
MAX_DELIVERY_AGE_SECONDS = 60
# Workflow state types: a completed or canceled issue is done.
DONE_TYPES = ("completed", "canceled")

CREATE = """mutation IssueCreate($input: IssueCreateInput!) {
  issueCreate(input: $input) { success issue { id identifier url state { type } } }
}"""
STATES = """query TeamStates($teamId: String!) {
  team(id: $teamId) { states { nodes { id name type position } } }
}"""
UPDATE = """mutation IssueUpdate($id: String!, $input: IssueUpdateInput!) {
  issueUpdate(id: $id, input: $input) { success }
}"""
VIEWER = "query Viewer { viewer { id name } }"


def _graphql(connection: Connection, document: str, variables: dict | None = None) -> dict:
    answer = connection.call(
        "POST",
        connection.config.get("api_url") or API_URL,
        {"query": document, "variables": variables or {}},
        # A personal API key goes as it is; an OAuth token would carry "Bearer ".
        {"Authorization": connection.token},
    )
    errors = answer.get("errors") if isinstance(answer, dict) else None
    if errors:
        # GraphQL answers 200 with errors; Linear marks its rate limit with a code.
        first = errors[0] if isinstance(errors[0], dict) else {}
        limited = (first.get("extensions") or {}).get("code") == "RATELIMITED"
        words = first.get("message") or "an error"
        raise TrackerError(connection.hide(f"Linear refused: {words}"), 429 if limited else 422)
    return answer.get("data") or {}


def api_of(config: dict) -> str:
    return config.get("api_url") or API_URL


def create(connection: Connection, content: Content) -> Linked:
    issue_input = {
        "teamId": connection.config["team_id"],
        "title": content.title,
        "description": render.markdown(content),
    }
    if connection.config.get("label_ids"):
        issue_input["labelIds"] = list(connection.config["label_ids"])
    issue = _graphql(connection, CREATE, {"input": issue_input})["issueCreate"]["issue"]
    return Linked(issue["id"], issue["identifier"], issue["url"], issue["id"])


def set_state(connection: Connection, address: str, closed: bool) -> None:
    """Into the team's first `completed` state (closing), or its first `started` one."""
    team = _graphql(connection, STATES, {"teamId": connection.config["team_id"]})["team"]
    wanted = "completed" if closed else "started"
    states = sorted(
        (state for state in team["states"]["nodes"] if state["type"] == wanted),
        key=lambda state: state.get("position", 0),
    )
    if not states:
        raise TrackerError(f"Linear's team has no {wanted} state", 409)
    _graphql(connection, UPDATE, {"id": address, "input": {"stateId": states[0]["id"]}})


def check(connection: Connection) -> str:
    viewer = _graphql(connection, VIEWER)["viewer"]
    return f"Signed in as {viewer.get('name')}"


def _refuse_if_stale(sent_at) -> None:
    """Linear signs its delivery's time (`webhookTimestamp`, milliseconds) and asks receivers
    to refuse one more than a minute old: an old delivery sent again is a replay."""
    if not isinstance(sent_at, int | float) or isinstance(sent_at, bool):
        raise RefusedDelivery("it carries no webhookTimestamp")
    age = time.time() - sent_at / 1000
    if abs(age) > MAX_DELIVERY_AGE_SECONDS:
        raise RefusedDelivery(f"it was sent {age:.0f} s ago (at most {MAX_DELIVERY_AGE_SECONDS})")


def verify(secret: str, headers: dict, body: bytes) -> bool:
    return same(headers.get("linear-signature"), hmac_sha256(secret, body))


def delivery_id(headers: dict) -> str | None:
    return headers.get("linear-delivery")


def read_event(config: dict, headers: dict, payload: dict) -> Event | None:
    _refuse_if_stale(payload.get("webhookTimestamp"))
    data = payload.get("data")
    if payload.get("type") != "Issue" or payload.get("action") != "update":
        return None
    if not isinstance(data, dict):
        return None
    state = data.get("state") or {}
    done = state.get("type") in DONE_TYPES
    changed = "stateId" in (payload.get("updatedFrom") or {})
    # Linear's pages are on linear.app whatever the API's address; the id names the issue in
    # GraphQL variables only, so it cannot send the token anywhere.
    check_host(data.get("url"), WEB_URL, api_of(config))
    linked = Linked(str(data["id"]), str(data["identifier"]), None, str(data["id"]), done)
    return Event(linked, done if changed else None, f"state {state.get('name', '?')}")
