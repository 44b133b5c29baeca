"""A second factor (docs/identity.md): TOTP enrolled from the account, asked for at the next
password sign-in before any cookie, codes used once (also across processes), recovery codes,
the half-signed-in state that expires and opens nothing else, the admin's reset,
SVC_REQUIRE_2FA. Passkeys in a real browser: tests/test_identity_browser.py."""

import re
from datetime import timedelta
from typing import NamedTuple

import pytest
from sqlalchemy import update

from harness.client import PASSWORD, create_project, csrf, invite, register, token_of
from svc.auth.cookies import ACCESS_COOKIE, PENDING_COOKIE
from svc.extensions import db
from svc.models import PendingSignIn
from svc.models.base import utcnow
from tests.helpers import (
    VALID_BODIES,
    api_routes,
    furnish,
    route_id,
    run_in_processes,
    totp_code,
    totp_step,
    unspent_totp_code,
    url_for_route,
)

LOGIN = {"email": "ada@example.com", "password": PASSWORD}
ANSWER = "/api/v1/auth/second-factor"
RECOVERY_CODE = re.compile(r"^[a-z2-7]{4}(-[a-z2-7]{4}){3}$")


def ok(response, status=200):
    assert response.status_code == status, response.get_json()
    return response.get_json()


class Enrolled(NamedTuple):
    secret: str
    recovery_codes: list[str]
    spent: int  # the time step whose code the confirmation spent


def enrol_totp(client) -> Enrolled:
    """Enrol an authenticator app for the signed-in client, confirmed with the code of one
    step, recorded (never recomputed later: a 30 s boundary may have passed since)."""
    setup = ok(client.post("/api/v1/auth/factors/totp", headers=csrf(client)), 201)
    assert setup["otpauthUri"].startswith("otpauth://totp/")
    assert f"secret={setup['secret']}" in setup["otpauthUri"]
    assert setup["qrCode"].startswith("data:image/svg+xml")
    confirm = f"/api/v1/auth/factors/{setup['id']}/confirm"
    step = totp_step()
    code = totp_code(setup["secret"], step)
    body = {"code": code, "current_password": PASSWORD}
    enrolled = ok(client.post(confirm, json=body, headers=csrf(client)))
    return Enrolled(setup["secret"], enrolled["recoveryCodes"], step)


def waiting_sign_in(app):
    """A new client whose password sign-in waits for its second factor."""
    client = app.test_client()
    waiting = ok(client.post("/api/v1/auth/login", json=LOGIN), 202)
    assert client.get_cookie(ACCESS_COOKIE) is None
    return client, waiting


@pytest.fixture
def ada(app):
    client = app.test_client()
    register(client)
    return client


def test_totp_is_asked_for_after_the_password_and_each_code_works_once(app, ada):
    secret, codes, spent = enrol_totp(ada)
    assert len(codes) == 10 and len(set(codes)) == 10
    assert all(RECOVERY_CODE.match(code) for code in codes)
    security = ok(ada.get("/api/v1/auth/security"))
    assert [f["kind"] for f in security["factors"]] == ["totp"]
    assert security["recoveryCodesLeft"] == 10 and security["signInMethods"] == ["password"]
    ok(ada.post("/api/v1/auth/logout"), 204)

    client, waiting = waiting_sign_in(app)
    assert waiting["methods"] == ["totp", "recovery_code"] and waiting["enrol"] is False
    assert client.get_cookie(PENDING_COOKIE, path=ANSWER) is not None
    assert client.get("/api/v1/auth/me").status_code == 401
    wrong = client.post(ANSWER, json={"code": "000000"})
    assert wrong.status_code == 401 and wrong.get_json()["detail"]
    # The step the confirmation spent is refused: a code works once.
    assert client.post(ANSWER, json={"code": totp_code(secret, spent)}).status_code == 401
    fresh = unspent_totp_code(secret, spent)
    signed_in = ok(client.post(ANSWER, json={"code": fresh}))
    assert signed_in["email"] == "ada@example.com" and signed_in["recoveryCodes"] is None
    assert client.get_cookie(ACCESS_COOKIE) is not None
    assert client.get_cookie(PENDING_COOKIE, path=ANSWER) is None
    ok(client.get("/api/v1/auth/me"))

    again, _ = waiting_sign_in(app)
    assert again.post(ANSWER, json={"code": fresh}).status_code == 401
    assert again.get_cookie(ACCESS_COOKIE) is None


