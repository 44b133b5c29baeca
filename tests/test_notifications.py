"""Notifications by mail (docs/api.md §4): each person's choice per project decides who
hears of a new report; assignments are told; a burst becomes one summary; every mail has a
one-click unsubscribe. Mails go to a real SMTP server on loopback."""

import re
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from sqlalchemy import text

from harness.client import create_project, csrf, new_member, register
from svc.extensions import db
from svc.models.base import utcnow
from svc.services.team import notifications
from tests.helpers import file_report, send_due, text_of

TRACKING_ID = re.compile(r"\bWS-\d+\b")


@pytest.fixture
def web_shop_people(mail_app, smtp_server):
    """Ada owns Web Shop; Grace is a member, Vera a viewer, all with their default choices.
    The server starts empty (the invitations' mails are sent and forgotten)."""
    ada = mail_app.test_client()
    ada.user = register(ada)
    project = create_project(ada)
    people = {
        "ada": ada,
        "grace": new_member(mail_app, ada, project["id"], "grace@example.com", "Grace Hopper"),
        "vera": new_member(
            mail_app, ada, project["id"], "vera@example.com", "Vera Rubin", "viewer"
        ),
    }
    people["project"] = project
    assert send_due(mail_app) == [None, None]
    with smtp_server.lock:
        smtp_server.messages.clear()
    return people


def mail_out(app, now=None) -> list:
    """The scheduler's two jobs once: notifications into mails, then the mails sent."""
    with app.app_context():
        notifications.send_due(now)
    return send_due(app)


def received(smtp_server, since=0) -> list[tuple[str, str]]:
    return [(m["To"], m["Subject"]) for m in smtp_server.messages[since:]]


def tracking_ids(message) -> list[str]:
    return list(dict.fromkeys(TRACKING_ID.findall(text_of(message))))


def choose(client, project, choice):
    return client.put(
        "/api/v1/auth/me/notifications",
        json=[{"project_id": project["id"], "new_reports": choice}],
        headers=csrf(client),
    )


def report(web_shop_people, severity, **fields):
    response = file_report(
        web_shop_people["ada"], web_shop_people["project"]["apiKey"], severity=severity, **fields
    )
    assert response.status_code == 201
    return response.get_json()


def test_owners_default_to_high_and_critical_the_others_to_assigned(web_shop_people):
    project = web_shop_people["project"]
    for key, expected in (
        ("ada", "high_and_critical"),
        ("grace", "assigned"),
        ("vera", "assigned"),
    ):
        assert web_shop_people[key].get("/api/v1/auth/me/notifications").get_json() == [
            {"projectId": project["id"], "projectName": "Web Shop", "newReports": expected}
        ]


def test_choices_decide_who_hears_of_a_new_report(mail_app, smtp_server, web_shop_people):
    assert choose(web_shop_people["vera"], web_shop_people["project"], "all").status_code == 200
    report(web_shop_people, "low")
    mail_out(mail_app)
    assert received(smtp_server) == [
        ("vera@example.com", "[WS-1] New low report: Checkout button does nothing")
    ]

    report(web_shop_people, "critical", title="Payments\r\nBcc: everyone@example.com")
    mail_out(mail_app)
    assert sorted(to for to, _ in received(smtp_server, 1)) == [
        "ada@example.com",
        "vera@example.com",
    ]
    # A title cannot add header lines: it is folded into one line of the subject.
    assert smtp_server.messages[1]["Subject"] == (
        "[WS-2] New critical report: Payments Bcc: everyone@example.com"
    )
    assert smtp_server.messages[1]["Bcc"] is None

    assert choose(web_shop_people["ada"], web_shop_people["project"], "none").status_code == 200
    assert (
        choose(web_shop_people["vera"], web_shop_people["project"], "high_and_critical").status_code
        == 200
    )
    report(web_shop_people, "medium")
    report(web_shop_people, "high")
    mail_out(mail_app)
    assert received(smtp_server, 3) == [
        ("vera@example.com", "[WS-4] New high report: Checkout button does nothing")
    ]


