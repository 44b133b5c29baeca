"""Comments and the activity of a report (docs/api.md §8.7), through HTTP: who may write,
edit and delete; mentions that mail; every kind of activity entry."""

import pytest

from harness.client import create_project, csrf, new_member, register
from svc.extensions import db
from svc.services.team import notifications
from tests.helpers import file_report, send_due, text_of


@pytest.fixture
def web_shop_people(app):
    """Ada owns Web Shop with report WS-1; Grace and Mia are members, Vera a viewer; Mallory is
    outside."""
    ada = app.test_client()
    ada.user = register(ada)
    project = create_project(ada)
    people = {
        "ada": ada,
        "grace": new_member(app, ada, project["id"], "grace@example.com", "Grace Hopper"),
        "mia": new_member(app, ada, project["id"], "mia@example.com", "Mia Hamm"),
        "vera": new_member(app, ada, project["id"], "vera@example.com", "Vera Rubin", "viewer"),
        "project": project,
    }
    people["mallory"] = app.test_client()
    register(people["mallory"], email="mallory@example.com", name="Mallory")
    assert file_report(ada, project["apiKey"]).status_code == 201
    return people


def comment(client, body="Seen on iOS too", ref="WS-1"):
    return client.post(f"/api/v1/reports/{ref}/comments", json={"body": body}, headers=csrf(client))


def edit(client, comment_id, body):
    return client.patch(f"/api/v1/comments/{comment_id}", json={"body": body}, headers=csrf(client))


def remove(client, comment_id):
    return client.delete(f"/api/v1/comments/{comment_id}", headers=csrf(client))


def comments_of(client, ref="WS-1"):
    return client.get(f"/api/v1/reports/{ref}/comments").get_json()


def test_members_and_owners_write_everyone_reads(web_shop_people):
    grace, vera, mallory = (
        web_shop_people["grace"],
        web_shop_people["vera"],
        web_shop_people["mallory"],
    )
    response = comment(grace, "Seen on iOS too")
    assert response.status_code == 201
    body = response.get_json()
    assert set(body) == {
        "id", "reportId", "author", "body", "public", "fromReporter", "createdAt", "updatedAt"
    }  # fmt: skip
    assert (body["public"], body["fromReporter"]) == (False, False)
    assert body["author"] == {"id": grace.user["id"], "name": "Grace Hopper"}
    assert comment(web_shop_people["ada"], "Fixed in 2.4").status_code == 201

    refused = comment(vera, "me too")
    assert refused.status_code == 403 and refused.get_json()["detail"]
    assert [c["body"] for c in comments_of(vera)] == ["Seen on iOS too", "Fixed in 2.4"]
    assert comment(mallory).status_code == 404
    assert mallory.get("/api/v1/reports/WS-1/comments").status_code == 404


def test_authors_edit_their_own_owners_delete_any(web_shop_people):
    ada, grace, mia, vera = (
        web_shop_people["ada"],
        web_shop_people["grace"],
        web_shop_people["mia"],
        web_shop_people["vera"],
    )
    graces = comment(grace).get_json()
    # Only the author edits.
    for other in (ada, mia):
        assert edit(other, graces["id"], "rewritten").status_code == 403
    assert edit(vera, graces["id"], "rewritten").status_code == 403
    assert edit(web_shop_people["mallory"], graces["id"], "rewritten").status_code == 404
    edited = edit(grace, graces["id"], "Seen on iOS 17 too")
    assert edited.status_code == 200
    assert edited.get_json()["body"] == "Seen on iOS 17 too"
    assert edited.get_json()["updatedAt"] > graces["updatedAt"]
    # The author or an owner deletes; another member cannot.
    assert remove(mia, graces["id"]).status_code == 403
    assert remove(ada, graces["id"]).status_code == 204
    mias = comment(mia).get_json()
    assert remove(mia, mias["id"]).status_code == 204
    assert comments_of(ada) == []
    assert remove(ada, mias["id"]).status_code == 404


def test_an_author_who_became_a_viewer_can_no_longer_edit(web_shop_people):
    ada, grace = web_shop_people["ada"], web_shop_people["grace"]
    graces = comment(grace).get_json()
    ada.patch(
        f"/api/v1/projects/{web_shop_people['project']['id']}/members/{grace.user['id']}",
        json={"role": "viewer"},
        headers=csrf(ada),
    )
    assert edit(grace, graces["id"], "x").status_code == 403
    assert remove(grace, graces["id"]).status_code == 403


