"""Projects and teams: docs/api.md §7."""

import base64
import re
import time
import uuid

import pytest
from sqlalchemy import func, select

from harness.client import add_to_project, create_project, csrf, register
from svc.extensions import db
from svc.models import Membership, Project
from svc.services.projects import derive_tracking_prefix
from tests.helpers import VALID_BODIES, VALID_QUERIES, WIDGET_DEFAULTS

API_KEY = re.compile(r"^svc_pub_[0-9A-Za-z]{32,}$")
PROJECT_FIELDS = {
    "id",
    "name",
    "trackingPrefix",
    "apiKey",
    "webhookSecret",
    "role",
    "settings",
    "createdAt",
    "updatedAt",
}


def patch(client, project_id, body):
    return client.patch(f"/api/v1/projects/{project_id}", json=body, headers=csrf(client))


@pytest.fixture
def member_and_outsider(app, user_client, other_client):
    """A project owned by user_client with other_client as a member, and an outsider."""
    project = create_project(user_client, "Web Shop")
    add_to_project(user_client, project["id"], other_client, "grace@example.com")
    outsider = app.test_client()
    outsider.user = register(outsider, email="mallory@example.com", name="Mallory")
    return project, user_client, other_client, outsider


# --- the project object -------------------------------------------------------------------------


def test_create_returns_the_owners_view(user_client):
    response = user_client.post(
        "/api/v1/projects", json={"name": " Web Shop "}, headers=csrf(user_client)
    )
    assert response.status_code == 201
    project = response.get_json()
    assert set(project) == PROJECT_FIELDS
    assert response.headers["Location"] == f"/api/v1/projects/{project['id']}"
    assert project["name"] == "Web Shop" and project["role"] == "owner"
    assert project["trackingPrefix"] == "WS"
    assert API_KEY.match(project["apiKey"])
    assert project["webhookSecret"].startswith("whsec_")
    assert len(base64.b64decode(project["webhookSecret"][len("whsec_") :])) == 32
    assert project["settings"] == {
        "webhookUrl": None,
        "webhookFormat": "json",
        "allowedOrigins": [],
        "widget": WIDGET_DEFAULTS,
        "retention": {"days": None, "statuses": ["resolved", "closed"]},
        "reporterUpdates": {"enabled": False, "events": ["received", "resolved", "public_comment"]},
        "repro": {"origin": None, "auto": False, "timeoutSeconds": 60},
    }
    assert project["createdAt"] == project["updatedAt"]


def test_member_view_has_no_webhook_secret(member_and_outsider):
    project, _, member, _ = member_and_outsider
    seen = member.get(f"/api/v1/projects/{project['id']}").get_json()
    assert seen["role"] == "member" and "webhookSecret" not in seen
    assert seen["apiKey"] == project["apiKey"]


def test_only_owners_see_the_webhook_url(member_and_outsider):
    """For Slack and Discord the address is itself a credential (docs/api.md §12)."""
    project, owner, member, _ = member_and_outsider
    hook = "https://hooks.slack.com/services/T000/B000/XXXXXXXX"
    owner.patch(
        f"/api/v1/projects/{project['id']}",
        json={"settings": {"webhook_url": hook}},
        headers=csrf(owner),
    )
    assert (
        owner.get(f"/api/v1/projects/{project['id']}").get_json()["settings"]["webhookUrl"] == hook
    )
    seen = member.get(f"/api/v1/projects/{project['id']}").get_json()["settings"]
    assert seen["webhookUrl"] is None and seen["webhookFormat"] == "slack"
    (listed,) = member.get("/api/v1/projects").get_json()
    assert listed["settings"]["webhookUrl"] is None


