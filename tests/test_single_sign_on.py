"""Single sign-on's rules that need no provider (docs/identity.md); the flow itself, against a
real OpenID provider in Chromium, is in tests/test_identity_browser.py."""

import pytest
from sqlalchemy import select

from harness.client import PASSWORD, csrf, register
from svc import sso
from svc.config import ConfigError, load_settings
from svc.errors import Forbidden, Invalid
from svc.extensions import db
from svc.models import User
from svc.services import projects
from svc.services.identity import invitations, single_sign_on

ISSUER = "https://id.example.com/realms/acme"
SSO = {
    "SVC_OIDC_ISSUER": ISSUER,
    "SVC_OIDC_CLIENT_ID": "svc",
    "SVC_OIDC_CLIENT_SECRET": "s3cret",
    "SVC_OIDC_NAME": "Acme ID",
}


def test_the_sign_in_page_learns_what_is_offered(make_app):
    plain = make_app().test_client().get("/api/v1/auth/methods").get_json()
    assert plain == {"password": True, "registration": "open", "singleSignOn": None}
    app = make_app(**SSO, SVC_PASSWORD_LOGIN="off")
    client = app.test_client()
    offered = client.get("/api/v1/auth/methods").get_json()
    assert offered["password"] is False
    assert offered["singleSignOn"] == {"name": "Acme ID", "url": "/sso/login"}
    for path, body in (
        (
            "/api/v1/auth/register",
            {"name": "Ada", "email": "ada@example.com", "password": PASSWORD},
        ),
        ("/api/v1/auth/login", {"email": "ada@example.com", "password": PASSWORD}),
    ):
        answer = client.post(path, json=body)
        assert answer.status_code == 403
        assert "single sign-on" in answer.get_json()["detail"]


def test_with_password_sign_in_off_an_invitation_makes_no_password_account(make_app):
    """Only single sign-on lets people in: an invitation is accepted after signing in with it
    (403 for a new password account), and goes only to addresses it lets in."""
    app = make_app(**SSO, SVC_PASSWORD_LOGIN="off", SVC_OIDC_ALLOWED_DOMAINS="acme.example")
    made = app.test_cli_runner().invoke(
        args=["create-user", "--name", "Ada", "--email", "ada@acme.example"],
        input=f"{PASSWORD}\n{PASSWORD}\n",
    )
    assert made.exit_code == 0, made.output
    with app.app_context():
        ada = db.session.scalar(select(User).where(User.email == "ada@acme.example"))
        project = projects.create(ada, "Web Shop").project
        _, link = invitations.invite(ada, project.id, "alan@acme.example", "member")
        with pytest.raises(Invalid) as refused:
            invitations.invite(ada, project.id, "mallory@elsewhere.example", "member")
        assert "email" in refused.value.errors
    answer = app.test_client().post(
        "/api/v1/invitations/accept",
        json={"token": link.rsplit("/", 1)[1], "name": "Alan", "password": PASSWORD},
    )
    assert answer.status_code == 403 and "single sign-on" in answer.get_json()["detail"]
    with app.app_context():
        assert db.session.scalar(select(User).where(User.email == "alan@acme.example")) is None


def test_settings_that_leave_no_way_in_fail_at_start_up():
    with pytest.raises(ConfigError, match="SVC_PASSWORD_LOGIN=off"):
        load_settings(environ={"SVC_PASSWORD_LOGIN": "off"})
    with pytest.raises(ConfigError, match="SVC_OIDC_CLIENT_ID"):
        load_settings(environ={"SVC_OIDC_ISSUER": ISSUER})
    assert load_settings(environ=SSO)["SVC_OIDC_ALLOWED_DOMAINS"] == ()


def test_without_a_provider_there_is_no_single_sign_on(client):
    assert client.get("/sso/login").status_code == 404
    assert client.get("/sso/callback?code=x&state=y").status_code == 404


