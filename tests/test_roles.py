"""Roles per project (docs/api.md §7): owner, member, viewer.

The rule for every endpoint is generated from the route table: an endpoint that declares the
least role it needs (svc.api.decorators.documents_role) refuses every role below it with 403 and
changes nothing; every other endpoint of a project is open to every role. A new endpoint is
covered without anyone remembering to add it.
"""

import pytest

from harness.client import create_pat, create_project, csrf, new_member, register
from svc import rate_limits
from svc.models import ROLES, VIEWER, role_at_least
from tests.helpers import (
    VALID_BODIES,
    WRITE_METHODS,
    api_routes,
    furnish,
    needed_roles,
    url_for_route,
)

NEEDED = needed_roles()
# The routes of one project's things: the project, its members, invitations and deliveries, its
# reports, their comments and screenshots. The project list and the report list are covered by
# the tests below; editing and deleting one comment (its author's right, beside the role) by
# tests/test_comments.py.
PROJECT_SCOPED = [
    (rule, method)
    for rule, method, credentials in api_routes()
    if "session" in credentials
    and any(
        name in rule
        for name in (
            "<uuid:project_id>",
            "<report_ref>",
            "/screenshots/",
            "<uuid:invitation_id>",
            "<uuid:integration_id>",
        )
    )
]


REACHES_A_TRACKER = {
    ("/api/v1/integrations/<uuid:integration_id>/test", "POST"),
    ("/api/v1/reports/<report_ref>/issues", "POST"),
}
# Let in, then refused for what the one furnished report is: not a duplicate of itself (422),
# not a duplicate to undo (409), of a project with no staging origin (409).
# tests/test_duplicates.py makes both with two reports.
LET_IN_THEN_REFUSED = {
    ("/api/v1/reports/<report_ref>/duplicate-of", "POST"): 422,
    ("/api/v1/reports/<report_ref>/duplicate-of", "DELETE"): 409,
    # The project names no staging origin: nothing is run (tests/test_reproductions.py runs).
    ("/api/v1/reports/<report_ref>/reproductions", "POST"): 409,
}


def set_role(client, project_id, user_id, role):
    return client.patch(
        f"/api/v1/projects/{project_id}/members/{user_id}",
        json={"role": role},
        headers=csrf(client),
    )


def build_team(app) -> dict:
    """Ada owns Web Shop; Grace is a member, Vera a viewer, Mia a member no test signs in as
    (the one whose membership the member endpoints change). Mallory has an account and no
    project (the one to add). One report with a screenshot, one webhook delivery."""
    ada = app.test_client()
    ada.user = register(ada)
    register(app.test_client(), email="mallory@example.com", name="Mallory")
    project = create_project(ada)
    people = {"owner": ada}
    for role, email, name in (
        ("member", "grace@example.com", "Grace Hopper"),
        ("viewer", "vera@example.com", "Vera Rubin"),
        ("other", "mia@example.com", "Mia Hamm"),
    ):
        project_role = "viewer" if role == "viewer" else "member"
        people[role] = new_member(app, ada, project["id"], email, name, project_role)
    furnished = furnish(ada, project)
    return {
        "people": people,
        "project": project,
        "report": ada.get(f"/api/v1/reports/{furnished['report_ref']}").get_json(),
        "path_values": {**furnished, "user_id": people["other"].user["id"]},
    }


@pytest.fixture
def people_in_roles(app):
    with app.app_context():
        # The shared world's refused resends counted against its invitee's daily limit.
        rate_limits.forget_all()
    return build_team(app)


@pytest.fixture(scope="module")
def shared_team(module_app):
    """One world for the cases that change nothing: reads, and refusals (each checks that
    nothing changed). Built once per backend, before any test of this file empties the tables."""
    return build_team(module_app)


def state(people_in_roles) -> dict:
    """What a refused request could have changed, as the owner sees it."""
    ada, values = people_in_roles["people"]["owner"], people_in_roles["path_values"]
    project = ada.get(f"/api/v1/projects/{values['project_id']}").get_json()
    members = ada.get(f"/api/v1/projects/{values['project_id']}/members").get_json()
    report = ada.get(f"/api/v1/reports/{values['report_ref']}").get_json()
    deliveries = ada.get(f"/api/v1/projects/{values['project_id']}/webhook-deliveries")
    invitations = ada.get(f"/api/v1/projects/{values['project_id']}/invitations").get_json()
    comments = ada.get(f"/api/v1/reports/{values['report_ref']}/comments").get_json()
    integrations = ada.get(f"/api/v1/projects/{values['project_id']}/integrations").get_json()
    return {
        "integrations": integrations,
        "comments": [(c["id"], c["body"]) for c in comments],
        "invitations": [(i["id"], i["expiresAt"]) for i in invitations],
        "project": project,
        "members": [(m["userId"], m["role"]) for m in members],
        "report": report,
        "deliveries": [(d["id"], d["status"]) for d in deliveries.get_json()["items"]],
    }


CASES = [(rule, method, role) for rule, method in PROJECT_SCOPED for role in ROLES]