def test_list_never_shows_the_webhook_secret(member_and_outsider):
    _, owner, member, outsider = member_and_outsider
    create_project(member, "Grace's Own")
    owned = owner.get("/api/v1/projects").get_json()
    assert [(p["name"], p["role"]) for p in owned] == [("Web Shop", "owner")]
    listed = member.get("/api/v1/projects").get_json()
    assert [(p["name"], p["role"]) for p in listed] == [
        ("Grace's Own", "owner"),
        ("Web Shop", "member"),
    ]
    assert all("webhookSecret" not in p for p in owned + listed)
    assert outsider.get("/api/v1/projects").get_json() == []


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({}, "name"),
        ({"name": ""}, "name"),
        ({"name": " "}, "name"),
        ({"name": "x" * 101}, "name"),
        ({"name": "Shop", "tracking_prefix": "ws"}, "tracking_prefix"),
        ({"name": "Shop", "tracking_prefix": "W"}, "tracking_prefix"),
        ({"name": "Shop", "tracking_prefix": "WEBSHOPABCD"}, "tracking_prefix"),
        ({"name": "Shop", "tracking_prefix": "1WS"}, "tracking_prefix"),
        ({"name": "Shop", "tracking_prefix": "W-S"}, "tracking_prefix"),
        ({"name": "Shop", "owner_id": str(uuid.uuid4())}, "owner_id"),
    ],
)
def test_create_validation(user_client, payload, field):
    response = user_client.post("/api/v1/projects", json=payload, headers=csrf(user_client))
    assert response.status_code == 422
    assert field in response.get_json()["errors"]


# --- tracking prefixes --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "prefix"),
    [
        ("Web Shop", "WS"),
        ("my web shop", "MWS"),
        ("customer-portal v2", "CPV"),
        ("Backend", "BAC"),
        ("r2d2", "R2D"),
        ("3D Printer", "BUG"),  # digit first
        ("42", "BUG"),
        ("X", "BUG"),  # fewer than two characters
        ("Été Boutique", "EB"),  # accents folded to ASCII
        ("Ünïcødé", "UNI"),
        ("日本語", "BUG"),  # nothing ASCII left
        ("a b c d e f g h i j k l", "ABCDEFGHIJ"),
    ],
)
def test_prefix_derivation(name, prefix):
    assert derive_tracking_prefix(name) == prefix


def test_derived_prefix_gets_a_number_while_taken(user_client, other_client):
    prefixes = [
        create_project(user_client, "Web Shop")["trackingPrefix"],
        create_project(other_client, "Wild Sheep")["trackingPrefix"],
        create_project(user_client, "web shop")["trackingPrefix"],
    ]
    assert prefixes == ["WS", "WS2", "WS3"]


def test_numbered_prefix_stays_within_ten_characters(user_client):
    first = create_project(user_client, "a b c d e f g h i j")["trackingPrefix"]
    second = create_project(user_client, "a b c d e f g h i j")["trackingPrefix"]
    assert (first, second) == ("ABCDEFGHIJ", "ABCDEFGHI2")


def test_explicit_prefix_is_used_and_unique_in_the_instance(user_client, other_client):
    assert create_project(user_client, "Shop", tracking_prefix="SHOP")["trackingPrefix"] == "SHOP"
    response = other_client.post(
        "/api/v1/projects",
        headers=csrf(other_client),
        json={"name": "Other", "tracking_prefix": "SHOP"},
    )
    assert response.status_code == 409
    assert "SHOP" in response.get_json()["detail"]


def test_prefix_can_change_to_a_free_one(user_client, other_client):
    create_project(other_client, "Taken", tracking_prefix="TAKEN")
    project = create_project(user_client, "Shop")
    response = patch(user_client, project["id"], {"tracking_prefix": "STORE"})
    assert response.status_code == 200 and response.get_json()["trackingPrefix"] == "STORE"
    conflict = patch(user_client, project["id"], {"tracking_prefix": "TAKEN"})
    assert conflict.status_code == 409
    assert (
        user_client.get(f"/api/v1/projects/{project['id']}").get_json()["trackingPrefix"] == "STORE"
    )


# --- settings -----------------------------------------------------------------------------------


def test_patch_merges_settings(user_client):
    project = create_project(user_client, "Shop")
    patch(
        user_client,
        project["id"],
        {
            "settings": {
                "webhook_url": "https://hooks.example.com/svc",
                "allowed_origins": ["https://a.example"],
            }
        },
    )
    response = patch(user_client, project["id"], {"settings": {"webhook_format": "slack"}})
    assert response.status_code == 200
    assert response.get_json()["settings"] == {
        "webhookUrl": "https://hooks.example.com/svc",
        "webhookFormat": "slack",
        "allowedOrigins": ["https://a.example"],
        "widget": WIDGET_DEFAULTS,
        "retention": {"days": None, "statuses": ["resolved", "closed"]},
        "reporterUpdates": {"enabled": False, "events": ["received", "resolved", "public_comment"]},
        "repro": {"origin": None, "auto": False, "timeoutSeconds": 60},
    }
    renamed = patch(user_client, project["id"], {"name": "Store"}).get_json()
    assert renamed["name"] == "Store"
    assert renamed["settings"]["webhookUrl"] == "https://hooks.example.com/svc"


