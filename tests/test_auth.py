"""Accounts and browser sessions: docs/api.md §3."""

from datetime import timedelta
from http.cookies import SimpleCookie

import pytest
from sqlalchemy import select, update

from harness.client import PASSWORD, create_pat, csrf, register
from svc.auth import tokens
from svc.extensions import db
from svc.models import AuthSession, User
from svc.models.base import utcnow

REFRESH_PATH = "/api/v1/auth"


def set_cookies(response) -> dict[str, dict]:
    """Set-Cookie headers by cookie name, with their attributes (lower-cased keys)."""
    cookies = {}
    for header in response.headers.getlist("Set-Cookie"):
        parsed = SimpleCookie()
        parsed.load(header)
        for name, morsel in parsed.items():
            attributes = {key: morsel[key] for key in morsel if morsel[key]}
            attributes["value"] = morsel.value
            attributes["raw"] = header
            cookies[name] = attributes
    return cookies


def refresh_cookie(client) -> str:
    return client.get_cookie("svc_refresh_token", path=REFRESH_PATH).value


def login(client, email="ada@example.com", password=PASSWORD):
    return client.post("/api/v1/auth/login", json={"email": email, "password": password})


# --- register -----------------------------------------------------------------------------------


def test_register_returns_user_and_sets_three_cookies(client):
    response = client.post(
        "/api/v1/auth/register",
        json={"name": "  Ada Lovelace ", "email": "  Ada@Example.COM ", "password": PASSWORD},
    )
    assert response.status_code == 201
    body = response.get_json()
    assert set(body) == {"id", "name", "email", "isAdmin", "createdAt"}
    assert body["name"] == "Ada Lovelace"
    assert body["email"] == "ada@example.com"
    assert body["createdAt"].endswith("Z") and len(body["createdAt"]) == 24
    assert set(set_cookies(response)) == {"svc_access_token", "svc_refresh_token", "svc_csrf_token"}


def test_cookie_flags(client):
    cookies = set_cookies(
        client.post(
            "/api/v1/auth/register",
            json={"name": "Ada", "email": "ada@example.com", "password": PASSWORD},
        )
    )
    access, refresh, csrf_cookie = (
        cookies["svc_access_token"],
        cookies["svc_refresh_token"],
        cookies["svc_csrf_token"],
    )
    assert access["httponly"] and access["samesite"] == "Lax" and access["path"] == "/"
    assert int(access["max-age"]) == 15 * 60 - 1 or int(access["max-age"]) == 15 * 60
    assert refresh["httponly"] and refresh["samesite"] == "Strict"
    assert refresh["path"] == REFRESH_PATH
    assert 30 * 86400 - 2 <= int(refresh["max-age"]) <= 30 * 86400
    assert "httponly" not in csrf_cookie and csrf_cookie["samesite"] == "Lax"
    assert csrf_cookie["path"] == "/"
    # Plain HTTP and SVC_COOKIE_SECURE=auto: not Secure.
    assert not any("secure" in cookie for cookie in cookies.values())


def test_cookies_are_secure_over_https(client):
    response = client.post(
        "/api/v1/auth/register",
        base_url="https://localhost",
        json={"name": "Ada", "email": "ada@example.com", "password": PASSWORD},
    )
    assert all(cookie.get("secure") for cookie in set_cookies(response).values())


def test_cookies_secure_when_configured(make_app):
    client = make_app(SVC_COOKIE_SECURE="true").test_client()
    response = client.post(
        "/api/v1/auth/register",
        json={"name": "Ada", "email": "ada@example.com", "password": PASSWORD},
    )
    assert all(cookie.get("secure") for cookie in set_cookies(response).values())


def test_forwarded_https_counts_only_behind_a_trusted_proxy(make_app):
    headers = {"X-Forwarded-Proto": "https"}
    body = {"name": "Ada", "email": "ada@example.com", "password": PASSWORD}
    untrusted = make_app().test_client().post("/api/v1/auth/register", json=body, headers=headers)
    assert not any(c.get("secure") for c in set_cookies(untrusted).values())
    body["email"] = "ada2@example.com"
    trusted = (
        make_app(SVC_TRUSTED_PROXIES="1")
        .test_client()
        .post("/api/v1/auth/register", json=body, headers=headers)
    )
    assert all(c.get("secure") for c in set_cookies(trusted).values())