def test_a_recovery_code_works_once_and_new_ones_replace_the_old(app, ada):
    codes = enrol_totp(ada).recovery_codes
    client, _ = waiting_sign_in(app)
    ok(client.post(ANSWER, json={"recovery_code": codes[0].upper().replace("-", " ")}))
    again, _ = waiting_sign_in(app)
    assert again.post(ANSWER, json={"recovery_code": codes[0]}).status_code == 401
    assert ok(client.get("/api/v1/auth/security"))["recoveryCodesLeft"] == 9

    proof = {"current_password": PASSWORD}
    fresh = ok(client.post("/api/v1/auth/recovery-codes", json=proof, headers=csrf(client)), 201)
    assert set(fresh["recoveryCodes"]).isdisjoint(codes)
    assert again.post(ANSWER, json={"recovery_code": codes[1]}).status_code == 401
    ok(again.post(ANSWER, json={"recovery_code": fresh["recoveryCodes"][0]}))


def test_an_expired_or_spent_half_sign_in_is_refused(app, ada):
    secret, codes, spent = enrol_totp(ada)
    client, _ = waiting_sign_in(app)
    with app.app_context():
        db.session.execute(update(PendingSignIn).values(expires_at=utcnow() - timedelta(seconds=1)))
        db.session.commit()
    expired = client.post(ANSWER, json={"code": unspent_totp_code(secret, spent)})
    assert expired.status_code == 401 and "expired" in expired.get_json()["detail"]

    client, _ = waiting_sign_in(app)
    for _ in range(5):
        assert client.post(ANSWER, json={"code": "123456"}).status_code == 401
    # Five wrong answers end it: not even a good one goes through now.
    assert client.post(ANSWER, json={"recovery_code": codes[0]}).status_code == 401
    assert client.get_cookie(ACCESS_COOKIE) is None


def test_the_half_signed_in_state_opens_no_api(app, ada):
    """Every endpoint of the route table, tried with the waiting sign-in's cookie sent to every
    path: nothing that needs a user answers, and the only ones that take the cookie are the
    second factor's own."""
    enrol_totp(ada)
    furnished = furnish(
        ada, ok(ada.post("/api/v1/projects", json={"name": "Shop"}, headers=csrf(ada)), 201)
    )
    client, _ = waiting_sign_in(app)
    token = client.get_cookie(PENDING_COOKIE, path=ANSWER).value
    client.set_cookie(PENDING_COOKIE, token, path="/")
    values = {**furnished, "token_id": furnished["factor_id"], "user_id": furnished["factor_id"]}
    pending_only = []
    for route in api_routes():
        rule, method, credentials = route
        if credentials == ("pending_sign_in",):
            pending_only.append(rule)
            continue
        if not {"session", "pat"} & set(credentials) or "public" in credentials:
            continue
        url = url_for_route(rule, values)
        response = client.open(url, method=method, json=VALID_BODIES.get((rule, method), {}))
        assert response.status_code == 401, route_id(route)
    assert sorted(pending_only) == [
        "/api/v1/auth/second-factor",
        "/api/v1/auth/second-factor/enrolment",
        "/api/v1/auth/second-factor/passkey-options",
    ]
    assert client.get_cookie(ACCESS_COOKIE) is None


def test_one_code_starts_one_session_across_processes(app, ada, tmp_path):
    """Two waiting sign-ins answered with the same code at once, from two processes (as two
    workers would take them): one session starts, the other is refused."""
    secret, _, spent = enrol_totp(ada)
    tokens = []
    for _ in range(2):
        client, _ = waiting_sign_in(app)
        tokens.append(client.get_cookie(PENDING_COOKIE, path=ANSWER).value)
    code = unspent_totp_code(secret, spent)
    outputs = run_in_processes(
        app,
        f"""
        import os
        for index, mine in enumerate({tokens!r}):  # each process claims a sign-in of its own
            try:
                os.close(os.open("{tmp_path}/claim" + str(index), os.O_CREAT | os.O_EXCL))
                break
            except FileExistsError:
                continue
        client = app.test_client()
        client.set_cookie("{PENDING_COOKIE}", mine, path="/")
        print(client.post("{ANSWER}", json={{"code": "{code}"}}).status_code)
        """,
    )
    assert sorted(int(out) for out in outputs) == [200, 401]


