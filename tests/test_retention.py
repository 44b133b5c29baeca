"""Retention, erasure of one reporter's data, usage (docs/api.md §7.4): deleting in batches
is SQL, so these run on each database."""

import base64
import json
import uuid
from datetime import timedelta

import pytest
from sqlalchemy import func, select, update

from harness.client import create_project, csrf, register
from svc import storage
from svc.extensions import db
from svc.models import (
    AuditEntry,
    Comment,
    Notification,
    OutgoingMail,
    Report,
    WebhookDelivery,
)
from svc.models.base import utcnow
from svc.services.reporting import retention
from tests.helpers import file_report, png_bytes, upload


@pytest.fixture
def the_owner(app):
    owner = app.test_client()
    owner.user = register(owner)
    return owner


def make_old(app, tracking_ids: list[str], days: int) -> None:
    """As if nobody had touched these reports for `days` days."""
    with app.app_context():
        for tracking_id in tracking_ids:
            number = int(tracking_id.split("-")[1])
            prefix = tracking_id.split("-")[0]
            db.session.execute(
                update(Report)
                .where(Report.number == number, Report.project.has(tracking_prefix=prefix))
                .values(updated_at=utcnow() - timedelta(days=days))
            )
        db.session.commit()


def file(the_owner, project, status: str = "open", **fields) -> dict:
    report = file_report(the_owner, project["apiKey"], **fields).get_json()
    if status != "open":
        changed = the_owner.patch(
            f"/api/v1/reports/{report['id']}", json={"status": status}, headers=csrf(the_owner)
        )
        assert changed.status_code == 200
    return report


def tracking_ids(app) -> set[str]:
    with app.app_context():
        return {report.tracking_id for report in db.session.scalars(select(Report))}


def test_the_setting_defaults_to_keeping_everything_and_is_checked(the_owner):
    project = create_project(the_owner, "Web Shop")
    assert project["settings"]["retention"] == {"days": None, "statuses": ["resolved", "closed"]}
    url = f"/api/v1/projects/{project['id']}"
    changed = the_owner.patch(
        url, json={"settings": {"retention": {"days": 30}}}, headers=csrf(the_owner)
    )
    assert changed.get_json()["settings"]["retention"] == {
        "days": 30,
        "statuses": ["resolved", "closed"],
    }
    for wrong in ({"days": 0}, {"days": 3651}, {"statuses": ["gone"]}, {"statuses": []}):
        refused = the_owner.patch(
            url, json={"settings": {"retention": wrong}}, headers=csrf(the_owner)
        )
        assert refused.status_code == 422, wrong
        assert "retention" in json.dumps(refused.get_json())


def test_the_hourly_pass_deletes_what_the_setting_names_in_batches(
    app, the_owner, monkeypatch, receiver
):
    monkeypatch.setattr(retention, "BATCH_REPORTS", 2)
    kept_long = create_project(the_owner, "Kept long")
    shop = create_project(the_owner, "Web Shop")
    hook = {"settings": {"webhook_url": "https://hooks.example.com/svc"}}
    the_owner.patch(f"/api/v1/projects/{shop['id']}", json=hook, headers=csrf(the_owner))
    key = upload(the_owner, shop["apiKey"], png_bytes()).get_json()["key"]
    old = [
        file(the_owner, shop, "resolved", screenshot_url=key),
        file(the_owner, shop, "closed"),
        file(the_owner, shop, "resolved"),
    ]
    the_owner.post(
        f"/api/v1/reports/{old[0]['id']}/comments", json={"body": "Fixed"}, headers=csrf(the_owner)
    )
    open_old = file(the_owner, shop)
    recent = file(the_owner, shop, "resolved")
    elsewhere = file(the_owner, kept_long, "resolved")
    make_old(app, [r["trackingId"] for r in (*old, open_old, elsewhere)], days=40)
    setting = {"settings": {"retention": {"days": 30}}}
    the_owner.patch(f"/api/v1/projects/{shop['id']}", json=setting, headers=csrf(the_owner))

    with app.app_context():
        removed = retention.apply_all()
        assert {str(project): count for project, count in removed.items()} == {shop["id"]: 3}
        assert storage.current_store().size_of(key) is None
        assert db.session.scalar(select(func.count()).select_from(Comment)) == 0
        pending = set(
            db.session.scalars(
                select(WebhookDelivery.report_id).where(WebhookDelivery.status == "pending")
            )
        )
        entry = db.session.scalar(
            select(AuditEntry).where(AuditEntry.action == "retention_applied")
        )
    assert tracking_ids(app) == {r["trackingId"] for r in (open_old, recent, elsewhere)}
    # Only the kept reports' deliveries wait; the deleted ones' were cancelled.
    assert {str(report_id) for report_id in pending} == {open_old["id"], recent["id"]}
    assert entry.detail["reports"] == 3 and entry.actor_id is None
    listed = the_owner.get(f"/api/v1/reports?project_id={shop['id']}").get_json()
    assert listed["total"] == 2
    assert the_owner.get(f"/api/v1/projects/{shop['id']}/usage").get_json()["reports"] == 2
    with app.app_context():  # a second pass finds nothing more
        assert retention.apply_all() == {}