def test_register_email_taken_is_409_case_insensitively(client):
    register(client)
    response = client.post(
        "/api/v1/auth/register",
        json={"name": "Other", "email": "ADA@example.com", "password": PASSWORD},
    )
    assert response.status_code == 409
    assert "already registered" in response.get_json()["detail"]


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"name": "", "email": "a@example.com", "password": PASSWORD}, "name"),
        ({"name": "   ", "email": "a@example.com", "password": PASSWORD}, "name"),
        ({"name": "x" * 101, "email": "a@example.com", "password": PASSWORD}, "name"),
        ({"name": "Ada", "email": "not-an-email", "password": PASSWORD}, "email"),
        ({"name": "Ada", "email": "a@example.com", "password": "short12"}, "password"),
        ({"name": "Ada", "email": "a@example.com", "password": "x" * 129}, "password"),
        ({"name": "Ada", "email": "a@example.com"}, "password"),
        ({"name": 5, "email": "a@example.com", "password": PASSWORD}, "name"),
        ({"name": "Ada", "email": "a@example.com", "password": PASSWORD, "admin": True}, "admin"),
        ({"name": "Ada\u0000", "email": "a@example.com", "password": PASSWORD}, "name"),
    ],
)
def test_register_validation(client, payload, field):
    response = client.post("/api/v1/auth/register", json=payload)
    assert response.status_code == 422
    body = response.get_json()
    assert body["detail"] and field in body["errors"]
    assert isinstance(body["errors"][field], list) and body["errors"][field]


def test_password_limits_are_inclusive(client):
    for index, password in enumerate(["x" * 8, "y" * 128]):
        response = client.post(
            "/api/v1/auth/register",
            json={"name": "Ada", "email": f"a{index}@example.com", "password": password},
        )
        assert response.status_code == 201


@pytest.mark.owasp_hashing
def test_password_is_stored_as_argon2id_hash(app, client):
    register(client)
    with app.app_context():
        stored = db.session.scalar(select(User.password_hash))
    assert stored.startswith("$argon2id$") and PASSWORD not in stored
    assert "m=19456,t=2,p=1" in stored


def test_closed_registration_admits_only_the_first_user(make_app):
    client = make_app(SVC_REGISTRATION="closed").test_client()
    register(client)
    response = client.post(
        "/api/v1/auth/register",
        json={"name": "Eve", "email": "eve@example.com", "password": PASSWORD},
    )
    assert response.status_code == 403
    assert "closed" in response.get_json()["detail"]


def test_cli_creates_users_when_registration_is_closed(make_app):
    app = make_app(SVC_REGISTRATION="closed")
    register(app.test_client())
    result = app.test_cli_runner().invoke(
        args=["create-user", "--name", "Bob", "--email", "Bob@Example.com", "--password", PASSWORD]
    )
    assert result.exit_code == 0, result.output
    assert login(app.test_client(), "bob@example.com").status_code == 200
    again = app.test_cli_runner().invoke(
        args=["create-user", "--name", "Bob", "--email", "bob@example.com", "--password", PASSWORD]
    )
    assert again.exit_code != 0 and "already registered" in again.output


# --- login --------------------------------------------------------------------------------------


def test_login_sets_cookies_and_returns_user(client):
    user = register(client)
    fresh = client.application.test_client()
    response = login(fresh)
    assert response.status_code == 200
    assert response.get_json() == user
    assert set(set_cookies(response)) == {"svc_access_token", "svc_refresh_token", "svc_csrf_token"}
    assert fresh.get("/api/v1/auth/me").get_json() == user


def test_login_email_is_case_insensitive(client):
    register(client)
    assert login(client.application.test_client(), " ADA@example.com ").status_code == 200


def test_login_failure_is_the_same_whether_or_not_the_email_exists(client):
    register(client)
    wrong_password = login(client, password="wrong password")
    no_such_user = login(client, email="nobody@example.com")
    assert wrong_password.status_code == no_such_user.status_code == 401
    assert (
        wrong_password.get_json()
        == no_such_user.get_json()
        == {"detail": "Invalid email or password"}
    )
    assert "Set-Cookie" not in wrong_password.headers


def test_login_validation(client):
    response = client.post("/api/v1/auth/login", json={"email": "ada@example.com"})
    assert response.status_code == 422 and "password" in response.get_json()["errors"]


def test_each_login_starts_a_new_session(client):
    """Session fixation: tokens from before a login are not the ones after it."""
    register(client)
    before = client.get_cookie("svc_access_token").value
    login(client)
    after = client.get_cookie("svc_access_token").value
    assert before != after
    assert client.get_cookie("svc_csrf_token").value != tokens.csrf_token_for(
        client.application.config["SECRET_KEY"],
        tokens.read_access_token(client.application.config["SECRET_KEY"], before).session_id,
    )


# --- me -----------------------------------------------------------------------------------------