def test_removing_the_last_factor_removes_the_recovery_codes(app, ada):
    enrol_totp(ada)
    factor = ok(ada.get("/api/v1/auth/security"))["factors"][0]
    proof = {"current_password": PASSWORD}
    ok(ada.delete(f"/api/v1/auth/factors/{factor['id']}", json=proof, headers=csrf(ada)), 204)
    security = ok(ada.get("/api/v1/auth/security"))
    assert security["factors"] == [] and security["recoveryCodesLeft"] == 0
    ok(app.test_client().post("/api/v1/auth/login", json=LOGIN))


def test_an_admin_resets_a_users_factors(app, ada):
    grace = app.test_client()
    grace_id = register(grace, email="grace@example.com", name="Grace Hopper")["id"]
    enrol_totp(grace)
    grace_login = {"email": "grace@example.com", "password": PASSWORD}
    ok(app.test_client().post("/api/v1/auth/login", json=grace_login), 202)

    assert (
        grace.delete(f"/api/v1/admin/users/{grace_id}/factors", headers=csrf(grace)).status_code
        == 403
    )
    # The accounts list says who has a factor.
    listed = {user["email"]: user for user in ok(ada.get("/api/v1/admin/users"))}
    assert listed["grace@example.com"]["secondFactors"] == ["totp"]
    assert listed["ada@example.com"]["secondFactors"] == []
    assert listed["grace@example.com"]["singleSignOn"] is False
    ok(ada.delete(f"/api/v1/admin/users/{grace_id}/factors", headers=csrf(ada)), 204)
    ok(app.test_client().post("/api/v1/auth/login", json=grace_login))
    listed = {user["email"]: user for user in ok(ada.get("/api/v1/admin/users"))}
    assert listed["grace@example.com"]["secondFactors"] == []


def test_enrolling_and_removing_need_a_browser_session(app, ada):
    token = ok(ada.post("/api/v1/tokens", json={"name": "cli"}, headers=csrf(ada)), 201)["token"]
    bearer = {"Authorization": f"Bearer {token}"}
    assert app.test_client().post("/api/v1/auth/factors/totp", headers=bearer).status_code == 403
    # A token is never asked for a factor, before or after one is enrolled.
    enrol_totp(ada)
    ok(app.test_client().get("/api/v1/auth/me", headers=bearer))


def test_svc_require_2fa_holds_for_every_way_in_with_a_password(make_app):
    """Registering and accepting an invitation with a new account once gave a full session at
    once (then year-long tokens): they wait for an enrolment as a password sign-in does."""
    app = make_app(SVC_REQUIRE_2FA="true")
    registering = app.test_client()
    body = {"name": "Ada Lovelace", "email": "ada@example.com", "password": PASSWORD}
    waiting = ok(registering.post("/api/v1/auth/register", json=body), 202)
    assert waiting["enrol"] is True and waiting["methods"] == ["totp"]
    assert registering.get_cookie(ACCESS_COOKIE) is None
    assert registering.get("/api/v1/auth/me").status_code == 401
    assert registering.post("/api/v1/tokens", json={"name": "cli"}).status_code == 401

    code = totp_code(ok(registering.post(f"{ANSWER}/enrolment"))["secret"], totp_step())
    ok(registering.post(ANSWER, json={"code": code}))
    project = create_project(registering)
    invitation = invite(registering, project["id"], "alan@example.com")
    joining = app.test_client()
    accepted = joining.post(
        "/api/v1/invitations/accept",
        json={"token": token_of(invitation), "name": "Alan", "password": PASSWORD},
    )
    assert accepted.status_code == 202 and accepted.get_json()["enrol"] is True
    assert joining.get_cookie(ACCESS_COOKIE) is None
    assert joining.get("/api/v1/auth/me").status_code == 401