def test_one_reporters_data_is_handed_over_then_erased_from_queues_too(app, the_owner):
    shop = create_project(the_owner, "Web Shop")
    hook = {"settings": {"webhook_url": "https://hooks.example.com/svc"}}
    the_owner.patch(f"/api/v1/projects/{shop['id']}", json=hook, headers=csrf(the_owner))
    shot = upload(the_owner, shop["apiKey"], png_bytes(3, 3)).get_json()["key"]
    theirs = [
        file(the_owner, shop, reporter_identifier="Jo@Example.com", screenshot_url=shot),
        file(the_owner, shop, reporter_identifier="jo@example.com", console_logs=[
            {"level": "error", "message": "boom", "timestamp": 1}
        ]),
    ]  # fmt: skip
    mentioned = file(the_owner, shop, reporter_identifier="sam@example.com",
                     description="Same as jo@example.com saw")  # fmt: skip
    project_id = uuid.UUID(shop["id"])
    with app.app_context():
        # A team mail about one of the project's reports (its notification names it), and one
        # that no report of the project caused (contract v6: the erase leaves it alone).
        about = OutgoingMail(
            to_address="ada@example.com",
            subject="New report from JO@example.com",
            text_body="Reported by jo@example.com",
            html_body="<p>Reported by jo@example.com</p>",
        )
        unrelated = OutgoingMail(to_address="jo@example.com", subject="Reset your password",
                                 text_body="For jo@example.com", html_body="")  # fmt: skip
        db.session.add_all([about, unrelated])
        db.session.flush()
        db.session.add(
            Notification(user_id=uuid.UUID(the_owner.user["id"]), project_id=project_id,
                         report_id=uuid.UUID(mentioned["id"]), kind="assigned", mail_id=about.id)
        )  # fmt: skip
        # A receipt already sent to the reporter goes too, not only the waiting ones.
        db.session.add(
            OutgoingMail(to_address="JO@example.com", subject="", text_body="", html_body="",
                         status="sent", reporter_project_id=project_id)
        )  # fmt: skip
        db.session.commit()
    base = f"/api/v1/projects/{shop['id']}/reporter-data"
    # The reporter replied on the report's status page.
    updates = {"settings": {"reporter_updates": {"enabled": True}}}
    the_owner.patch(f"/api/v1/projects/{shop['id']}", json=updates, headers=csrf(the_owner))
    link = the_owner.post(f"/api/v1/reports/{theirs[0]['id']}/status-link", headers=csrf(the_owner))
    token = link.get_json()["url"].rsplit("/", 1)[1]
    reply = {"body": "It happens every Monday"}
    assert app.test_client().post(f"/api/v1/status/{token}/replies", json=reply).status_code == 201

    exported = the_owner.get(f"{base}?reporter_identifier=JO@EXAMPLE.COM")
    assert exported.status_code == 200 and exported.mimetype == "application/x-ndjson"
    lines = [json.loads(line) for line in exported.data.decode().splitlines()]
    assert [line["id"] for line in lines] == [report["id"] for report in theirs]
    # Everything that is theirs: their replies, the report's files, and a
    # file name that says whose it is.
    assert [r["body"] for r in lines[0]["reporterReplies"]] == ["It happens every Monday"]
    [picture] = lines[0]["files"]
    assert picture["key"] == shot and base64.b64decode(picture["base64"]) == png_bytes(3, 3)
    assert lines[1]["reporterReplies"] == [] and lines[1]["files"] == []
    disposition = exported.headers["Content-Disposition"]
    assert disposition == 'attachment; filename="svc-reporter-data-JO@EXAMPLE.COM.ndjson"'

    assert lines[1]["consoleLogs"][0]["message"] == "boom"

    erased = the_owner.post(
        f"{base}/erase", json={"reporter_identifier": "jo@example.com"}, headers=csrf(the_owner)
    )
    assert erased.status_code == 200 and erased.get_json() == {"reports": 2}
    assert tracking_ids(app) == {mentioned["trackingId"]}
    with app.app_context():
        [mail] = db.session.scalars(select(OutgoingMail).where(OutgoingMail.id == about.id)).all()
        kept = db.session.get(OutgoingMail, unrelated.id)
        assert db.session.scalar(select(func.count()).select_from(OutgoingMail)) == 2
        payloads = [d.payload for d in db.session.scalars(select(WebhookDelivery))]
        entry = db.session.scalar(
            select(AuditEntry).where(AuditEntry.action == "reporter_data_erased")
        )
    assert "jo@example.com" not in (mail.subject + mail.text_body + mail.html_body).lower()
    assert "[erased]" in mail.subject
    assert (kept.to_address, kept.text_body) == ("jo@example.com", "For jo@example.com")
    assert all("jo@example.com" not in payload.lower() for payload in payloads)
    assert entry.detail == {"reports": 2}
    refused = the_owner.post(f"{base}/erase", json={}, headers=csrf(the_owner))
    assert refused.status_code == 422


def test_usage_of_a_project_and_of_the_instance(app, the_owner):
    shop = create_project(the_owner, "Web Shop")
    create_project(the_owner, "Empty")
    key = upload(the_owner, shop["apiKey"], png_bytes(3, 3)).get_json()["key"]
    report = file(the_owner, shop, screenshot_url=key)
    the_owner.post(
        f"/api/v1/reports/{report['id']}/comments", json={"body": "Seen"}, headers=csrf(the_owner)
    )

    usage = the_owner.get(f"/api/v1/projects/{shop['id']}/usage").get_json()
    assert usage == {
        "reports": 1,
        "comments": 1,
        "objects": {"count": 1, "bytes": len(png_bytes(3, 3))},
        "oldestReportAt": report["createdAt"],
    }
    instance = the_owner.get("/api/v1/admin/usage").get_json()  # the first account is an admin
    assert [row["name"] for row in instance["projects"]] == ["Empty", "Web Shop"]
    assert instance["totals"] == {
        "reports": 1,
        "objects": {"count": 1, "bytes": len(png_bytes(3, 3))},
    }
    assert instance["database"]["bytes"] > 0
    outsider = app.test_client()
    register(outsider, email="grace@example.com", name="Grace Hopper")
    assert outsider.get("/api/v1/admin/usage").status_code == 403
    assert outsider.get(f"/api/v1/projects/{shop['id']}/usage").status_code == 404
