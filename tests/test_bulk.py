"""Bulk triage (docs/api.md §8.6): PATCH and DELETE /api/v1/reports on up to 500 reports,
all or nothing, with the rights of one by one."""

from pathlib import Path

import pytest

from harness.client import add_to_project, create_project, csrf, new_member, register
from tests.helpers import REPORT, fan_out, file_report, png_bytes, upload


@pytest.fixture
def world(app):
    """Ada owns Web Shop (WS-1..WS-4, a webhook) and Backend (BAC-1); Grace is a member of
    Web Shop and a viewer of Backend; Mallory owns Mine (MIN-1)."""
    ada = app.test_client()
    ada.user = register(ada)
    shop = create_project(ada, "Web Shop")
    backend = create_project(ada, "Backend")
    ada.patch(
        f"/api/v1/projects/{shop['id']}",
        json={"settings": {"webhook_url": "https://hooks.example.com/svc"}},
        headers=csrf(ada),
    )
    grace = new_member(app, ada, shop["id"], "grace@example.com", "Grace Hopper")
    add_to_project(ada, backend["id"], grace, "grace@example.com", "viewer")
    mallory = app.test_client()
    register(mallory, email="mallory@example.com", name="Mallory")
    mine = create_project(mallory, "Mine")
    key = upload(ada, shop["apiKey"], png_bytes()).get_json()["key"]
    for number in range(4):
        extra = {"screenshot_url": key} if number == 0 else {}
        file_report(ada, shop["apiKey"], title=f"Shop {number + 1}", severity="low", **extra)
    file_report(ada, backend["apiKey"], title="Backend 1")
    file_report(mallory, mine["apiKey"], title="Mine 1")
    return {"ada": ada, "grace": grace, "mallory": mallory, "shop": shop, "backend": backend}


def bulk_patch(client, ids, **changes):
    return client.patch("/api/v1/reports", json={"ids": ids, "set": changes}, headers=csrf(client))


def bulk_delete(client, ids):
    return client.delete("/api/v1/reports", json={"ids": ids}, headers=csrf(client))


def statuses(client) -> dict[str, str]:
    items = client.get("/api/v1/reports", query_string={"page_size": 100}).get_json()["items"]
    return {item["trackingId"]: item["status"] for item in items}


def updated_events(client, project) -> list[str]:
    log = client.get(f"/api/v1/projects/{project['id']}/webhook-deliveries").get_json()
    return sorted(d["reportId"] for d in log["items"] if d["event"] == "report.updated")


def test_one_request_sets_the_fields_of_many_reports(world):
    ada, grace, shop = world["ada"], world["grace"], world["shop"]
    first = ada.get("/api/v1/reports/WS-1").get_json()
    ada.patch("/api/v1/reports/WS-3", json={"status": "resolved"}, headers=csrf(ada))
    response = bulk_patch(
        grace,
        [first["id"], "ws-2", "WS-3", "WS-2"],
        status="resolved",
        assignee_id=grace.user["id"],
    )
    assert response.status_code == 200
    assert response.get_json() == {"updated": 3}  # WS-3 changed assignee only, still a change
    seen = statuses(ada)
    assert [seen[ref] for ref in ("WS-1", "WS-2", "WS-3", "WS-4")] == [
        "resolved",
        "resolved",
        "resolved",
        "new",
    ]
    # One report.updated per changed report (WS-3 had one already), one activity entry each.
    ids = {ref: ada.get(f"/api/v1/reports/{ref}").get_json()["id"] for ref in ("WS-2", "WS-3")}
    assert updated_events(ada, shop) == sorted([first["id"], ids["WS-2"], ids["WS-3"], ids["WS-3"]])
    activity = ada.get("/api/v1/reports/WS-2/activity").get_json()
    assert activity[-1]["changes"] == {
        "status": {"from": "new", "to": "resolved"},
        "assigneeId": {"from": None, "to": grace.user["id"]},
    }
    again = bulk_patch(grace, ["WS-1", "WS-2"], status="resolved")
    assert again.get_json() == {"updated": 0}


@pytest.mark.parametrize(
    ("who", "ids", "status"),
    [
        ("grace", ["WS-1", "WS-99"], 404),  # no such report
        ("grace", ["WS-1", "MIN-1"], 404),  # someone else's project
        ("grace", ["WS-1", "not-an-id"], 404),
        ("grace", ["WS-1", "BAC-1"], 403),  # a viewer there
        ("mallory", ["WS-1"], 404),
    ],
)
def test_all_or_nothing(world, who, ids, status):
    before = statuses(world["ada"])
    response = bulk_patch(world[who], ids, status="closed")
    assert response.status_code == status and response.get_json()["detail"]
    deleting = bulk_delete(world[who], ids)
    assert deleting.status_code == status
    assert statuses(world["ada"]) == before
    assert updated_events(world["ada"], world["shop"]) == []


def test_the_assignee_must_work_on_every_project_named(world):
    ada, grace = world["ada"], world["grace"]
    response = bulk_patch(ada, ["WS-1", "BAC-1"], assignee_id=grace.user["id"])
    assert response.status_code == 422 and "assignee_id" in response.get_json()["errors"]
    assert ada.get("/api/v1/reports/WS-1").get_json()["assigneeId"] is None


@pytest.mark.parametrize(
    "body",
    [
        {"ids": [], "set": {"status": "closed"}},
        {"ids": [f"WS-{n}" for n in range(1, 502)], "set": {"status": "closed"}},
        {"ids": ["WS-1"], "set": {}},
        {"ids": ["WS-1"], "set": {"status": "done"}},
        {"ids": ["WS-1"], "set": {"title": "Not in bulk"}},
        {"ids": "WS-1", "set": {"status": "closed"}},
    ],
)
def test_bad_bulk_bodies_are_422(world, body):
    response = world["ada"].patch("/api/v1/reports", json=body, headers=csrf(world["ada"]))
    assert response.status_code == 422, response.get_json()
    assert statuses(world["ada"])["WS-1"] == "new"


def test_five_hundred_at_once(app, world):
    ada, shop = world["ada"], world["shop"]
    for number in range(496):  # filed as the widget does, fanned out once after, as a burst is
        filed = ada.post(
            "/api/v1/reports",
            json={**REPORT, "title": f"More {number}"},
            headers={"X-API-Key": shop["apiKey"]},
        )
        assert filed.status_code == 201
    fan_out(app)
    ids = [f"WS-{n}" for n in range(1, 501)]
    assert bulk_patch(ada, ids, severity="critical").get_json() == {"updated": 500}
    assert bulk_delete(ada, ids).get_json() == {"deleted": 500}
    assert list(statuses(ada)) == ["BAC-1"]


def test_bulk_delete_takes_the_screenshots_too(app, world):
    ada = world["ada"]
    key = ada.get("/api/v1/reports/WS-1").get_json()["screenshotUrl"]
    stored = Path(app.config["SVC_UPLOAD_DIR"])
    assert any(stored.rglob("*.png"))
    assert bulk_delete(ada, ["WS-1", "WS-2"]).get_json() == {"deleted": 2}
    assert ada.get(f"/api/v1/screenshots/{key}").status_code == 404
    assert not any(stored.rglob("*.png"))
    assert sorted(statuses(ada)) == ["BAC-1", "WS-3", "WS-4"]
    assert ada.get("/api/v1/reports").get_json()["total"] == 3