def test_svc_require_2fa_keeps_the_last_factor(make_app):
    """Under SVC_REQUIRE_2FA a user removed their last factor and kept
    their session. It is a 409 with words, and the factor stays."""
    app = make_app(SVC_REQUIRE_2FA="true")
    app.test_client().post(
        "/api/v1/auth/register",
        json={"name": "Ada Lovelace", "email": "ada@example.com", "password": PASSWORD},
    )
    client, _ = waiting_sign_in(app)
    setup = ok(client.post(f"{ANSWER}/enrolment"))
    ok(client.post(ANSWER, json={"code": totp_code(setup["secret"], totp_step())}))
    [factor] = ok(client.get("/api/v1/auth/security"))["factors"]
    proof = {"current_password": PASSWORD}
    refused = client.delete(
        f"/api/v1/auth/factors/{factor['id']}", json=proof, headers=csrf(client)
    )
    assert refused.status_code == 409, refused.get_json()
    assert "requires a second factor" in refused.get_json()["detail"]
    assert len(ok(client.get("/api/v1/auth/security"))["factors"]) == 1


def test_svc_require_2fa_makes_a_password_user_enrol_at_sign_in(make_app):
    app = make_app(SVC_REQUIRE_2FA="true")
    app.test_client().post(
        "/api/v1/auth/register",
        json={"name": "Ada Lovelace", "email": "ada@example.com", "password": PASSWORD},
    )
    client, waiting = waiting_sign_in(app)
    assert waiting["enrol"] is True and waiting["methods"] == ["totp"]
    setup = ok(client.post(f"{ANSWER}/enrolment"))
    assert client.post(ANSWER, json={"code": "000000"}).status_code == 401
    code = totp_code(setup["secret"], totp_step())
    signed_in = ok(client.post(ANSWER, json={"code": code}))
    assert len(signed_in["recoveryCodes"]) == 10

    client, waiting = waiting_sign_in(app)
    assert waiting["enrol"] is False and waiting["methods"] == ["totp", "recovery_code"]
    assert client.post(f"{ANSWER}/enrolment").status_code == 409
    ok(client.post(ANSWER, json={"recovery_code": signed_in["recoveryCodes"][0]}))


def test_a_factor_no_key_opens_is_a_409_with_words_and_the_operator_resets_it(make_app):
    """After a restore without the old secret key, signing in with an
    authenticator app was a 500."""
    before = make_app(SVC_SECRET_KEY="the key the install had")
    ada = before.test_client()
    register(ada)
    enrol_totp(ada)
    restored = make_app(SVC_SECRET_KEY="a new key: the old one was not kept")
    client, _ = waiting_sign_in(restored)
    refused = client.post(ANSWER, json={"code": "123456"})
    assert refused.status_code == 409
    assert "restored without the key" in refused.get_json()["detail"]
    assert "reset-factors" in refused.get_json()["detail"]

    done = restored.test_cli_runner().invoke(args=["reset-factors", "ADA@example.com"])
    assert done.exit_code == 0, done.output
    assert "second factors of ada@example.com removed" in done.output
    ok(restored.test_client().post("/api/v1/auth/login", json=LOGIN))
    unknown = restored.test_cli_runner().invoke(args=["reset-factors", "nobody@example.com"])
    assert unknown.exit_code != 0 and "nobody@example.com" in unknown.output


