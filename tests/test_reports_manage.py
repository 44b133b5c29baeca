"""Get, update and delete a report by id or tracking id (docs/api.md §8.5)."""

import time
import uuid

import pytest

from harness.client import add_to_project, create_pat, create_project, csrf, register
from svc.extensions import db
from svc.models import User
from svc.services.reporting import reports
from tests.helpers import file_report


@pytest.fixture
def web_shop(user_client):
    return create_project(user_client, "Web Shop")


@pytest.fixture
def report(user_client, web_shop):
    """The report as it is once filed and fanned out (signed: its filing's answer had none)."""
    filed = file_report(user_client, web_shop["apiKey"], console_logs=[{"message": "boom"}])
    return user_client.get(f"/api/v1/reports/{filed.get_json()['id']}").get_json()


def patch(client, reference, body):
    return client.patch(f"/api/v1/reports/{reference}", json=body, headers=csrf(client))


def test_get_by_id_and_by_tracking_id(user_client, report):
    by_id = user_client.get(f"/api/v1/reports/{report['id']}")
    by_tracking_id = user_client.get("/api/v1/reports/WS-1")
    assert by_id.status_code == by_tracking_id.status_code == 200
    assert by_id.get_json() == by_tracking_id.get_json() == report
    assert user_client.get("/api/v1/reports/ws-1").get_json()["id"] == report["id"]


@pytest.mark.parametrize(
    "reference",
    [
        "WS-2",
        "WS-0",
        "XX-1",
        "not-an-id",
        "WS-01",
        "0b7e8f4e-6a0c-4c1e-9d53-2f1a5c3b7d90",
        "WS-99999999999",
    ],
)
def test_unknown_reports_are_404(user_client, report, reference):
    response = user_client.get(f"/api/v1/reports/{reference}")
    assert response.status_code == 404
    assert response.get_json() == {"detail": "Report not found"}


def test_outsiders_get_404_everywhere(app, report):
    outsider = app.test_client()
    register(outsider, email="mallory@example.com")
    for reference in (report["id"], "WS-1"):
        assert outsider.get(f"/api/v1/reports/{reference}").status_code == 404
        assert patch(outsider, reference, {"status": "closed"}).status_code == 404
        assert (
            outsider.delete(f"/api/v1/reports/{reference}", headers=csrf(outsider)).status_code
            == 404
        )


def test_members_work_the_reports(user_client, other_client, web_shop, report):
    add_to_project(user_client, web_shop["id"], other_client, "grace@example.com")
    assert other_client.get("/api/v1/reports/WS-1").status_code == 200
    assert patch(other_client, "WS-1", {"status": "in_progress"}).status_code == 200
    assert (
        other_client.delete("/api/v1/reports/WS-1", headers=csrf(other_client)).status_code == 204
    )


def test_patch_every_field(user_client, report):
    time.sleep(0.002)  # the API shows milliseconds
    response = patch(
        user_client,
        "WS-1",
        {
            "status": "in_progress",
            "severity": "critical",
            "category": "crash",
            "title": "  New title ",
            "description": "More detail",
            "assignee_id": user_client.user["id"],
        },
    )
    assert response.status_code == 200
    updated = response.get_json()
    assert (
        updated["status"],
        updated["severity"],
        updated["category"],
        updated["title"],
        updated["description"],
        updated["assigneeId"],
    ) == ("in_progress", "critical", "crash", "New title", "More detail", user_client.user["id"])
    assert updated["updatedAt"] > report["updatedAt"]
    assert updated["createdAt"] == report["createdAt"]
    assert updated["consoleLogs"] == [{"message": "boom"}]
    assert user_client.get("/api/v1/reports/WS-1").get_json() == updated


@pytest.mark.parametrize("status", ["new", "in_progress", "resolved", "closed"])
def test_any_status_may_follow_any(user_client, report, status):
    for step in ("closed", status, "new", status):
        assert patch(user_client, "WS-1", {"status": step}).get_json()["status"] == step