def test_interface_camel_case_settings_are_accepted(user_client):
    project = create_project(user_client, "Shop")
    response = patch(
        user_client,
        project["id"],
        {
            "settings": {
                "webhookUrl": "https://hooks.example.com/a",
                "webhookFormat": "discord",
                "allowedOrigins": ["https://shop.example.com"],
            }
        },
    )
    assert response.status_code == 200
    assert response.get_json()["settings"] == {
        "webhookUrl": "https://hooks.example.com/a",
        "webhookFormat": "discord",
        "allowedOrigins": ["https://shop.example.com"],
        "widget": WIDGET_DEFAULTS,
        "retention": {"days": None, "statuses": ["resolved", "closed"]},
        "reporterUpdates": {"enabled": False, "events": ["received", "resolved", "public_comment"]},
        "repro": {"origin": None, "auto": False, "timeoutSeconds": 60},
    }


def test_alias_and_name_together_is_422(user_client):
    project = create_project(user_client, "Shop")
    response = patch(
        user_client,
        project["id"],
        {"settings": {"webhookUrl": "https://a.example/x", "webhook_url": "https://b.example/y"}},
    )
    assert response.status_code == 422


@pytest.mark.parametrize(
    ("settings", "error_key"),
    [
        ({"webhook_url": "http://hooks.example.com/x"}, "settings.webhook_url"),
        ({"webhookUrl": "http://hooks.example.com/x"}, "settings.webhookUrl"),
        ({"webhook_url": "ftp://hooks.example.com/x"}, "settings.webhook_url"),
        ({"webhook_url": "hooks.example.com/x"}, "settings.webhook_url"),
        ({"webhook_url": "https://"}, "settings.webhook_url"),
        ({"webhook_url": "https://exa mple.com/"}, "settings.webhook_url"),
        ({"webhook_url": "https://example.com/" + "x" * 2048}, "settings.webhook_url"),
        ({"webhook_url": 42}, "settings.webhook_url"),
        ({"webhook_format": "teams"}, "settings.webhook_format"),
        ({"allowed_origins": "https://a.example"}, "settings.allowed_origins"),
        ({"allowed_origins": ["https://a.example/path"]}, "settings.allowed_origins.0"),
        ({"allowed_origins": ["https://ok.example", "*"]}, "settings.allowed_origins.1"),
        ({"allowed_origins": ["a.example"]}, "settings.allowed_origins.0"),
        ({"allowed_origins": ["https://a.example?x=1"]}, "settings.allowed_origins.0"),
        ({"allowed_origins": ["https://a.example:99999"]}, "settings.allowed_origins.0"),
        ({"colour": "red"}, "settings.colour"),
    ],
)
def test_settings_validation(user_client, settings, error_key):
    project = create_project(user_client, "Shop")
    response = patch(user_client, project["id"], {"settings": settings})
    assert response.status_code == 422
    assert error_key in response.get_json()["errors"]


def test_http_webhooks_only_when_allowed(make_app):
    client = make_app(SVC_WEBHOOK_ALLOW_HTTP="true").test_client()
    register(client)
    project = create_project(client, "Shop")
    response = patch(client, project["id"], {"settings": {"webhook_url": "http://127.0.0.1:9/x"}})
    assert response.status_code == 200
    assert response.get_json()["settings"]["webhookUrl"] == "http://127.0.0.1:9/x"


def test_webhook_url_can_be_cleared(user_client):
    project = create_project(user_client, "Shop")
    patch(user_client, project["id"], {"settings": {"webhook_url": "https://a.example/x"}})
    cleared = patch(user_client, project["id"], {"settings": {"webhook_url": None}})
    assert cleared.get_json()["settings"]["webhookUrl"] is None