def test_me_requires_a_credential(client):
    response = client.get("/api/v1/auth/me")
    assert response.status_code == 401
    assert response.get_json()["detail"]


def test_me_rejects_a_forged_access_cookie(client):
    register(client)
    client.set_cookie("svc_access_token", client.get_cookie("svc_access_token").value + "x")
    assert client.get("/api/v1/auth/me").status_code == 401


def test_expired_access_token_is_401(app, user_client):
    secret = app.config["SECRET_KEY"]
    claims = tokens.read_access_token(secret, user_client.get_cookie("svc_access_token").value)
    expired = tokens.sign_access_token(
        secret, claims.session_id, "x" * 32, utcnow() - timedelta(seconds=1)
    )
    user_client.set_cookie("svc_access_token", expired)
    assert user_client.get("/api/v1/auth/me").status_code == 401


def test_every_access_token_is_distinct(client):
    register(client)
    seen = {client.get_cookie("svc_access_token").value}
    for _ in range(3):
        login(client)
        seen.add(client.get_cookie("svc_access_token").value)
        client.post("/api/v1/auth/refresh")
        seen.add(client.get_cookie("svc_access_token").value)
    assert len(seen) == 7


# --- refresh ------------------------------------------------------------------------------------


def test_refresh_rotates_both_tokens(user_client):
    old_access = user_client.get_cookie("svc_access_token").value
    old_refresh = refresh_cookie(user_client)
    response = user_client.post("/api/v1/auth/refresh")
    assert response.status_code == 200
    assert response.get_json() == user_client.user
    cookies = set_cookies(response)
    assert cookies["svc_access_token"]["value"] != old_access
    assert cookies["svc_refresh_token"]["value"] != old_refresh
    assert user_client.get("/api/v1/auth/me").status_code == 200


def _signed_in_ago(app, ago: timedelta) -> None:
    with app.app_context():
        db.session.execute(update(AuthSession).values(created_at=utcnow() - ago))
        db.session.commit()


def test_refreshing_never_carries_a_session_past_its_absolute_lifetime(app, user_client):
    """SVC_SESSION_MAX_DAYS (90): refreshes slide the session 30 days on, but not past 90 days
    after the sign-in; then the user signs in again."""
    _signed_in_ago(app, timedelta(days=90) - timedelta(hours=1))
    response = user_client.post("/api/v1/auth/refresh")
    assert response.status_code == 200
    max_age = int(set_cookies(response)["svc_refresh_token"]["max-age"])
    assert 0 < max_age <= 3600
    with app.app_context():
        session = db.session.scalars(select(AuthSession)).one()
        assert session.expires_at <= session.created_at + timedelta(days=90)

    _signed_in_ago(app, timedelta(days=90, seconds=1))
    assert user_client.get("/api/v1/auth/me").status_code == 401
    assert user_client.post("/api/v1/auth/refresh").status_code == 401


def test_refresh_within_grace_returns_the_same_successor_pair(user_client):
    old_refresh = refresh_cookie(user_client)
    first = set_cookies(user_client.post("/api/v1/auth/refresh"))
    # A second tab presents the refresh token the first one just replaced.
    user_client.set_cookie("svc_refresh_token", old_refresh, path=REFRESH_PATH)
    second = user_client.post("/api/v1/auth/refresh")
    assert second.status_code == 200
    second_cookies = set_cookies(second)
    for name in ("svc_access_token", "svc_refresh_token", "svc_csrf_token"):
        assert second_cookies[name]["value"] == first[name]["value"]
    assert user_client.get("/api/v1/auth/me").status_code == 200


def _age_last_rotation(app, seconds: int) -> None:
    with app.app_context():
        db.session.execute(
            update(AuthSession).values(rotated_at=utcnow() - timedelta(seconds=seconds))
        )
        db.session.commit()


def test_reused_refresh_token_after_grace_ends_the_session(app, user_client):
    old_refresh = refresh_cookie(user_client)
    user_client.post("/api/v1/auth/refresh")
    new_access = user_client.get_cookie("svc_access_token").value
    new_refresh = refresh_cookie(user_client)
    _age_last_rotation(app, app.config["SVC_REFRESH_REUSE_GRACE"] + 1)

    thief = app.test_client()
    thief.set_cookie("svc_refresh_token", old_refresh, path=REFRESH_PATH)
    response = thief.post("/api/v1/auth/refresh")
    assert response.status_code == 401
    cleared = set_cookies(response)
    assert cleared["svc_refresh_token"]["value"] == ""
    assert int(cleared["svc_access_token"]["max-age"]) == 0
    # The whole session ended: the legitimate holder's newer tokens fail too.
    user_client.set_cookie("svc_access_token", new_access)
    assert user_client.get("/api/v1/auth/me").status_code == 401
    user_client.set_cookie("svc_refresh_token", new_refresh, path=REFRESH_PATH)
    assert user_client.post("/api/v1/auth/refresh").status_code == 401