def test_wrong_answers_count_per_account_across_sign_ins_and_processes(app, ada):
    """Five wrong answers end one waiting sign-in, but the password starts another: the
    account's tenth wrong answer within the hour, from any sign-in, worker or host, makes its
    answers wait (429, Retry-After) and mails the user, whoever then has the right code."""
    from svc.models import OutgoingMail

    enrolled = enrol_totp(ada)
    # Six wrong answers in two other processes (two workers, or two hosts), three each.
    printed = run_in_processes(
        app,
        """
        from harness.client import PASSWORD
        client = app.test_client()
        statuses = []
        for _ in range(3):
            client.post("/api/v1/auth/login", json={"email": "ada@example.com",
                                                    "password": PASSWORD})
            statuses.append(client.post("/api/v1/auth/second-factor",
                                        json={"code": "000000"}).status_code)
        print(statuses)
        """,
    )
    assert printed == ["[401, 401, 401]\n"] * 2
    client, _ = waiting_sign_in(app)
    for _ in range(4):
        assert client.post(ANSWER, json={"code": "000000"}).status_code == 401
    with app.app_context():
        mails = db.session.query(OutgoingMail).filter_by(to_address="ada@example.com").all()
        guessed = "svc: your second factor is being guessed at"
        assert [mail.subject for mail in mails if mail.subject == guessed] == [guessed]
    client, _ = waiting_sign_in(app)
    right = unspent_totp_code(enrolled.secret, enrolled.spent)
    refused = client.post(ANSWER, json={"code": right})
    assert refused.status_code == 429
    assert 3500 <= int(refused.headers["Retry-After"]) <= 3601
    assert client.get_cookie(ACCESS_COOKIE) is None


def test_per_address_limits_count_an_ipv6_64_as_one_client(make_app):
    """An IPv6 host is commonly given a /64: its 2^64 addresses are one client to a limit."""
    app = make_app(SVC_RATE_LIMIT_AUTH="3/minute")
    client = app.test_client()
    wrong = {"email": "ada@example.com", "password": "not the password"}
    statuses = [
        client.post(
            "/api/v1/auth/login", json=wrong, environ_base={"REMOTE_ADDR": f"2001:db8:1:2::{n}"}
        ).status_code
        for n in range(1, 5)
    ]
    assert statuses == [401, 401, 401, 429]
    other = client.post(
        "/api/v1/auth/login", json=wrong, environ_base={"REMOTE_ADDR": "2001:db8:1:3::1"}
    )
    assert other.status_code == 401


def test_changing_the_factors_needs_the_password_or_a_code_and_mails_the_user(app, ada):
    """A session alone (a stolen cookie) cannot add or remove a factor or make new recovery
    codes: each needs the current password or a current code, and each is mailed to the
    user."""
    from svc.models import OutgoingMail

    setup = ok(ada.post("/api/v1/auth/factors/totp", headers=csrf(ada)), 201)
    confirm = f"/api/v1/auth/factors/{setup['id']}/confirm"
    step = totp_step()
    code = totp_code(setup["secret"], step)
    for proof, words in (
        ({}, "Give your current password"),
        ({"current_password": "not it"}, "Wrong password or code"),
    ):
        refused = ada.post(confirm, json={"code": code, **proof}, headers=csrf(ada))
        assert refused.status_code == 403 and words in refused.get_json()["detail"]
    enrolled = ok(
        ada.post(confirm, json={"code": code, "current_password": PASSWORD}, headers=csrf(ada))
    )
    codes = enrolled["recoveryCodes"]
    new_codes = "/api/v1/auth/recovery-codes"
    assert ada.post(new_codes, json={}, headers=csrf(ada)).status_code == 403
    # A recovery code proves it too (and is used up).
    fresh = ok(ada.post(new_codes, json={"current_code": codes[0]}, headers=csrf(ada)), 201)
    factor = ok(ada.get("/api/v1/auth/security"))["factors"][0]
    remove = f"/api/v1/auth/factors/{factor['id']}"
    assert ada.delete(remove, json={}, headers=csrf(ada)).status_code == 403
    code_now = unspent_totp_code(setup["secret"], step)
    ok(ada.delete(remove, json={"current_code": code_now}, headers=csrf(ada)), 204)
    assert fresh["recoveryCodes"]
    with app.app_context():
        mailed = [
            mail.text_body or ""
            for mail in db.session.query(OutgoingMail)
            .filter_by(to_address="ada@example.com")
            .order_by(OutgoingMail.created_at)
        ]
    subjects_said = [text.split("\n\n")[1].split(" on your svc")[0] for text in mailed]
    assert subjects_said == [
        "A second factor (an authenticator app) was added",
        "New recovery codes were made (the old ones no longer work)",
        "A second factor (an authenticator app) was removed",
    ]