def _changes_nothing(rule: str, method: str, role: str) -> bool:
    return method == "GET" or not role_at_least(role, NEEDED.get((rule, method), VIEWER))


READS_AND_REFUSALS = [case for case in CASES if _changes_nothing(*case)]
ALLOWED_WRITES = [case for case in CASES if not _changes_nothing(*case)]


def _ids(cases):
    return [f"{method} {rule} as {role}" for rule, method, role in cases]


# First in the file: the shared world lives until a test that takes `app` empties the tables.
@pytest.mark.parametrize(
    ("rule", "method", "role"), READS_AND_REFUSALS, ids=_ids(READS_AND_REFUSALS)
)
def test_each_endpoint_reads_or_refuses_as_the_roles_it_declares(shared_team, rule, method, role):
    check_access(shared_team, rule, method, role)


@pytest.mark.parametrize(("rule", "method", "role"), ALLOWED_WRITES, ids=_ids(ALLOWED_WRITES))
def test_each_endpoint_lets_in_exactly_the_roles_it_declares(people_in_roles, rule, method, role):
    check_access(people_in_roles, rule, method, role)


def check_access(people_in_roles, rule: str, method: str, role: str) -> None:
    needed = NEEDED.get((rule, method), VIEWER)
    client = people_in_roles["people"][role]
    url = url_for_route(rule, people_in_roles["path_values"])
    body = VALID_BODIES.get((rule, method), {}) if method in WRITE_METHODS else None
    # What a refusal must leave as it was (seven reads: only where a refusal is expected).
    before = None if role_at_least(role, needed) else state(people_in_roles)
    response = client.open(url, method=method, json=body, headers=csrf(client))
    if role_at_least(role, needed) and (rule, method) in REACHES_A_TRACKER:
        # Let in, then refused by the tracker no test here can reach (or by the body's id,
        # that of no integration); tests/test_integrations.py makes these with a tracker.
        assert response.status_code in (404, 422, 502), response.get_json()
    elif role_at_least(role, needed) and (rule, method) in LET_IN_THEN_REFUSED:
        assert response.status_code == LET_IN_THEN_REFUSED[rule, method], response.get_json()
    elif role_at_least(role, needed):
        assert response.status_code < 400, response.get_json()
    else:
        assert response.status_code == 403, response.get_json()
        assert response.get_json()["detail"]
        assert state(people_in_roles) == before


def test_the_routes_that_need_a_role_are_the_expected_ones():
    """The declaration the test above holds the service to, read once by a person."""
    assert {key: role for key, role in NEEDED.items()} == {
        ("/api/v1/projects/<uuid:project_id>", "PATCH"): "owner",
        ("/api/v1/projects/<uuid:project_id>", "DELETE"): "owner",
        ("/api/v1/projects/<uuid:project_id>/rotate-api-key", "POST"): "owner",
        ("/api/v1/projects/<uuid:project_id>/rotate-webhook-secret", "POST"): "owner",
        ("/api/v1/projects/<uuid:project_id>/invitations", "GET"): "owner",
        ("/api/v1/projects/<uuid:project_id>/invitations", "POST"): "owner",
        ("/api/v1/invitations/<uuid:invitation_id>", "DELETE"): "owner",
        ("/api/v1/invitations/<uuid:invitation_id>/resend", "POST"): "owner",
        ("/api/v1/projects/<uuid:project_id>/members/<uuid:user_id>", "PATCH"): "owner",
        ("/api/v1/reports/<report_ref>/status-link", "POST"): "member",
        ("/api/v1/projects/<uuid:project_id>/members/<uuid:user_id>", "DELETE"): "owner",
        ("/api/v1/projects/<uuid:project_id>/audit", "GET"): "owner",
        ("/api/v1/projects/<uuid:project_id>/audit/export", "GET"): "owner",
        ("/api/v1/projects/<uuid:project_id>/reporter-data", "GET"): "owner",
        ("/api/v1/projects/<uuid:project_id>/reporter-data/erase", "POST"): "owner",
        ("/api/v1/projects/<uuid:project_id>/integrations", "POST"): "owner",
        ("/api/v1/integrations/<uuid:integration_id>", "PATCH"): "owner",
        ("/api/v1/integrations/<uuid:integration_id>", "DELETE"): "owner",
        ("/api/v1/integrations/<uuid:integration_id>/test", "POST"): "member",
        ("/api/v1/integrations/<uuid:integration_id>/calls/<uuid:call_id>/retry", "POST"): "member",
        ("/api/v1/reports/<report_ref>/issues", "POST"): "member",
        ("/api/v1/reports", "PATCH"): "member",
        ("/api/v1/reports", "DELETE"): "member",
        ("/api/v1/reports/<report_ref>", "PATCH"): "member",
        ("/api/v1/reports/<report_ref>", "DELETE"): "member",
        ("/api/v1/reports/<report_ref>/comments", "POST"): "member",
        ("/api/v1/reports/<report_ref>/duplicate-of", "POST"): "member",
        ("/api/v1/reports/<report_ref>/duplicate-of", "DELETE"): "member",
        ("/api/v1/reports/<report_ref>/reproductions", "POST"): "member",
        ("/api/v1/comments/<uuid:comment_id>", "PATCH"): "member",
        ("/api/v1/comments/<uuid:comment_id>", "DELETE"): "member",
        (
            "/api/v1/projects/<uuid:project_id>/webhook-deliveries/<uuid:delivery_id>/redeliver",
            "POST",
        ): "member",
    }


