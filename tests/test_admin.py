"""The instance's administration (docs/api.md §5): the first user is admin; admins list
accounts, deactivate and reactivate them, grant administration and send reset links; operators
have `set-password` and `make-admin`."""

import re

import pytest

from harness.client import PASSWORD, create_pat, create_project, csrf, register
from tests.helpers import (
    REPORT,
    VALID_BODIES,
    WRITE_METHODS,
    admin_routes,
    fan_out,
    route_id,
    send_due,
    text_of,
    url_for_route,
)

ADMIN_ROUTES = admin_routes()


@pytest.fixture
def people(app):
    """Ada registered first (the admin); Grace after her, with a second browser and a token."""
    ada = app.test_client()
    ada.user = register(ada)
    grace = app.test_client()
    grace.user = register(grace, email="grace@example.com", name="Grace Hopper")
    grace.pat = create_pat(grace)["token"]
    return ada, grace


def bearer(token):
    return {"Authorization": f"Bearer {token}"}


def set_user(admin, user_id, **changes):
    return admin.patch(f"/api/v1/admin/users/{user_id}", json=changes, headers=csrf(admin))


def login(app, email, password=PASSWORD):
    client = app.test_client()
    response = client.post("/api/v1/auth/login", json={"email": email, "password": password})
    return client, response


def test_the_first_user_is_the_admin(app, people):
    ada, grace = people
    assert ada.user["isAdmin"] is True and grace.user["isAdmin"] is False
    assert ada.get("/api/v1/auth/me").get_json()["isAdmin"] is True
    assert grace.get("/api/v1/auth/me").get_json()["isAdmin"] is False


def test_admins_see_every_account_with_its_last_sign_in(app, people):
    ada, _ = people
    before = ada.get("/api/v1/admin/users").get_json()
    assert [u["email"] for u in before] == ["ada@example.com", "grace@example.com"]
    assert set(before[0]) == {
        "id", "name", "email", "isAdmin", "active", "createdAt", "lastSignInAt", "secondFactors",
        "singleSignOn",
    }  # fmt: skip
    assert [(u["isAdmin"], u["active"]) for u in before] == [(True, True), (False, True)]
    login(app, "grace@example.com")
    after = ada.get("/api/v1/admin/users").get_json()
    assert after[1]["lastSignInAt"] > before[1]["lastSignInAt"]


@pytest.mark.parametrize("route", ADMIN_ROUTES, ids=route_id)
def test_every_admin_endpoint_refuses_everyone_else(app, people, route):
    ada, grace = people
    rule, method, _ = route
    url = url_for_route(rule, {"user_id": ada.user["id"]})
    body = VALID_BODIES.get((rule, method), {}) if method in WRITE_METHODS else None
    for headers in (csrf(grace), bearer(grace.pat)):
        response = grace.open(url, method=method, json=body, headers=headers)
        assert response.status_code == 403, response.get_json()
        assert "administrator" in response.get_json()["detail"]
    assert ada.get("/api/v1/auth/me").get_json()["isAdmin"] is True  # nothing changed


def test_deactivation_stops_a_live_session_and_a_token_at_once(app, people):
    ada, grace = people
    assert grace.get("/api/v1/auth/me").status_code == 200
    assert app.test_client().get("/api/v1/auth/me", headers=bearer(grace.pat)).status_code == 200

    response = set_user(ada, grace.user["id"], active=False)
    assert response.status_code == 200 and response.get_json()["active"] is False
    assert grace.get("/api/v1/auth/me").status_code == 401  # her sessions ended
    token = app.test_client().get("/api/v1/projects", headers=bearer(grace.pat))
    assert token.status_code == 401 and "deactivated" in token.get_json()["detail"]
    _, signing_in = login(app, "grace@example.com")
    assert signing_in.status_code == 401 and "deactivated" in signing_in.get_json()["detail"]
    _, wrong_password = login(app, "grace@example.com", "not her password")
    assert "deactivated" not in wrong_password.get_json()["detail"]  # says nothing more

    # Reactivated: she signs in again; her token works again, her old sessions stay ended.
    assert set_user(ada, grace.user["id"], active=True).get_json()["active"] is True
    assert login(app, "grace@example.com")[1].status_code == 200
    assert app.test_client().get("/api/v1/auth/me", headers=bearer(grace.pat)).status_code == 200
    assert grace.get("/api/v1/auth/me").status_code == 401


