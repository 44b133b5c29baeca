"""Invitations (docs/api.md §7.1) end to end: the owner invites, the mail arrives at a real
SMTP server on loopback, the link is followed by a new or an existing user."""

import re

import pytest

from harness.client import PASSWORD, create_project, csrf, invite, register, token_of
from svc.extensions import db
from svc.services.identity import users
from tests.helpers import send_due, text_of

INVITE_LINK = re.compile(r"https://bugs\.example\.com/invite/\w+")


@pytest.fixture
def closed_app(make_app, mail_settings):
    """Mail through the test server, and registration closed: an invitation is the way in."""
    return make_app(**mail_settings, SVC_REGISTRATION="closed")


@pytest.fixture
def owner_and_project(closed_app):
    ada = closed_app.test_client()
    ada.user = register(ada)  # the first user may register even when registration is closed
    return ada, create_project(ada)


def accept(client, token, **account):
    return client.post(
        "/api/v1/invitations/accept", json={"token": token, **account}, headers=csrf(client)
    )


def preview(client, token):
    return client.post("/api/v1/invitations/preview", json={"token": token})


def pending(owner, project):
    return owner.get(f"/api/v1/projects/{project['id']}/invitations").get_json()


def mailed_link(app, smtp_server, count=1) -> str:
    send_due(app)
    message = smtp_server.wait_for(count)[-1]
    return INVITE_LINK.search(text_of(message))[0], message


def test_a_new_user_joins_by_invitation_though_registration_is_closed(
    closed_app, smtp_server, owner_and_project
):
    ada, project = owner_and_project
    response = ada.post(
        f"/api/v1/projects/{project['id']}/invitations",
        json={"email": " Grace@Example.com", "role": "viewer"},
        headers=csrf(ada),
    )
    assert response.status_code == 201
    invitation = response.get_json()
    assert set(invitation) == {
        "id", "projectId", "email", "role", "invitedBy", "createdAt", "expiresAt", "url"
    }  # fmt: skip
    assert (invitation["email"], invitation["role"]) == ("grace@example.com", "viewer")
    assert invitation["invitedBy"] == {"id": ada.user["id"], "name": "Ada Lovelace"}
    link, message = mailed_link(closed_app, smtp_server)
    assert link == invitation["url"] and message["To"] == "grace@example.com"
    assert "Ada Lovelace" in message["Subject"] and "Web Shop" in message["Subject"]

    grace = closed_app.test_client()
    signing_up = grace.post(
        "/api/v1/auth/register",
        json={"name": "Grace", "email": "grace@example.com", "password": PASSWORD},
    )
    assert signing_up.status_code == 403
    seen = preview(grace, token_of(invitation)).get_json()
    assert (seen["projectName"], seen["email"], seen["accountExists"]) == (
        "Web Shop",
        "grace@example.com",
        False,
    )
    joined = accept(grace, token_of(invitation), name="Grace Hopper", password=PASSWORD)
    assert joined.status_code == 201
    body = joined.get_json()
    assert body["user"]["email"] == "grace@example.com"
    assert (body["project"]["id"], body["project"]["role"]) == (project["id"], "viewer")
    # Signed in by accepting, as by registering; the password works too.
    assert grace.get("/api/v1/auth/me").get_json()["name"] == "Grace Hopper"
    assert [p["role"] for p in grace.get("/api/v1/projects").get_json()] == ["viewer"]
    login = closed_app.test_client().post(
        "/api/v1/auth/login", json={"email": "grace@example.com", "password": PASSWORD}
    )
    assert login.status_code == 200
    # Used up.
    assert pending(ada, project) == []
    again = accept(closed_app.test_client(), token_of(invitation), name="X", password=PASSWORD)
    assert again.status_code == 404
    assert preview(grace, token_of(invitation)).status_code == 404


def test_an_existing_user_accepts_signed_in_as_the_invited_address(
    closed_app, smtp_server, owner_and_project
):
    ada, project = owner_and_project
    grace, mallory = closed_app.test_client(), closed_app.test_client()
    with closed_app.app_context():
        users.create_user("Grace Hopper", "grace@example.com", PASSWORD)
        users.create_user("Mallory", "mallory@example.com", PASSWORD)
    for client, email in ((grace, "grace@example.com"), (mallory, "mallory@example.com")):
        client.post("/api/v1/auth/login", json={"email": email, "password": PASSWORD})
    invitation = invite(ada, project["id"], "grace@example.com", "member")
    link, _ = mailed_link(closed_app, smtp_server)
    token = token_of({"url": link})
    assert preview(grace, token).get_json()["accountExists"] is True

    # Someone else's invitation: 403, and it stays pending.
    refused = accept(mallory, token)
    assert refused.status_code == 403 and "grace@example.com" in refused.get_json()["detail"]
    assert mallory.get(f"/api/v1/projects/{project['id']}").status_code == 404
    # Creating a second account for the address: 409.
    assert accept(closed_app.test_client(), token, name="G", password=PASSWORD).status_code == 409
    assert [i["id"] for i in pending(ada, project)] == [invitation["id"]]

    joined = accept(grace, token)
    assert joined.status_code == 200
    assert joined.get_json()["user"]["id"] == grace.get("/api/v1/auth/me").get_json()["id"]
    members = ada.get(f"/api/v1/projects/{project['id']}/members").get_json()
    assert [(m["email"], m["role"]) for m in members] == [
        ("ada@example.com", "owner"),
        ("grace@example.com", "member"),
    ]
    assert accept(grace, token).status_code == 404