def test_grace_window_is_configurable(make_app):
    app = make_app(SVC_REFRESH_REUSE_GRACE="0")
    client = app.test_client()
    register(client)
    old_refresh = refresh_cookie(client)
    client.post("/api/v1/auth/refresh")
    _age_last_rotation(app, 1)
    client.set_cookie("svc_refresh_token", old_refresh, path=REFRESH_PATH)
    assert client.post("/api/v1/auth/refresh").status_code == 401


@pytest.mark.parametrize(
    "value", ["", "garbage", "0" * 32 + ".0.abc", "not-a-uuid.0.abc", "a.b.c.d"]
)
def test_refresh_with_bad_cookie_is_401_and_clears_cookies(client, value):
    register(client)
    if value:
        client.set_cookie("svc_refresh_token", value, path=REFRESH_PATH)
    else:
        client.delete_cookie("svc_refresh_token", path=REFRESH_PATH)
    response = client.post("/api/v1/auth/refresh")
    assert response.status_code == 401
    assert response.get_json()["detail"]
    assert set(set_cookies(response)) == {"svc_access_token", "svc_refresh_token", "svc_csrf_token"}


def test_refresh_token_with_forged_mac_is_401(user_client):
    session_hex, generation, _ = refresh_cookie(user_client).split(".")
    user_client.set_cookie(
        "svc_refresh_token", f"{session_hex}.{generation}.forged", path=REFRESH_PATH
    )
    assert user_client.post("/api/v1/auth/refresh").status_code == 401


def test_refresh_tokens_are_not_stored(app, user_client):
    value = refresh_cookie(user_client)
    with app.app_context():
        row = db.session.scalar(select(AuthSession))
        stored = " ".join(str(getattr(row, c.key)) for c in AuthSession.__table__.columns)
    assert value.split(".")[2] not in stored


# --- logout -------------------------------------------------------------------------------------


def test_logout_ends_the_session_server_side(user_client):
    access = user_client.get_cookie("svc_access_token").value
    refresh = refresh_cookie(user_client)
    response = user_client.post("/api/v1/auth/logout")
    assert response.status_code == 204 and response.data == b""
    cleared = set_cookies(response)
    assert set(cleared) == {"svc_access_token", "svc_refresh_token", "svc_csrf_token"}
    assert all(cookie["value"] == "" for cookie in cleared.values())
    assert response.headers["Clear-Site-Data"] == '"cookies"'
    # Replaying the old cookies does not bring the session back.
    user_client.set_cookie("svc_access_token", access)
    assert user_client.get("/api/v1/auth/me").status_code == 401
    user_client.set_cookie("svc_refresh_token", refresh, path=REFRESH_PATH)
    assert user_client.post("/api/v1/auth/refresh").status_code == 401


def test_logout_with_only_the_refresh_cookie_ends_the_session(user_client):
    refresh = refresh_cookie(user_client)
    user_client.delete_cookie("svc_access_token")
    assert user_client.post("/api/v1/auth/logout").status_code == 204
    user_client.set_cookie("svc_refresh_token", refresh, path=REFRESH_PATH)
    assert user_client.post("/api/v1/auth/refresh").status_code == 401


def test_logout_without_a_session_is_204(client):
    assert client.post("/api/v1/auth/logout").status_code == 204


def test_logout_ends_only_its_own_session(client):
    register(client)
    other_device = client.application.test_client()
    login(other_device)
    client.post("/api/v1/auth/logout")
    assert other_device.get("/api/v1/auth/me").status_code == 200


# --- password change ----------------------------------------------------------------------------


def test_password_change_ends_every_other_session(app, user_client):
    other_device = app.test_client()
    login(other_device)
    response = user_client.post(
        "/api/v1/auth/password",
        headers=csrf(user_client),
        json={"current_password": PASSWORD, "new_password": "a brand new secret"},
    )
    assert response.status_code == 204
    assert user_client.get("/api/v1/auth/me").status_code == 200
    assert other_device.get("/api/v1/auth/me").status_code == 401
    assert login(app.test_client()).status_code == 401
    assert login(app.test_client(), password="a brand new secret").status_code == 200