def test_a_viewer_reads_the_project_and_its_reports(people_in_roles):
    vera, project = people_in_roles["people"]["viewer"], people_in_roles["project"]
    assert [p["role"] for p in vera.get("/api/v1/projects").get_json()] == ["viewer"]
    seen = vera.get(f"/api/v1/projects/{project['id']}").get_json()
    assert seen["role"] == "viewer" and "webhookSecret" not in seen
    assert seen["settings"]["webhookUrl"] is None
    listing = vera.get("/api/v1/reports").get_json()
    assert [r["trackingId"] for r in listing["items"]] == [people_in_roles["report"]["trackingId"]]


def test_a_viewer_using_a_token_is_still_a_viewer(people_in_roles):
    vera = people_in_roles["people"]["viewer"]
    token = create_pat(vera)["token"]
    response = vera.application.test_client().patch(
        f"/api/v1/reports/{people_in_roles['report']['trackingId']}",
        json={"status": "closed"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 403


def test_an_owner_changes_roles_and_makes_a_co_owner(people_in_roles):
    ada, grace, project = (
        people_in_roles["people"]["owner"],
        people_in_roles["people"]["member"],
        people_in_roles["project"],
    )
    response = set_role(ada, project["id"], grace.user["id"], "owner")
    assert response.status_code == 200 and response.get_json()["role"] == "owner"
    assert grace.get(f"/api/v1/projects/{project['id']}").get_json()["webhookSecret"]
    # The co-owner may now demote the first owner, who is no longer the last.
    assert set_role(grace, project["id"], ada.user["id"], "viewer").status_code == 200
    assert ada.get(f"/api/v1/projects/{project['id']}").get_json()["role"] == "viewer"
    members = grace.get(f"/api/v1/projects/{project['id']}/members").get_json()
    # Owners first, then members, then viewers, each in the order they joined.
    assert [(m["email"], m["role"]) for m in members] == [
        ("grace@example.com", "owner"),
        ("mia@example.com", "member"),
        ("ada@example.com", "viewer"),
        ("vera@example.com", "viewer"),
    ]


def test_the_last_owner_can_be_neither_demoted_nor_leave(people_in_roles):
    ada, project = people_in_roles["people"]["owner"], people_in_roles["project"]
    response = set_role(ada, project["id"], ada.user["id"], "member")
    assert response.status_code == 409 and "owner" in response.get_json()["detail"]
    leave = ada.delete(
        f"/api/v1/projects/{project['id']}/members/{ada.user['id']}", headers=csrf(ada)
    )
    assert leave.status_code == 409
    assert ada.get(f"/api/v1/projects/{project['id']}").get_json()["role"] == "owner"


def test_one_of_two_owners_may_leave(people_in_roles):
    ada, grace, project = (
        people_in_roles["people"]["owner"],
        people_in_roles["people"]["member"],
        people_in_roles["project"],
    )
    assert set_role(ada, project["id"], grace.user["id"], "owner").status_code == 200
    leave = ada.delete(
        f"/api/v1/projects/{project['id']}/members/{ada.user['id']}", headers=csrf(ada)
    )
    assert leave.status_code == 204
    assert ada.get(f"/api/v1/projects/{project['id']}").status_code == 404


@pytest.mark.parametrize("role", ["member", "viewer"])
def test_anyone_may_leave_a_project(people_in_roles, role):
    client, project = people_in_roles["people"][role], people_in_roles["project"]
    response = client.delete(
        f"/api/v1/projects/{project['id']}/members/{client.user['id']}", headers=csrf(client)
    )
    assert response.status_code == 204
    assert client.get("/api/v1/projects").get_json() == []
    assert (
        client.get(f"/api/v1/reports/{people_in_roles['report']['trackingId']}").status_code == 404
    )


def test_a_report_is_assigned_to_members_and_owners_only(people_in_roles):
    ada = people_in_roles["people"]["owner"]
    ref = people_in_roles["report"]["trackingId"]

    def assign(person):
        return ada.patch(
            f"/api/v1/reports/{ref}",
            json={"assignee_id": people_in_roles["people"][person].user["id"]},
            headers=csrf(ada),
        )

    assert assign("member").status_code == 200
    assert assign("owner").status_code == 200
    refused = assign("viewer")
    assert refused.status_code == 422 and "assignee_id" in refused.get_json()["errors"]


def test_an_unknown_role_is_422(people_in_roles):
    ada, project = people_in_roles["people"]["owner"], people_in_roles["project"]
    response = set_role(ada, project["id"], people_in_roles["path_values"]["user_id"], "admin")
    assert response.status_code == 422 and "role" in response.get_json()["errors"]
