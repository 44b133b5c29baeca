"""Personal access tokens and which credential opens what: docs/api.md §2 and §6."""

import re
from datetime import timedelta

import pytest
from sqlalchemy import select, update

from harness.client import create_pat, csrf, register
from svc.auth.pats import LAST_USE_RESOLUTION
from svc.extensions import db
from svc.models import PersonalAccessToken
from svc.models.base import utcnow
from tests.helpers import migrated_sqlite_app, writer_holding_the_lock

PAT_FORMAT = re.compile(r"^svc_pat_[0-9A-Za-z]{42}$")


def bearer(value: str) -> dict:
    return {"Authorization": f"Bearer {value}"}


def test_create_returns_the_value_once(user_client):
    response = user_client.post(
        "/api/v1/tokens", headers=csrf(user_client), json={"name": " deploy ", "expires_in_days": 7}
    )
    assert response.status_code == 201
    body = response.get_json()
    assert set(body) == {"id", "name", "token", "tokenHint", "createdAt", "expiresAt", "lastUsedAt",
                         "scopes"}  # fmt: skip
    assert body["scopes"] is None  # everything its user may do
    assert PAT_FORMAT.match(body["token"])
    assert body["tokenHint"] == body["token"][:12]
    assert body["name"] == "deploy"
    assert body["lastUsedAt"] is None
    listed = user_client.get("/api/v1/tokens").get_json()
    assert [item["id"] for item in listed] == [body["id"]]
    assert "token" not in listed[0] and listed[0]["tokenHint"] == body["tokenHint"]


def test_expiry_defaults_to_30_days(user_client):
    body = create_pat(user_client)
    from datetime import datetime

    created = datetime.fromisoformat(body["createdAt"].replace("Z", "+00:00"))
    expires = datetime.fromisoformat(body["expiresAt"].replace("Z", "+00:00"))
    assert abs((expires - created) - timedelta(days=30)) < timedelta(seconds=2)


def test_only_a_hash_is_stored(app, user_client):
    value = create_pat(user_client)["token"]
    with app.app_context():
        row = db.session.scalar(select(PersonalAccessToken))
        stored = [str(getattr(row, c.key)) for c in PersonalAccessToken.__table__.columns]
    assert all(value not in column for column in stored)
    assert all(value[12:] not in column for column in stored)


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({}, "name"),
        ({"name": ""}, "name"),
        ({"name": "x" * 101}, "name"),
        ({"name": "ci", "expires_in_days": 0}, "expires_in_days"),
        ({"name": "ci", "expires_in_days": 366}, "expires_in_days"),
        ({"name": "ci", "expires_in_days": "7"}, "expires_in_days"),
        ({"name": "ci", "expires_in_days": 1.5}, "expires_in_days"),
        ({"name": "ci", "scopes": ["all"]}, "scopes"),
    ],
)
def test_create_validation(user_client, payload, field):
    response = user_client.post("/api/v1/tokens", headers=csrf(user_client), json=payload)
    assert response.status_code == 422
    assert field in {name.split(".")[0] for name in response.get_json()["errors"]}


def test_expiry_bounds_are_inclusive(user_client):
    assert create_pat(user_client, expires_in_days=1)
    assert create_pat(user_client, expires_in_days=365)


def test_list_is_newest_first(user_client):
    names = [create_pat(user_client, name=f"t{i}")["name"] for i in range(3)]
    assert [t["name"] for t in user_client.get("/api/v1/tokens").get_json()] == names[::-1]


def test_pat_acts_as_its_creator_and_records_last_use(app, user_client):
    value = create_pat(user_client)["token"]
    response = app.test_client().get("/api/v1/auth/me", headers=bearer(value))
    assert response.status_code == 200
    assert response.get_json() == user_client.user
    assert user_client.get("/api/v1/tokens").get_json()[0]["lastUsedAt"] is not None


def test_a_tokens_use_is_recorded_to_the_minute(app, user_client):
    """A use within a minute of the recorded one writes nothing; one later records its time."""
    value = create_pat(user_client)["token"]
    client = app.test_client()

    def last_use():
        client.get("/api/v1/auth/me", headers=bearer(value))
        with app.app_context():
            return db.session.scalar(select(PersonalAccessToken.last_used_at))

    first = last_use()
    assert first is not None and last_use() == first
    with app.app_context():
        older = first - LAST_USE_RESOLUTION
        db.session.execute(update(PersonalAccessToken).values(last_used_at=older))
        db.session.commit()
    assert last_use() > first