def test_password_change_with_wrong_current_password_is_422(user_client):
    response = user_client.post(
        "/api/v1/auth/password",
        headers=csrf(user_client),
        json={"current_password": "not it at all", "new_password": "a brand new secret"},
    )
    assert response.status_code == 422
    assert list(response.get_json()["errors"]) == ["current_password"]


def test_password_change_validates_the_new_password(user_client):
    response = user_client.post(
        "/api/v1/auth/password",
        headers=csrf(user_client),
        json={"current_password": PASSWORD, "new_password": "short"},
    )
    assert response.status_code == 422 and "new_password" in response.get_json()["errors"]


def test_password_change_needs_a_credential(client):
    response = client.post(
        "/api/v1/auth/password",
        json={"current_password": PASSWORD, "new_password": "a brand new secret"},
    )
    assert response.status_code == 401


def test_password_change_needs_a_session_not_a_pat(app, user_client):
    pat = create_pat(user_client)["token"]
    response = app.test_client().post(
        "/api/v1/auth/password",
        headers={"Authorization": f"Bearer {pat}"},
        json={"current_password": PASSWORD, "new_password": "a brand new secret"},
    )
    assert response.status_code == 403
    assert "session" in response.get_json()["detail"]
    assert user_client.get("/api/v1/auth/me").status_code == 200
    login = {"email": user_client.user["email"], "password": PASSWORD}
    assert app.test_client().post("/api/v1/auth/login", json=login).status_code == 200


def test_password_change_is_limited_per_user(make_app):
    """Each attempt guesses the current password: 3 a minute here, counted for the user across
    sessions and addresses; another user keeps a budget of their own."""
    app = make_app(SVC_RATE_LIMIT_PASSWORD="3/minute")
    first_session = app.test_client()
    register(first_session)
    second_session = app.test_client()
    login = {"email": "ada@example.com", "password": PASSWORD}
    assert second_session.post("/api/v1/auth/login", json=login).status_code == 200
    guess = {"current_password": "wrong guess", "new_password": "a brand new secret"}

    def attempt(client, address):
        return client.post(
            "/api/v1/auth/password",
            json=guess,
            headers=csrf(client),
            environ_base={"REMOTE_ADDR": address},
        ).status_code

    statuses = [
        attempt(first_session, "192.0.2.1"),
        attempt(second_session, "192.0.2.2"),
        attempt(first_session, "192.0.2.3"),
        attempt(second_session, "192.0.2.4"),
    ]
    assert 429 not in statuses[:3] and statuses[3] == 429
    other = app.test_client()
    register(other, email="grace@example.com", name="Grace Hopper")
    assert attempt(other, "192.0.2.1") != 429


# --- CSRF ---------------------------------------------------------------------------------------


def _cookie_write(client, headers):
    return client.post("/api/v1/tokens", json={"name": "ci"}, headers=headers)


def test_cookie_write_without_csrf_header_is_403(user_client):
    response = _cookie_write(user_client, {})
    assert response.status_code == 403
    assert "CSRF" in response.get_json()["detail"]


def test_cookie_write_with_wrong_csrf_header_is_403(user_client):
    assert _cookie_write(user_client, {"X-CSRF-Token": "wrong"}).status_code == 403


def test_csrf_token_of_another_session_is_403(app, user_client):
    """A token planted from elsewhere (header and cookie agreeing) is bound to another session."""
    other = app.test_client()
    register(other, email="mallory@example.com")
    planted = other.get_cookie("svc_csrf_token").value
    user_client.set_cookie("svc_csrf_token", planted)
    assert _cookie_write(user_client, {"X-CSRF-Token": planted}).status_code == 403


def test_csrf_header_without_matching_cookie_is_403(user_client):
    token = user_client.get_cookie("svc_csrf_token").value
    user_client.delete_cookie("svc_csrf_token")
    assert _cookie_write(user_client, {"X-CSRF-Token": token}).status_code == 403


def test_cookie_write_with_csrf_header_passes(user_client):
    assert _cookie_write(user_client, csrf(user_client)).status_code == 201


def test_reads_need_no_csrf_header(user_client):
    assert user_client.get("/api/v1/tokens").status_code == 200


def test_csrf_comes_after_credentials(client):
    """Order of checks: no credential is a 401, not a 403."""
    assert _cookie_write(client, {}).status_code == 401


def test_csrf_comes_before_body_validation(user_client):
    response = user_client.post("/api/v1/tokens", data="not json", content_type="text/plain")
    assert response.status_code == 403


def test_refresh_and_logout_are_exempt_from_csrf(user_client):
    assert user_client.post("/api/v1/auth/refresh").status_code == 200
    assert user_client.post("/api/v1/auth/logout").status_code == 204