def test_the_last_active_admin_stays_one(app, people):
    ada, grace = people
    for change in ({"active": False}, {"is_admin": False}):
        response = set_user(ada, ada.user["id"], **change)
        assert response.status_code == 409 and "administrator" in response.get_json()["detail"]
    assert ada.get("/api/v1/auth/me").status_code == 200

    granted = set_user(ada, grace.user["id"], is_admin=True)
    assert granted.status_code == 200 and granted.get_json()["isAdmin"] is True
    assert grace.get("/api/v1/admin/users").status_code == 200
    assert set_user(ada, ada.user["id"], is_admin=False).get_json()["isAdmin"] is False
    assert ada.get("/api/v1/admin/users").status_code == 403
    # Grace is the last one now.
    assert set_user(grace, grace.user["id"], active=False).status_code == 409


def test_unknown_user_and_bad_fields(app, people):
    ada, _ = people
    missing = set_user(ada, "00000000-0000-4000-8000-000000000000", active=False)
    assert missing.status_code == 404
    wrong = set_user(ada, ada.user["id"], active="sometimes")
    assert wrong.status_code == 422 and "active" in wrong.get_json()["errors"]
    unknown = set_user(ada, ada.user["id"], name="Root")
    assert unknown.status_code == 422


RESET_LINK = re.compile(r"https://bugs\.example\.com/reset-password/\w+")


def test_an_admin_sends_a_reset_link_and_a_deactivated_user_gets_no_mail(mail_app, smtp_server):
    ada = mail_app.test_client()
    register(ada)
    grace = mail_app.test_client()
    grace_id = register(grace, email="grace@example.com", name="Grace Hopper")["id"]
    path = f"/api/v1/admin/users/{grace_id}/reset-link"
    assert ada.post(path, headers=csrf(ada)).status_code == 202
    send_due(mail_app)
    [message] = smtp_server.wait_for(1)
    assert message["To"] == "grace@example.com" and RESET_LINK.search(text_of(message))

    set_user(ada, grace_id, active=False)
    assert ada.post(path, headers=csrf(ada)).status_code == 409
    forgot = mail_app.test_client().post(
        "/api/v1/auth/forgot-password", json={"email": "grace@example.com"}
    )
    assert forgot.status_code == 202
    assert send_due(mail_app) == []
    assert len(smtp_server.messages) == 1


def test_the_status_says_whether_mail_is_on(app, mail_app, smtp_server):
    register(app.test_client())  # both apps share the test database
    for application, enabled in ((app, False), (mail_app, True)):
        admin, _ = login(application, "ada@example.com")
        status = admin.get("/api/v1/admin/status").get_json()
        assert status["mailEnabled"] is enabled
        assert status["mailsPending"] == 0 and status["registration"] == "open"
        assert status["lastMailError"] is None
    # A mail the server would not take: the admin page says why.
    smtp_server.stop()
    forgot = mail_app.test_client().post(
        "/api/v1/auth/forgot-password", json={"email": "ada@example.com"}
    )
    assert forgot.status_code == 202 and send_due(mail_app)[0]
    status = admin.get("/api/v1/admin/status").get_json()
    assert "Connection refused" in status["lastMailError"] and status["mailsPending"] == 1


def test_operators_set_a_password_and_make_an_admin(app, people):
    ada, grace = people
    cli = app.test_cli_runner()
    result = cli.invoke(args=["set-password", "GRACE@example.com", "--password", "a new password"])
    assert result.exit_code == 0, result.output
    assert grace.get("/api/v1/auth/me").status_code == 401
    assert app.test_client().get("/api/v1/auth/me", headers=bearer(grace.pat)).status_code == 401
    assert login(app, "grace@example.com", "a new password")[1].status_code == 200

    short = cli.invoke(args=["set-password", "grace@example.com", "--password", "short"])
    assert short.exit_code != 0 and "8" in short.output
    unknown = cli.invoke(args=["make-admin", "nobody@example.com"])
    assert unknown.exit_code != 0 and "nobody@example.com" in unknown.output

    set_user(ada, grace.user["id"], active=False)
    result = cli.invoke(args=["make-admin", "grace@example.com"])
    assert result.exit_code == 0, result.output
    client, response = login(app, "grace@example.com", "a new password")
    assert response.get_json()["isAdmin"] is True
    assert client.get("/api/v1/admin/users").status_code == 200


def test_health_counts_everything_that_waits_for_the_scheduler(app, people):
    """/admin/health reported webhooks and mails only."""
    ada, _ = people
    project = create_project(ada)
    filed = ada.post("/api/v1/reports", json=REPORT, headers={"X-API-Key": project["apiKey"]})
    assert filed.status_code == 201
    outbox = ada.get("/api/v1/admin/health").get_json()["outbox"]
    assert (outbox["eventsPending"], outbox["trackerCallsPending"]) == (1, 0)
    assert outbox["oldestPendingAt"] is not None
    fan_out(app)
    outbox = ada.get("/api/v1/admin/health").get_json()["outbox"]
    assert outbox["eventsPending"] == 0