@pytest.mark.parametrize(
    ("body", "status"),
    [("", 422), ("   \n ", 422), ("x" * 10_000, 201), ("x" * 10_001, 422), ("<b>hi</b>", 201)],
)
def test_a_comment_is_plain_text_of_1_to_10000_characters(web_shop_people, body, status):
    response = comment(web_shop_people["ada"], body)
    assert response.status_code == status, response.get_json()
    if status == 422:
        assert "body" in response.get_json()["errors"]
        assert comments_of(web_shop_people["ada"]) == []
    else:
        assert comments_of(web_shop_people["ada"])[0]["body"] == body  # kept as it was written


def test_each_change_is_in_the_activity(web_shop_people):
    ada, grace, vera = web_shop_people["ada"], web_shop_people["grace"], web_shop_people["vera"]
    ada.patch(
        "/api/v1/reports/WS-1",
        json={"status": "in_progress", "assignee_id": grace.user["id"], "title": "Checkout"},
        headers=csrf(ada),
    )
    ada.patch("/api/v1/reports/WS-1", json={"status": "in_progress"}, headers=csrf(ada))  # no-op
    graces = comment(grace).get_json()
    remove(grace, graces["id"])

    entries = vera.get("/api/v1/reports/WS-1/activity").get_json()
    assert [entry["kind"] for entry in entries] == [
        "created",
        "changed",
        "commented",
        "comment_deleted",
    ]
    created, changed, commented, deleted = entries
    report = ada.get("/api/v1/reports/WS-1").get_json()
    assert (created["actor"], created["at"]) == (None, report["createdAt"])
    assert changed["actor"] == {"id": ada.user["id"], "name": "Ada Lovelace"}
    assert changed["changes"] == {
        "status": {"from": "new", "to": "in_progress"},
        "assigneeId": {"from": None, "to": grace.user["id"]},
        "title": {"from": "Checkout button does nothing", "to": "Checkout"},
    }
    assert "commentId" not in changed and "changes" not in commented
    assert commented["commentId"] == deleted["commentId"] == graces["id"]
    assert commented["actor"]["name"] == deleted["actor"]["name"] == "Grace Hopper"
    assert [entry["at"] for entry in entries] == sorted(entry["at"] for entry in entries)
    assert web_shop_people["mallory"].get("/api/v1/reports/WS-1/activity").status_code == 404


def test_a_deleted_report_takes_its_comments_and_activity(app, web_shop_people):
    ada = web_shop_people["ada"]
    comment(ada)
    ada.patch("/api/v1/reports/WS-1", json={"status": "closed"}, headers=csrf(ada))
    assert ada.delete("/api/v1/reports/WS-1", headers=csrf(ada)).status_code == 204
    with app.app_context():
        for table in ("comments", "report_activity"):
            assert db.session.execute(db.text(f"SELECT count(*) FROM {table}")).scalar() == 0


# --- mentions ------------------------------------------------------------------------------------


def test_mentions_mail_the_members_named(mail_app, smtp_server):
    ada = mail_app.test_client()
    ada.user = register(ada)
    project = create_project(ada)
    grace = new_member(mail_app, ada, project["id"], "grace@example.com", "Grace Hopper")
    new_member(mail_app, ada, project["id"], "vera@example.com", "Vera Rubin", "viewer")
    new_member(mail_app, ada, project["id"], "grace.h@example.com", "Grace")
    register(mail_app.test_client(), email="mallory@example.com", name="Mallory")
    file_report(ada, project["apiKey"], severity="low")
    send_due(mail_app)  # the invitations
    with smtp_server.lock:
        smtp_server.messages.clear()

    body = (
        "@grace hopper and @VERA@example.com, please look. Not @Mallory, not "
        "ada@example.com, and not me: @Ada Lovelace"
    )
    assert comment(grace, "thanks @Ada Lovelace").status_code == 201
    assert comment(ada, body).status_code == 201
    with mail_app.app_context():
        notifications.send_due()
    send_due(mail_app)
    received = {m["To"]: m for m in smtp_server.wait_for(3)}
    assert set(received) == {"ada@example.com", "grace@example.com", "vera@example.com"}
    mention = received["grace@example.com"]
    assert mention["Subject"] == "[WS-1] Ada Lovelace mentioned you: Checkout button does nothing"
    assert "Ada Lovelace mentioned you on a report of Web Shop" in text_of(mention)
    # "@grace hopper" is Grace Hopper, not the member named Grace.
    assert "grace.h@example.com" not in received