def test_a_tokens_reads_do_not_wait_for_a_writer(tmp_path):
    """On SQLite a token's check only reads once its use is recorded for the minute: a
    script's GETs do not queue for the write lock behind a worker storing a report."""
    app = migrated_sqlite_app(tmp_path)
    client = app.test_client()
    register(client)
    value = create_pat(client)["token"]
    assert client.get("/api/v1/auth/me", headers=bearer(value)).status_code == 200  # recorded
    with writer_holding_the_lock(tmp_path / "svc.sqlite3"):
        # With the use written at every request, this waited out the busy timeout: a 503.
        assert client.get("/api/v1/projects", headers=bearer(value)).status_code == 200
    with app.app_context():
        db.engine.dispose()


def test_pat_writes_skip_csrf(app, user_client):
    value = create_pat(user_client)["token"]
    response = app.test_client().post(
        "/api/v1/projects", headers=bearer(value), json={"name": "From a script"}
    )
    assert response.status_code == 201


def test_a_pat_cannot_mint_a_token_that_outlives_it(app, user_client):
    """docs/api.md §2: creating tokens needs a browser session."""
    parent = create_pat(user_client, expires_in_days=1)
    script = app.test_client()
    response = script.post(
        "/api/v1/tokens",
        headers=bearer(parent["token"]),
        json={"name": "x", "expires_in_days": 365},
    )
    assert response.status_code == 403
    assert "session" in response.get_json()["detail"]
    assert [t["id"] for t in user_client.get("/api/v1/tokens").get_json()] == [parent["id"]]


def test_revoked_token_fails_at_once(app, user_client):
    token = create_pat(user_client)
    assert (
        app.test_client().get("/api/v1/auth/me", headers=bearer(token["token"])).status_code == 200
    )
    response = user_client.delete(f"/api/v1/tokens/{token['id']}", headers=csrf(user_client))
    assert response.status_code == 204 and response.data == b""
    assert (
        app.test_client().get("/api/v1/auth/me", headers=bearer(token["token"])).status_code == 401
    )
    assert user_client.get("/api/v1/tokens").get_json() == []


def test_expired_token_is_401(app, user_client):
    value = create_pat(user_client)["token"]
    with app.app_context():
        db.session.execute(
            update(PersonalAccessToken).values(expires_at=utcnow() - timedelta(seconds=1))
        )
        db.session.commit()
    response = app.test_client().get("/api/v1/auth/me", headers=bearer(value))
    assert response.status_code == 401
    assert "expired" in response.get_json()["detail"]


@pytest.mark.parametrize(
    "header",
    [
        "Bearer",
        "Bearer ",
        "Basic dXNlcjpwYXNz",
        "Token svc_pat_abc",
        "Bearer svc_pat_" + "A" * 42,  # right shape, wrong checksum
        "Bearer svc_pub_" + "A" * 40,  # an API key is not a PAT
        "Bearer not-a-token",
    ],
)
def test_malformed_or_unknown_bearer_is_401(client, header):
    response = client.get("/api/v1/auth/me", headers={"Authorization": header})
    assert response.status_code == 401
    assert response.get_json()["detail"]


def test_unknown_token_with_valid_checksum_is_401(client):
    from svc.auth.tokens import new_pat

    assert client.get("/api/v1/auth/me", headers=bearer(new_pat())).status_code == 401


def test_bearer_decides_over_cookies(user_client):
    """Valid cookies do not rescue a bad bearer token."""
    response = user_client.get("/api/v1/auth/me", headers=bearer("svc_pat_wrong"))
    assert response.status_code == 401


def test_api_key_is_401_on_user_endpoints(user_client):
    response = user_client.get("/api/v1/auth/me", headers={"X-API-Key": "svc_pub_" + "a" * 40})
    assert response.status_code == 401
    assert "API key" in response.get_json()["detail"]


def test_users_see_only_their_own_tokens(user_client, other_client):
    mine = create_pat(user_client)
    assert other_client.get("/api/v1/tokens").get_json() == []
    response = other_client.delete(f"/api/v1/tokens/{mine['id']}", headers=csrf(other_client))
    assert response.status_code == 404
    assert len(user_client.get("/api/v1/tokens").get_json()) == 1


