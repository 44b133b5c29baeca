"""svc.services.reporting.report_changes.update, called directly for each kind of source: a
member, the reporter on their status page, a tracker. What each sets off is read back from
the rows the change's transaction wrote (the HTTP tests cover the same through the views)."""

import uuid

import pytest
from sqlalchemy import func, select, update

from harness.client import create_project, csrf, new_member, register
from svc.extensions import db
from svc.models import Notification, OutgoingMail, Report, User, WebhookDelivery
from svc.models.activity import CHANGED, REOPENED, REPORTER, ActivityEntry
from svc.models.integrations import (
    CLOSE,
    CLOSED,
    GITHUB,
    REOPEN,
    ExternalIssue,
    Integration,
    IntegrationCall,
)
from svc.services.reporting import report_changes
from tests.helpers import file_report, send_due


@pytest.fixture
def filed(mail_app, smtp_server):
    """Ada's project, which keeps reporters posted, linked to two GitHub integrations; its
    report WS-1 by rep@example.com, assigned to Grace, with an open issue in each."""
    ada = mail_app.test_client()
    register(ada)
    project = create_project(ada)
    grace = new_member(mail_app, ada, project["id"], "grace@example.com", "Grace Hopper")
    updates = {
        "settings": {
            "reporter_updates": {"enabled": True},
            "webhook_url": "https://hooks.example.com/svc",
        }
    }
    assert ada.patch(f"/api/v1/projects/{project['id']}", json=updates,
                     headers=csrf(ada)).status_code == 200  # fmt: skip
    report = file_report(ada, project["apiKey"], reporter_identifier="rep@example.com").get_json()
    assigned = ada.patch(f"/api/v1/reports/{report['id']}", json={"assignee_id": grace.user["id"]},
                         headers=csrf(ada))  # fmt: skip
    assert assigned.status_code == 200
    send_due(mail_app)
    with mail_app.app_context():
        report_row = db.session.get(Report, uuid.UUID(report["id"]))
        for name in ("one", "two"):
            integration = Integration(
                project_id=report_row.project_id, kind=GITHUB, name=name, config={},
                token_encrypted="", webhook_secret_encrypted="",
            )  # fmt: skip
            db.session.add(integration)
            db.session.flush()
            db.session.add(ExternalIssue(
                report_id=report_row.id, integration_id=integration.id, kind=GITHUB,
                remote_id=name, key=name, url="", address="",
            ))  # fmt: skip
        db.session.commit()
    return report["id"]


def change(app, report_id, source_of, **changes) -> tuple[dict, dict]:
    """Apply `changes` from the source `source_of(session)` makes; (what changed, the rows
    each table gained)."""
    tables = (ActivityEntry, WebhookDelivery, Notification, OutgoingMail, IntegrationCall)
    with app.app_context():
        before = {t: db.session.scalar(select(func.count()).select_from(t)) for t in tables}
        report = db.session.get(Report, uuid.UUID(report_id))
        changed = report_changes.update(report, changes, source_of())
        db.session.commit()
        after = {t: db.session.scalar(select(func.count()).select_from(t)) for t in tables}
    return changed, {t.__tablename__: after[t] - before[t] for t in tables}


def last_activity(app) -> ActivityEntry:
    with app.app_context():
        return db.session.scalars(
            select(ActivityEntry).order_by(ActivityEntry.at.desc()).limit(1)
        ).one()


def first_user() -> User:
    """Ada, the project's owner (the first account)."""
    return db.session.scalars(select(User).order_by(User.created_at).limit(1)).one()


def test_nothing_that_differs_sets_off_nothing(mail_app, filed):
    changed, gained = change(mail_app, filed, lambda: report_changes.member(first_user()),
                             status="new")  # fmt: skip
    assert changed == {}
    assert set(gained.values()) == {0}


def test_a_members_resolve_tells_everyone_and_every_tracker(mail_app, filed):
    changed, gained = change(mail_app, filed, lambda: report_changes.member(first_user()),
                             status="resolved")  # fmt: skip
    assert changed == {"status": {"from": "new", "to": "resolved"}}
    assert gained == {"report_activity": 1, "webhook_deliveries": 1, "notifications": 0,
                      "mail_outbox": 1, "integration_calls": 2}  # fmt: skip
    entry = last_activity(mail_app)
    assert (entry.kind, entry.via, entry.actor_id is not None) == (CHANGED, None, True)


def test_a_trackers_close_is_not_told_back_to_that_tracker(mail_app, filed):
    def from_tracker():
        one = db.session.scalars(select(Integration).where(Integration.name == "one")).one()
        return report_changes.tracker(one)

    _, gained = change(mail_app, filed, from_tracker, status="resolved")
    assert gained["integration_calls"] == 1
    assert gained["mail_outbox"] == 1  # the reporter hears of it, whoever closed it
    with mail_app.app_context():
        call = db.session.scalars(select(IntegrationCall)).one()
        told = db.session.get(Integration, call.integration_id)
        assert (told.name, call.action) == ("two", CLOSE)
    entry = last_activity(mail_app)
    assert (entry.kind, entry.via, entry.actor_id) == (CHANGED, GITHUB, None)


def test_the_reporters_reopen_tells_the_assignee_and_mails_nobody(mail_app, filed):
    change(mail_app, filed, lambda: report_changes.member(first_user()), status="resolved")
    send_due(mail_app)
    with mail_app.app_context():  # the trackers closed their issues as asked
        db.session.execute(update(ExternalIssue).values(state=CLOSED))
        db.session.commit()
    _, gained = change(mail_app, filed, lambda: report_changes.BY_REPORTER, status="new")
    assert gained == {"report_activity": 1, "webhook_deliveries": 1, "notifications": 1,
                      "mail_outbox": 0, "integration_calls": 2}  # fmt: skip
    entry = last_activity(mail_app)
    assert (entry.kind, entry.via, entry.actor_id) == (REOPENED, REPORTER, None)
    with mail_app.app_context():
        kinds = db.session.scalars(select(Notification.kind)).all()
        assert kinds.count(REOPENED) == 1
        calls = db.session.scalars(select(IntegrationCall.action)).all()
        assert sorted(calls) == [CLOSE, CLOSE, REOPEN, REOPEN]