def test_single_sign_on_is_rate_limited_as_sign_in_is(make_app):
    """Open to anyone, and each refusal is an audit entry: SVC_RATE_LIMIT_AUTH per address."""
    app = make_app(
        **{**SSO, "SVC_OIDC_ISSUER": "https://127.0.0.1:9"}, SVC_RATE_LIMIT_AUTH="2/minute"
    )
    client = app.test_client()
    # The provider cannot be reached (nothing listens on port 9): refused, and counted.
    answers = [client.get("/sso/callback?code=x&state=y").status_code for _ in range(3)]
    assert answers == [400, 400, 429]
    assert [client.get("/sso/login").status_code for _ in range(3)] == [502, 502, 429]


@pytest.mark.parametrize(
    ("asked", "sent_to"),
    [
        ("/reports/WS-1?tab=activity", "/reports/WS-1?tab=activity"),
        ("https://evil.example/", "/projects"),
        ("//evil.example/", "/projects"),
        ("/\\evil.example/", "/projects"),
        ("/\t/evil.example/", "/projects"),
        (None, "/projects"),
    ],
)
def test_after_sign_in_the_browser_goes_only_to_a_page_of_this_site(asked, sent_to):
    assert sso._safe_next(asked) == sent_to


def claims(sub="ada-at-acme", email="ada@example.com", verified=True, name="Ada Lovelace"):
    return {"sub": sub, "email": email, "email_verified": verified, "name": name}


def test_who_signs_in_follows_the_linking_rules(make_app):
    app = make_app(**SSO, SVC_OIDC_ALLOWED_DOMAINS="example.com, acme.test")
    admin = app.test_client()
    register(admin, email="root@example.com", name="Root")
    ada_id = register(app.test_client())["id"]
    with app.test_request_context():
        linked = single_sign_on.account_for(ISSUER, claims(verified="true"))
        assert str(linked.id) == ada_id and linked.oidc_subject == f"{ISSUER} ada-at-acme"
        # Another identity at the provider with Ada's address does not take her account over.
        with pytest.raises(Forbidden, match="linked to another account"):
            single_sign_on.account_for(ISSUER, claims(sub="someone-else"))
        new = single_sign_on.account_for(ISSUER, claims("b", "bob@acme.test", name="Bob\nBob"))
        assert (new.name, new.password_hash) == ("Bob Bob", "")
        with pytest.raises(Forbidden, match="not verified"):
            single_sign_on.account_for(ISSUER, claims("c", "carol@acme.test", verified=False))
    admin.patch(f"/api/v1/admin/users/{ada_id}", json={"active": False}, headers=csrf(admin))
    with app.test_request_context(), pytest.raises(Forbidden, match="deactivated"):
        single_sign_on.account_for(ISSUER, claims())


def test_xms_edov_speaks_for_an_address_only_from_microsofts_issuer(make_app):
    """Entra ID never sends `email_verified`, and says `xms_edov` instead; another provider may
    let its users set any claim, so from it `xms_edov` verifies nothing."""
    entra = "https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0"
    app = make_app(**SSO)
    edov = {"sub": "d", "email": "dan@example.com", "xms_edov": True, "name": "Dan"}
    with app.test_request_context():
        with pytest.raises(Forbidden, match="not verified"):
            single_sign_on.account_for(ISSUER, edov)
        assert single_sign_on.account_for(entra, edov).email == "dan@example.com"


def test_single_sign_on_linking_an_account_is_recorded_and_its_owner_told(make_app):
    """The first single sign-on into an existing account (a password, maybe a second factor)
    links it by its verified address: audited as sso_linked, and its owner mailed, once."""
    from svc.models import AuditEntry, OutgoingMail

    app = make_app(**SSO)
    register(app.test_client())
    with app.test_request_context():
        single_sign_on.account_for(ISSUER, claims())
        single_sign_on.account_for(ISSUER, claims())  # already linked: nothing new
        linked = db.session.scalars(select(AuditEntry).where(AuditEntry.action == "sso_linked"))
        assert [entry.detail["issuer"] for entry in linked] == [ISSUER]
        mails = db.session.scalars(
            select(OutgoingMail.subject).where(OutgoingMail.to_address == "ada@example.com")
        ).all()
        assert mails == ["svc: your account now also signs in with single sign-on"]