@pytest.mark.parametrize(
    ("url", "detected"),
    [
        ("https://hooks.slack.com/services/T0/B0/XYZ", "slack"),
        ("https://discord.com/api/webhooks/1/abc", "discord"),
        ("https://discordapp.com/api/webhooks/1/abc", "discord"),
        ("https://discord.com/channels/1/2", "json"),
        ("https://hooks.example.com/slack", "json"),
        ("https://hooks.slack.com.evil.example/services/x", "json"),
    ],
)
def test_webhook_format_is_detected_from_the_url(user_client, url, detected):
    project = create_project(user_client, "Shop")
    response = patch(user_client, project["id"], {"settings": {"webhook_url": url}})
    assert response.get_json()["settings"]["webhookFormat"] == detected


def test_explicit_format_wins_and_null_returns_to_detection(user_client):
    project = create_project(user_client, "Shop")
    url = "https://hooks.slack.com/services/T0/B0/XYZ"
    forced = patch(
        user_client, project["id"], {"settings": {"webhook_url": url, "webhook_format": "json"}}
    )
    assert forced.get_json()["settings"]["webhookFormat"] == "json"
    detected = patch(user_client, project["id"], {"settings": {"webhook_format": None}})
    assert detected.get_json()["settings"]["webhookFormat"] == "slack"


def test_allowed_origins_are_normalised(user_client):
    project = create_project(user_client, "Shop")
    response = patch(
        user_client,
        project["id"],
        {
            "settings": {
                "allowed_origins": [
                    "https://Shop.Example.com/",
                    "http://localhost:3000",
                    "https://shop.example.com",
                ]
            }
        },
    )
    assert response.get_json()["settings"]["allowedOrigins"] == [
        "https://shop.example.com",
        "http://localhost:3000",
    ]


def test_updated_at_moves_only_when_something_changed(user_client):
    project = create_project(user_client, "Shop")
    same = patch(user_client, project["id"], {"name": "Shop"}).get_json()
    assert same["updatedAt"] == project["updatedAt"]
    time.sleep(0.002)  # the API shows milliseconds
    changed = patch(user_client, project["id"], {"name": "Store"}).get_json()
    assert changed["updatedAt"] > project["updatedAt"]


# --- keys and secrets ---------------------------------------------------------------------------


def test_rotate_api_key(app, user_client):
    project = create_project(user_client, "Shop")
    response = user_client.post(
        f"/api/v1/projects/{project['id']}/rotate-api-key", headers=csrf(user_client)
    )
    assert response.status_code == 200
    rotated = response.get_json()
    assert API_KEY.match(rotated["apiKey"]) and rotated["apiKey"] != project["apiKey"]
    assert rotated["webhookSecret"] == project["webhookSecret"]
    with app.app_context():
        stored = db.session.scalar(select(Project.api_key))
    assert stored == rotated["apiKey"]


def test_rotate_webhook_secret(user_client):
    project = create_project(user_client, "Shop")
    response = user_client.post(
        f"/api/v1/projects/{project['id']}/rotate-webhook-secret", headers=csrf(user_client)
    )
    assert response.status_code == 200
    rotated = response.get_json()
    assert rotated["webhookSecret"].startswith("whsec_")
    assert rotated["webhookSecret"] != project["webhookSecret"]
    assert rotated["apiKey"] == project["apiKey"]


# --- members ------------------------------------------------------------------------------------


def test_list_members(member_and_outsider):
    project, owner, member, _ = member_and_outsider
    members = member.get(f"/api/v1/projects/{project['id']}/members").get_json()
    assert [(m["email"], m["role"]) for m in members] == [
        ("ada@example.com", "owner"),
        ("grace@example.com", "member"),
    ]
    assert set(members[1]) == {"userId", "name", "email", "role", "addedAt"}
    assert members[1]["userId"] == member.user["id"] and members[1]["name"] == "Grace Hopper"
    assert owner.get(f"/api/v1/projects/{project['id']}/members").get_json() == members


def test_members_join_by_invitation_only(member_and_outsider):
    project, owner, _, outsider = member_and_outsider
    response = owner.post(
        f"/api/v1/projects/{project['id']}/members",
        json={"email": "mallory@example.com"},
        headers=csrf(owner),
    )
    assert response.status_code == 405 and response.get_json()["detail"]
    assert outsider.get(f"/api/v1/projects/{project['id']}").status_code == 404


def test_remove_member_ends_their_access(member_and_outsider):
    project, owner, member, _ = member_and_outsider
    response = owner.delete(
        f"/api/v1/projects/{project['id']}/members/{member.user['id']}", headers=csrf(owner)
    )
    assert response.status_code == 204
    assert member.get(f"/api/v1/projects/{project['id']}").status_code == 404
    assert member.get("/api/v1/projects").get_json() == []


