"""Who gets in where, generated from the route table: an endpoint added later is covered by
every test here without anyone remembering to add it.

The world: Ada owns a project with Grace as a member, a report with a screenshot, a webhook
delivery and a token. Mallory has an account of her own and nothing else.
"""

import logging

import pytest
import requests

from harness.client import PASSWORD, add_to_project, create_pat, create_project, csrf, register
from tests.helpers import (
    VALID_BODIES,
    WRITE_METHODS,
    admin_routes,
    api_routes,
    furnish,
    png_bytes,
    route_id,
    upload,
    url_for_route,
)

ROUTES = api_routes()
ADMIN_ROUTES = admin_routes()
CREDENTIAL_KINDS = ("session", "pat", "api_key")


@pytest.fixture(scope="module")
def world(module_app):
    """Built once per backend for the tests below that take it: each is refused and checks
    that nothing changed, so one world serves them all (a test that changed it would fail, and
    so would the next)."""
    app = module_app
    ada = app.test_client()
    register(ada)
    grace = app.test_client()
    grace_user = register(grace, email="grace@example.com", name="Grace Hopper")
    mallory = app.test_client()
    register(mallory, email="mallory@example.com", name="Mallory")

    project = create_project(ada)
    add_to_project(ada, project["id"], grace, "grace@example.com")
    furnished = furnish(ada, project)
    token = create_pat(ada)
    return {
        "app": app,
        "ada": ada,
        "mallory": mallory,
        "ada_pat": token["token"],
        "mallory_pat": create_pat(mallory)["token"],
        "api_key": project["apiKey"],
        "path_values": {**furnished, "token_id": token["id"], "user_id": grace_user["id"]},
    }


def assert_world_intact(world):
    """Nothing that a refused request could have changed has changed."""
    ada = world["ada"]
    values = world["path_values"]
    project = ada.get(f"/api/v1/projects/{values['project_id']}").get_json()
    assert project["name"] == "Web Shop" and project["apiKey"] == world["api_key"]
    members = ada.get(f"/api/v1/projects/{values['project_id']}/members").get_json()
    assert len(members) == 2
    report = ada.get(f"/api/v1/reports/{values['report_ref']}").get_json()
    assert report["status"] == "new"
    assert [t["id"] for t in ada.get("/api/v1/tokens").get_json()] == [values["token_id"]]
    assert ada.get(f"/api/v1/screenshots/{values['key']}").status_code == 200


COOKIE_WRITES = [r for r in ROUTES if "session" in r[2] and r[1] in WRITE_METHODS]


@pytest.mark.parametrize("route", COOKIE_WRITES, ids=route_id)
def test_cookie_writes_without_the_csrf_header_are_refused(world, route):
    rule, method, _ = route
    url = url_for_route(rule, world["path_values"])
    body = VALID_BODIES.get((rule, method), {})
    for headers in ({}, {"X-CSRF-Token": "forged"}):
        response = world["ada"].open(url, method=method, json=body, headers=headers)
        assert response.status_code == 403, response.get_json()
        assert "CSRF" in response.get_json()["detail"]
    assert_world_intact(world)


WRONG_KINDS = [
    (route, kind)
    for route in ROUTES
    if route[2]
    for kind in CREDENTIAL_KINDS
    if kind not in route[2]
]


@pytest.mark.parametrize(
    ("route", "kind"), WRONG_KINDS, ids=[f"{route_id(r)} with {k}" for r, k in WRONG_KINDS]
)
def test_each_endpoint_refuses_the_credentials_it_does_not_accept(world, route, kind):
    rule, method, _ = route
    url = url_for_route(rule, world["path_values"])
    body = VALID_BODIES.get((rule, method), {})
    if kind == "session":
        client, headers = world["ada"], csrf(world["ada"])
    else:
        client = world["app"].test_client()
        headers = (
            {"Authorization": f"Bearer {world['ada_pat']}"}
            if kind == "pat"
            else {"X-API-Key": world["api_key"]}
        )
    response = client.open(url, method=method, json=body, headers=headers)
    # A personal access token where only a session will do is known, but not enough: 403.
    expected = 403 if kind == "pat" and "session" in route[2] else 401
    assert response.status_code == expected, response.get_json()
    assert response.get_json()["detail"]
    assert_world_intact(world)


# The administrators' routes name any account by design: tests/test_admin.py holds them to
# answering nobody else (403).
WITH_IDS = [r for r in ROUTES if "session" in r[2] and "<" in r[0] and r not in ADMIN_ROUTES]


@pytest.mark.parametrize("route", WITH_IDS, ids=route_id)
def test_other_users_ids_are_404(world, route):
    rule, method, credentials = route
    url = url_for_route(rule, world["path_values"])
    body = VALID_BODIES.get((rule, method), {}) if method in WRITE_METHODS else None
    if "pat" in credentials:
        bearer = {"Authorization": f"Bearer {world['mallory_pat']}"}
        response = world["app"].test_client().open(url, method=method, json=body, headers=bearer)
    else:  # a browser session's endpoint: Mallory's own session
        mallory = world["mallory"]
        response = mallory.open(url, method=method, json=body, headers=csrf(mallory))
    assert response.status_code == 404, response.get_json()
    assert_world_intact(world)