def test_resend_renews_the_link_and_revoke_ends_it(closed_app, smtp_server, owner_and_project):
    ada, project = owner_and_project
    first = invite(ada, project["id"], "grace@example.com")
    resent = ada.post(f"/api/v1/invitations/{first['id']}/resend", headers=csrf(ada))
    assert resent.status_code == 200
    second = resent.get_json()
    assert second["id"] == first["id"] and second["url"] != first["url"]
    assert second["expiresAt"] >= first["expiresAt"]
    assert second["createdAt"] == first["createdAt"]
    send_due(closed_app)
    links = [INVITE_LINK.search(text_of(m))[0] for m in smtp_server.wait_for(2)]
    assert links == [first["url"], second["url"]]
    anonymous = closed_app.test_client()
    assert preview(anonymous, token_of(first)).status_code == 404
    assert preview(anonymous, token_of(second)).status_code == 200

    assert ada.delete(f"/api/v1/invitations/{first['id']}", headers=csrf(ada)).status_code == 204
    assert preview(anonymous, token_of(second)).status_code == 404
    assert accept(anonymous, token_of(second), name="G", password=PASSWORD).status_code == 404
    assert pending(ada, project) == []
    gone = ada.post(f"/api/v1/invitations/{first['id']}/resend", headers=csrf(ada))
    assert gone.status_code == 404


def test_an_expired_invitation_is_404_but_can_be_resent(closed_app, owner_and_project):
    ada, project = owner_and_project
    invitation = invite(ada, project["id"], "grace@example.com")
    with closed_app.app_context():
        db.session.execute(db.text("UPDATE invitations SET expires_at = created_at"))
        db.session.commit()
    anonymous = closed_app.test_client()
    assert preview(anonymous, token_of(invitation)).status_code == 404
    assert accept(anonymous, token_of(invitation), name="G", password=PASSWORD).status_code == 404
    # Still listed, so that the owner can send it again.
    [listed] = pending(ada, project)
    assert listed["expiresAt"] <= listed["createdAt"]
    renewed = ada.post(f"/api/v1/invitations/{invitation['id']}/resend", headers=csrf(ada))
    joined = accept(anonymous, token_of(renewed.get_json()), name="Grace", password=PASSWORD)
    assert joined.status_code == 201


def test_a_member_or_an_address_invited_already_is_409(closed_app, owner_and_project):
    ada, project = owner_and_project
    invite(ada, project["id"], "grace@example.com")
    for email in ("GRACE@example.com", "ada@example.com"):
        response = ada.post(
            f"/api/v1/projects/{project['id']}/invitations",
            json={"email": email},
            headers=csrf(ada),
        )
        assert response.status_code == 409 and response.get_json()["detail"]
    assert len(pending(ada, project)) == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"email": "grace@example.com", "role": "admin"}, "role"),
        ({"email": "not an address"}, "email"),
        ({"role": "member"}, "email"),
    ],
)
def test_an_invitation_needs_an_address_and_a_role(closed_app, owner_and_project, body, field):
    ada, project = owner_and_project
    response = ada.post(
        f"/api/v1/projects/{project['id']}/invitations", json=body, headers=csrf(ada)
    )
    assert response.status_code == 422 and field in response.get_json()["errors"]
    assert pending(ada, project) == []


def test_a_new_account_needs_a_name_and_a_good_password(closed_app, owner_and_project):
    ada, project = owner_and_project
    token = token_of(invite(ada, project["id"], "grace@example.com"))
    anonymous = closed_app.test_client()
    for account, field in (
        ({}, "name"),
        ({"name": "Grace"}, "password"),
        ({"name": "Grace", "password": "short"}, "password"),
    ):
        response = accept(anonymous, token, **account)
        assert response.status_code == 422 and field in response.get_json()["errors"]
    assert anonymous.get("/api/v1/auth/me").status_code == 401
    assert len(pending(ada, project)) == 1


def test_invitations_are_limited_per_owner_and_per_address(make_app):
    """Finding 5: with open registration anyone could make svc mail any address, and resend
    without end."""
    app = make_app(SVC_RATE_LIMIT_INVITE="4/hour", SVC_RATE_LIMIT_INVITE_ADDRESS="2/day")
    ada = app.test_client()
    register(ada)
    project = create_project(ada)
    base = f"/api/v1/projects/{project['id']}/invitations"

    def invite(email):
        return ada.post(base, json={"email": email, "role": "member"}, headers=csrf(ada))

    first = invite("victim@example.com")
    assert first.status_code == 201
    resend = f"/api/v1/invitations/{first.get_json()['id']}/resend"
    assert ada.post(resend, headers=csrf(ada)).status_code == 200
    again = ada.post(resend, headers=csrf(ada))
    assert again.status_code == 429 and again.get_json()["detail"]  # the address had its 2
    assert invite("grace@example.com").status_code == 201  # the owner's 4th try of the hour
    refused = invite("hedy@example.com")
    assert refused.status_code == 429 and "4 per 1 hour" in refused.get_json()["detail"]


def test_no_text_someone_typed_becomes_a_link_in_a_mail(mail_app, smtp_server):
    ada = mail_app.test_client()
    register(ada, name="Ada https://evil.example/login")
    project = create_project(ada, name="Shop http://evil.example/x")
    answer = ada.post(
        f"/api/v1/projects/{project['id']}/invitations",
        json={"email": "grace@example.com", "role": "member"},
        headers=csrf(ada),
    )
    assert answer.status_code == 201
    send_due(mail_app)
    [message] = smtp_server.wait_for(1)
    html = message.get_body(("html",)).get_content()
    assert 'href="https://evil.example' not in html and 'href="http://evil.example' not in html
    assert f'href="{answer.get_json()["url"]}"' in html  # svc's own link still is one