def test_unknown_or_malformed_token_id_is_404(user_client):
    unknown = "00000000-0000-4000-8000-000000000000"
    assert (
        user_client.delete(f"/api/v1/tokens/{unknown}", headers=csrf(user_client)).status_code
        == 404
    )
    response = user_client.delete("/api/v1/tokens/not-a-uuid", headers=csrf(user_client))
    assert response.status_code == 404
    assert response.get_json() == {"detail": "Not found"}


def test_token_endpoints_need_a_credential(client):
    assert client.get("/api/v1/tokens").status_code == 401
    assert client.post("/api/v1/tokens", json={"name": "x"}).status_code == 401
    assert client.delete("/api/v1/tokens/00000000-0000-4000-8000-000000000000").status_code == 401


def test_a_pat_cannot_hand_on_power(app, user_client, other_client):
    """v4 (docs/api.md §2): what changes who holds power needs a browser session, so that a
    token cannot outlive the person behind it. The first user is the instance's admin."""
    from harness.client import create_project

    project = create_project(user_client)
    base = f"/api/v1/projects/{project['id']}"
    invited = user_client.post(
        f"{base}/invitations",
        json={"email": "eve@example.com", "role": "owner"},
        headers=csrf(user_client),
    ).get_json()
    grace = other_client.user["id"]
    token = create_pat(user_client)["token"]
    script = app.test_client()
    refused = {
        ("POST", f"{base}/invitations", '{"email": "mallory@example.com", "role": "owner"}'),
        ("POST", f"/api/v1/invitations/{invited['id']}/resend", None),
        ("DELETE", f"/api/v1/invitations/{invited['id']}", None),
        ("PATCH", f"{base}/members/{user_client.user['id']}", '{"role": "member"}'),
        ("POST", f"{base}/rotate-api-key", None),
        ("POST", f"{base}/rotate-webhook-secret", None),
        ("PATCH", f"/api/v1/admin/users/{grace}", '{"is_admin": true}'),
    }
    for method, path, body in refused:
        answer = script.open(
            path, method=method, data=body, content_type="application/json", headers=bearer(token)
        )
        assert answer.status_code == 403, (method, path, answer.get_json())
        assert "browser session" in answer.get_json()["detail"], path
    # Nothing changed; the same calls from the browser session still work.
    assert script.get(base, headers=bearer(token)).get_json()["apiKey"] == project["apiKey"]
    assert [i["email"] for i in user_client.get(f"{base}/invitations").get_json()] == [
        "eve@example.com"
    ]
    rotated = user_client.post(f"{base}/rotate-api-key", headers=csrf(user_client))
    assert rotated.status_code == 200


def test_a_read_only_token_reads_and_changes_nothing(app, user_client):
    """A coding agent's token (contract v6 §24): reports:read reads what its user may, changes
    nothing; reports:write changes reports and nothing else."""
    from harness.client import create_project
    from tests.helpers import file_report

    project = create_project(user_client)
    file_report(user_client, project["apiKey"])
    read = create_pat(user_client, scopes=["reports:read"])
    assert read["scopes"] == ["reports:read"]
    write = create_pat(user_client, name="agent", scopes=["reports:write", "reports:read"])
    client = app.test_client()
    for token in (read, write):
        assert client.get("/api/v1/reports/WS-1", headers=bearer(token["token"])).status_code == 200
    change = {"status": "resolved"}
    refused = client.patch("/api/v1/reports/WS-1", json=change, headers=bearer(read["token"]))
    assert refused.status_code == 403 and "reports:read" in refused.get_json()["detail"]
    allowed = client.patch("/api/v1/reports/WS-1", json=change, headers=bearer(write["token"]))
    assert allowed.status_code == 200
    # Nothing but reports: not a project's settings, not a new project.
    for token in (read, write):
        answer = client.post("/api/v1/projects", json={"name": "Other"},
                             headers=bearer(token["token"]))  # fmt: skip
        assert answer.status_code == 403
    unknown = user_client.post("/api/v1/tokens", json={"name": "x", "scopes": ["admin"]},
                               headers=csrf(user_client))  # fmt: skip
    assert unknown.status_code == 422