READABLE = [r for r in ROUTES if r[1] == "GET"]


def test_security_headers_on_every_route(world):
    client = world["app"].test_client()
    pat = {"Authorization": f"Bearer {world['ada_pat']}"}
    responses = []
    for rule, _, _ in READABLE:
        response = client.get(url_for_route(rule, world["path_values"]), headers=pat)
        # A streamed answer (the exports) left unread would end its request context whenever
        # it is closed: at once, before the next one starts, not inside another's.
        response.close()
        responses.append(response)
    responses += [
        client.get("/"),
        client.get("/reports/WS-1"),
        client.get("/assets/js/app.js"),
        client.get("/no/such/page"),
        client.delete("/healthz"),
        client.post("/api/v1/reports", json={}),
    ]
    assert len({r.status_code for r in responses}) >= 4  # answers of all kinds, not only 200s
    for response in responses:
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.headers["Referrer-Policy"] == "no-referrer"
        # The replay player alone is framed, by the report's page of the same origin.
        player = response.request.path == "/replay/player"
        assert response.headers["X-Frame-Options"] == ("SAMEORIGIN" if player else "DENY")
        if player:
            assert "frame-ancestors 'self'" in response.headers["Content-Security-Policy"]
    for page in responses[-6:-3]:
        policy = page.headers["Content-Security-Policy"]
        assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy


def test_a_login_never_adopts_a_planted_session(app):
    """Session fixation: Mallory plants her own cookies in Ada's browser; Ada's login replaces
    them all, and the planted ones still name Mallory, never Ada."""
    mallory = app.test_client()
    register(mallory, email="mallory@example.com", name="Mallory")
    planted = {
        name: mallory.get_cookie(name).value for name in ("svc_access_token", "svc_csrf_token")
    }
    ada = app.test_client()
    register(ada)
    ada.post("/api/v1/auth/logout")
    for name, value in planted.items():
        ada.set_cookie(name, value)
    login = ada.post("/api/v1/auth/login", json={"email": "ada@example.com", "password": PASSWORD})
    assert login.status_code == 200
    for name, value in planted.items():
        assert ada.get_cookie(name).value != value
    assert ada.get("/api/v1/auth/me").get_json()["email"] == "ada@example.com"
    mallory_view = app.test_client()
    mallory_view.set_cookie("svc_access_token", planted["svc_access_token"])
    assert mallory_view.get("/api/v1/auth/me").get_json()["email"] == "mallory@example.com"


def test_secrets_never_reach_the_logs(live_server, caplog):
    caplog.set_level(logging.DEBUG)
    browser = requests.Session()
    browser.post(
        f"{live_server}/api/v1/auth/register",
        json={"name": "Ada", "email": "ada@example.com", "password": PASSWORD},
    )
    headers = {"X-CSRF-Token": browser.cookies["svc_csrf_token"]}
    token = browser.post(f"{live_server}/api/v1/tokens", json={"name": "t"}, headers=headers)
    token = token.json()["token"]
    project = browser.post(f"{live_server}/api/v1/projects", json={"name": "W"}, headers=headers)
    api_key = project.json()["apiKey"]
    refresh = browser.cookies["svc_refresh_token"]

    requests.get(f"{live_server}/api/v1/auth/me", headers={"Authorization": f"Bearer {token}"})
    requests.get(f"{live_server}/api/v1/auth/me", headers={"Authorization": f"Bearer {token}x"})
    requests.post(
        f"{live_server}/api/v1/reports", json={"title": ""}, headers={"X-API-Key": api_key}
    )
    requests.post(f"{live_server}/api/v1/reports", json={}, headers={"X-API-Key": api_key + "x"})
    browser.post(f"{live_server}/api/v1/auth/refresh")
    requests.post(
        f"{live_server}/api/v1/auth/login",
        json={"email": "ada@example.com", "password": "wrong one"},
    )

    logged = caplog.text
    assert "POST /api/v1/reports" in logged  # the requests were logged...
    for secret in (token, api_key, refresh, PASSWORD, "wrong one"):
        assert secret not in logged  # ...their credentials were not


def test_an_upload_that_is_also_html_is_never_served_as_html(user_client):
    project = create_project(user_client)
    polyglot = png_bytes()[:8] + b"<html><script>alert(document.cookie)</script></html>"
    key = upload(user_client, project["apiKey"], polyglot).get_json()["key"]
    served = user_client.get(f"/api/v1/screenshots/{key}")
    assert served.status_code == 200
    assert served.mimetype == "image/png" and key.endswith(".png")
    assert served.headers["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in served.headers["Content-Security-Policy"]
    assert "default-src 'none'" in served.headers["Content-Security-Policy"]