def test_no_op_patch_changes_nothing(user_client, report):
    response = patch(user_client, "WS-1", {"status": "new", "severity": "high"})
    assert response.status_code == 200
    assert response.get_json() == report
    assert patch(user_client, "WS-1", {}).get_json() == report


def test_changes_are_recorded(app, user_client, report):
    with app.test_request_context():
        user = db.session.get(User, uuid.UUID(user_client.user["id"]))
        _, changes = reports.update(
            user, "WS-1", {"status": "resolved", "severity": "high", "assignee_id": user.id}
        )
        assert changes == {
            "status": {"from": "new", "to": "resolved"},
            "assigneeId": {"from": None, "to": user.id},
        }
        _, none = reports.update(user, "WS-1", {"status": "resolved"})
        assert none == {}


def test_assignee_must_belong_to_the_project(user_client, other_client, web_shop, report):
    outsider = patch(user_client, "WS-1", {"assignee_id": other_client.user["id"]})
    assert outsider.status_code == 422 and "assignee_id" in outsider.get_json()["errors"]
    unknown = patch(user_client, "WS-1", {"assignee_id": str(uuid.uuid4())})
    assert unknown.status_code == 422
    add_to_project(user_client, web_shop["id"], other_client, "grace@example.com")
    member = patch(user_client, "WS-1", {"assignee_id": other_client.user["id"]})
    assert member.get_json()["assigneeId"] == other_client.user["id"]
    cleared = patch(user_client, "WS-1", {"assignee_id": None})
    assert cleared.get_json()["assigneeId"] is None


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"status": "open"}, "status"),
        ({"severity": "urgent"}, "severity"),
        ({"category": "idea"}, "category"),
        ({"title": ""}, "title"),
        ({"title": "x" * 201}, "title"),
        ({"description": None}, "description"),
        ({"assignee_id": "not-a-uuid"}, "assignee_id"),
        ({"project_id": str(uuid.uuid4())}, "project_id"),
        ({"tracking_id": "WS-9"}, "tracking_id"),
    ],
)
def test_patch_validation(user_client, report, body, field):
    response = patch(user_client, "WS-1", body)
    assert response.status_code == 422 and field in response.get_json()["errors"]
    assert user_client.get("/api/v1/reports/WS-1").get_json() == report


def test_validation_comes_before_404(user_client):
    assert patch(user_client, "WS-404", {"status": "open"}).status_code == 422


def test_patch_and_delete_need_csrf_with_cookies(user_client, report):
    assert user_client.patch("/api/v1/reports/WS-1", json={"status": "closed"}).status_code == 403
    assert user_client.delete("/api/v1/reports/WS-1").status_code == 403


def test_pat_works_the_reports(app, user_client, report):
    headers = {"Authorization": f"Bearer {create_pat(user_client)['token']}"}
    script = app.test_client()
    assert script.get("/api/v1/reports/WS-1", headers=headers).status_code == 200
    assert (
        script.patch("/api/v1/reports/WS-1", json={"status": "closed"}, headers=headers).status_code
        == 200
    )
    assert script.delete("/api/v1/reports/WS-1", headers=headers).status_code == 204


def test_api_key_does_not_open_report_management(client, web_shop, report):
    headers = {"X-API-Key": web_shop["apiKey"]}
    assert client.get("/api/v1/reports/WS-1", headers=headers).status_code == 401
    assert client.delete("/api/v1/reports/WS-1", headers=headers).status_code == 401


def test_delete(user_client, web_shop, report):
    response = user_client.delete("/api/v1/reports/WS-1", headers=csrf(user_client))
    assert response.status_code == 204 and response.data == b""
    assert user_client.get(f"/api/v1/reports/{report['id']}").status_code == 404
    # A deleted report's number is not reused.
    assert file_report(user_client, web_shop["apiKey"]).get_json()["trackingId"] == "WS-2"


def test_prefix_cannot_change_once_the_project_has_reports(user_client, web_shop, report):
    response = user_client.patch(
        f"/api/v1/projects/{web_shop['id']}",
        headers=csrf(user_client),
        json={"tracking_prefix": "SHOP"},
    )
    assert response.status_code == 409
    assert user_client.get("/api/v1/reports/WS-1").status_code == 200