def test_the_assignee_hears_of_it_unless_they_chose_nothing(mail_app, smtp_server, web_shop_people):
    ada, grace, vera = web_shop_people["ada"], web_shop_people["grace"], web_shop_people["vera"]
    filed = report(web_shop_people, "low")
    path = f"/api/v1/reports/{filed['trackingId']}"
    ada.patch(path, json={"assignee_id": grace.user["id"]}, headers=csrf(ada))
    mail_out(mail_app)
    [message] = smtp_server.messages
    assert (message["To"], message["Subject"]) == (
        "grace@example.com",
        "[WS-1] Assigned to you: Checkout button does nothing",
    )
    assert "Ada Lovelace assigned a report of Web Shop to you" in text_of(message)
    assert "https://bugs.example.com/reports/WS-1" in text_of(message)

    # Taking it oneself tells nobody; someone who chose nothing hears nothing.
    ada.patch(path, json={"assignee_id": ada.user["id"]}, headers=csrf(ada))
    choose(grace, web_shop_people["project"], "none")
    ada.patch(path, json={"assignee_id": grace.user["id"]}, headers=csrf(ada))
    mail_out(mail_app)
    assert len(smtp_server.messages) == 1
    assert vera.get("/api/v1/auth/me").status_code == 200  # (viewers cannot be assigned)