def test_the_last_owner_can_neither_leave_nor_be_removed(member_and_outsider):
    project, owner, _, _ = member_and_outsider
    response = owner.delete(
        f"/api/v1/projects/{project['id']}/members/{owner.user['id']}", headers=csrf(owner)
    )
    assert response.status_code == 409 and "owner" in response.get_json()["detail"]
    assert owner.get(f"/api/v1/projects/{project['id']}").get_json()["role"] == "owner"


def test_remove_someone_who_is_not_a_member_is_404(member_and_outsider):
    project, owner, _, outsider = member_and_outsider
    response = owner.delete(
        f"/api/v1/projects/{project['id']}/members/{outsider.user['id']}", headers=csrf(owner)
    )
    assert response.status_code == 404


# --- who may do what ----------------------------------------------------------------------------


def owner_only_requests(project_id, owner_id):
    base = f"/api/v1/projects/{project_id}"
    return [
        ("PATCH", base, {"name": "Mine now"}),
        ("DELETE", base, None),
        ("POST", f"{base}/rotate-api-key", None),
        ("POST", f"{base}/rotate-webhook-secret", None),
        ("POST", f"{base}/invitations", {"email": "mallory@example.com"}),
        ("PATCH", f"{base}/members/{owner_id}", {"role": "member"}),
        ("DELETE", f"{base}/members/{owner_id}", None),
    ]


def test_member_gets_403_on_every_owner_only_action(member_and_outsider):
    project, owner, member, _ = member_and_outsider
    for method, path, body in owner_only_requests(project["id"], owner.user["id"]):
        response = member.open(path, method=method, json=body, headers=csrf(member))
        assert response.status_code == 403, (method, path)
        assert response.get_json()["detail"]
    after = owner.get(f"/api/v1/projects/{project['id']}").get_json()
    assert (after["name"], after["apiKey"], after["webhookSecret"]) == (
        project["name"],
        project["apiKey"],
        project["webhookSecret"],
    )
    assert len(owner.get(f"/api/v1/projects/{project['id']}/members").get_json()) == 2


def project_routes(app):
    """Every route below /api/v1/projects/<project_id>, from the route table itself, so that a
    new endpoint cannot escape the isolation test."""
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith("/api/v1/projects/<uuid:project_id>"):
            for method in rule.methods - {"HEAD", "OPTIONS"}:
                yield method, rule


def test_outsider_gets_404_on_every_project_endpoint(app, member_and_outsider):
    project, owner, member, outsider = member_and_outsider
    checked = 0
    for method, rule in project_routes(app):
        path = rule.build(
            {
                "project_id": uuid.UUID(project["id"]),
                "user_id": uuid.UUID(member.user["id"]),
                "delivery_id": uuid.uuid4(),
            },
            append_unknown=False,
        )[1] + VALID_QUERIES.get(rule.rule, "")
        body = VALID_BODIES.get((rule.rule, method))
        response = outsider.open(path, method=method, json=body, headers=csrf(outsider))
        assert response.status_code == 404, (method, path, response.get_json())
        assert response.get_json() == {"detail": "Project not found"}
        checked += 1
    assert checked >= 10
    assert owner.get(f"/api/v1/projects/{project['id']}").get_json()["name"] == "Web Shop"


def test_unknown_project_is_404(user_client):
    unknown = uuid.uuid4()
    assert user_client.get(f"/api/v1/projects/{unknown}").status_code == 404
    assert user_client.get("/api/v1/projects/not-a-uuid").status_code == 404


def test_project_endpoints_need_a_credential(client):
    assert client.get("/api/v1/projects").status_code == 401
    assert client.post("/api/v1/projects", json={"name": "x"}).status_code == 401


def test_delete_project_removes_what_belongs_to_it(app, member_and_outsider):
    project, owner, member, _ = member_and_outsider
    response = owner.delete(f"/api/v1/projects/{project['id']}", headers=csrf(owner))
    assert response.status_code == 204
    assert owner.get(f"/api/v1/projects/{project['id']}").status_code == 404
    assert member.get("/api/v1/projects").get_json() == []
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(Membership)) == 0
        assert db.session.scalar(select(func.count()).select_from(Project)) == 0