@pytest.mark.parametrize("read_at_once", [500, 3])
def test_a_burst_becomes_one_summary(
    mail_app, smtp_server, web_shop_people, monkeypatch, read_at_once
):
    """Its reports are read a few hundred per query (here also three: every one is named)."""
    monkeypatch.setattr(notifications, "_AT_ONCE", read_at_once)
    for number in range(8):
        report(web_shop_people, "critical", title=f"Outage {number}")
    mail_out(mail_app)
    [summary] = smtp_server.wait_for(1)
    assert summary["To"] == "ada@example.com" and summary["Subject"] == "8 updates from svc"
    assert tracking_ids(summary) == [f"WS-{n}" for n in range(1, 9)]
    # A summary's link is for every project.
    assert "No more mails about any project" in text_of(summary)
    assert summary["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"


def test_what_was_marked_meanwhile_is_not_mailed_again(
    mail_app, smtp_server, web_shop_people, monkeypatch
):
    """The mails are made before the transaction that queues them: a scheduler that lost its
    lease meanwhile finds the notifications marked by the one that took over, and queues
    nothing."""
    report(web_shop_people, "critical", title="Outage")
    made = notifications._mails_for

    def then_taken_over(*args):
        mails = made(*args)
        with db.engine.begin() as other:  # the scheduler that took the lease over
            other.execute(text("UPDATE notifications SET mailed_at = created_at"))
        return mails

    monkeypatch.setattr(notifications, "_mails_for", then_taken_over)
    with mail_app.app_context():
        assert notifications.send_due() == 0
    assert mail_out(mail_app) == []  # nothing queued, nothing left to mail


def test_past_five_mails_in_five_minutes_the_rest_wait_for_one_summary(
    mail_app, smtp_server, web_shop_people
):
    now = utcnow()
    for number in range(5):
        report(web_shop_people, "critical", title=f"Outage {number}")
        mail_out(mail_app, now)
    assert len(smtp_server.messages) == 5
    report(web_shop_people, "high", title="Another")
    report(web_shop_people, "critical", title="And another")
    mail_out(mail_app, now + timedelta(minutes=1))
    assert len(smtp_server.messages) == 5  # held: the window is full
    # Five minutes after the last mail went, however long sending them took.
    mail_out(mail_app, utcnow() + timedelta(minutes=5, seconds=1))
    assert len(smtp_server.wait_for(6)) == 6
    summary = smtp_server.messages[5]
    assert summary["Subject"] == "2 updates from svc"
    assert tracking_ids(summary) == ["WS-6", "WS-7"]
    mail_out(mail_app, now + timedelta(minutes=6))
    assert len(smtp_server.messages) == 6


def test_one_click_unsubscribe(mail_app, smtp_server, web_shop_people):
    ada = web_shop_people["ada"]
    report(web_shop_people, "critical")
    mail_out(mail_app)
    [message] = smtp_server.wait_for(1)
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    link = re.fullmatch(r"<(.+)>", message["List-Unsubscribe"])[1]
    assert link in text_of(message) and link.startswith("https://bugs.example.com/unsubscribe/")
    path = urlsplit(link).path

    # Opening the link changes nothing; a mail program's POST (RFC 8058) does.
    assert mail_app.test_client().get(path).status_code == 200
    assert ada.get("/api/v1/auth/me/notifications").get_json()[0]["newReports"] != "none"
    response = mail_app.test_client().post(
        path, data="List-Unsubscribe=One-Click", content_type="application/x-www-form-urlencoded"
    )
    assert response.status_code == 200
    assert response.get_json() == {"email": "ada@example.com", "projectName": "Web Shop"}
    assert ada.get("/api/v1/auth/me/notifications").get_json()[0]["newReports"] == "none"
    report(web_shop_people, "critical")
    mail_out(mail_app)
    assert len(smtp_server.messages) == 1

    forged = mail_app.test_client().post(path[:-3] + "abc")
    assert forged.status_code == 404 and forged.get_json()["detail"]


def test_choices_are_checked(mail_app, web_shop_people):
    grace, project = web_shop_people["grace"], web_shop_people["project"]
    theirs = create_project(web_shop_people["ada"], "Backend")
    refused = choose(grace, theirs, "all")
    assert refused.status_code == 404
    bad = choose(grace, project, "sometimes")
    assert bad.status_code == 422 and "0.new_reports" in bad.get_json()["errors"]
    not_a_list = grace.put(
        "/api/v1/auth/me/notifications",
        json={"project_id": project["id"], "new_reports": "all"},
        headers=csrf(grace),
    )
    assert not_a_list.status_code == 400
    # What GET answers can be sent back as it came.
    answer = grace.get("/api/v1/auth/me/notifications").get_json()
    answer[0]["newReports"] = "all"
    echoed = grace.put("/api/v1/auth/me/notifications", json=answer, headers=csrf(grace))
    assert echoed.status_code == 200 and echoed.get_json() == answer


def test_nobody_deactivated_or_outside_hears_anything(mail_app, smtp_server, web_shop_people):
    ada, grace = web_shop_people["ada"], web_shop_people["grace"]
    choose(grace, web_shop_people["project"], "all")
    ada.patch(f"/api/v1/admin/users/{grace.user['id']}", json={"active": False}, headers=csrf(ada))
    outsider = mail_app.test_client()
    register(outsider, email="mallory@example.com", name="Mallory")
    report(web_shop_people, "critical")
    mail_out(mail_app)
    assert received(smtp_server) == [
        ("ada@example.com", "[WS-1] New critical report: Checkout button does nothing")
    ]


def test_what_waited_for_someone_deactivated_since_goes_unsent(
    mail_app, smtp_server, web_shop_people
):
    """Deactivated after the report came and before the mail went: nothing goes to them, also
    once they are active again."""
    ada, grace = web_shop_people["ada"], web_shop_people["grace"]
    choose(grace, web_shop_people["project"], "all")
    report(web_shop_people, "critical")
    grace_admin = f"/api/v1/admin/users/{grace.user['id']}"
    ada.patch(grace_admin, json={"active": False}, headers=csrf(ada))
    mail_out(mail_app)
    ada.patch(grace_admin, json={"active": True}, headers=csrf(ada))
    mail_out(mail_app)
    assert [to for to, _ in received(smtp_server)] == ["ada@example.com"]


def test_a_deleted_report_takes_its_pending_notifications(mail_app, smtp_server, web_shop_people):
    ada = web_shop_people["ada"]
    filed = report(web_shop_people, "critical")
    ada.delete(f"/api/v1/reports/{filed['trackingId']}", headers=csrf(ada))
    assert mail_out(mail_app) == []
    assert smtp_server.messages == []


def test_a_member_removed_while_a_mail_waited_does_not_get_it(
    mail_app, smtp_server, web_shop_people
):
    """Finding 11: Grace was removed while her notifications were held for a summary."""
    ada, grace = web_shop_people["ada"], web_shop_people["grace"]
    choose(grace, web_shop_people["project"], "all")
    now = utcnow()
    for number in range(5):
        report(web_shop_people, "critical", title=f"Outage {number}")
        mail_out(mail_app, now)
    report(web_shop_people, "critical", title="Held for the summary")
    mail_out(mail_app, now + timedelta(minutes=1))
    held = len(smtp_server.messages)
    assert ("grace@example.com", "[WS-1] New critical report: Outage 0") in received(smtp_server)
    removed = ada.delete(
        f"/api/v1/projects/{web_shop_people['project']['id']}/members/{grace.user['id']}",
        headers=csrf(ada),
    )
    assert removed.status_code == 204
    # Five minutes after the last report was filed, however long filing them took.
    mail_out(mail_app, utcnow() + timedelta(minutes=5, seconds=1))
    to_grace = [to for to, _ in received(smtp_server, since=held) if to == "grace@example.com"]
    assert to_grace == []
    # Ada, still an owner, gets hers.
    assert [to for to, _ in received(smtp_server, since=held)] == ["ada@example.com"]
