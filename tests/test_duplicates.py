"""Duplicates (docs/api.md §8.11): forty reports of one bug become one report followed by
forty reporters. Marked over HTTP as the dashboard and scripts do, on each database."""

import json

import pytest
from sqlalchemy import select

from harness.client import create_project, csrf, new_member
from svc.extensions import db
from svc.models import WebhookDelivery
from tests.helpers import file_report, team_with_project


@pytest.fixture
def four_reports(app):
    """Ada's Web Shop with a webhook, and its reports WS-1 to WS-4 from three reporters (WS-4
    by WS-1's reporter again)."""
    ada = team_with_project(app)
    ada.patch(
        f"/api/v1/projects/{ada.project['id']}",
        json={"settings": {"webhook_url": "https://hooks.example.com/svc"}},
        headers=csrf(ada),
    )
    for reporter in ("rep@example.com", "Other@Example.com", None, "REP@example.com"):
        assert file_report(ada, ada.key, reporter_identifier=reporter).status_code == 201
    return ada


def mark(client, report, target):
    return client.post(
        f"/api/v1/reports/{report}/duplicate-of", json={"target": target}, headers=csrf(client)
    )


def get(client, report) -> dict:
    answer = client.get(f"/api/v1/reports/{report}")
    assert answer.status_code == 200, answer.get_json()
    return answer.get_json()


def updates(app) -> list[dict]:
    """The report.updated webhooks' data, oldest first."""
    with app.app_context():
        rows = db.session.scalars(
            select(WebhookDelivery.payload)
            .where(WebhookDelivery.event == "report.updated")
            .order_by(WebhookDelivery.created_at)
        )
        return [json.loads(payload)["data"] for payload in rows]


def test_a_duplicate_closes_points_at_its_primary_and_is_counted(four_reports):
    primary = get(four_reports, "WS-1")
    assert (primary["duplicateOf"], primary["duplicateCount"], primary["reporterCount"]) == (
        None, 0, 1,
    )  # fmt: skip

    marked = mark(four_reports, "WS-2", "WS-1")
    assert marked.status_code == 200, marked.get_json()
    duplicate = marked.get_json()
    assert duplicate["status"] == "closed"
    assert duplicate["duplicateOf"] == {"id": primary["id"], "trackingId": "WS-1"}
    # The id names it as well as the tracking id; WS-1's reporter filing again counts once.
    assert mark(four_reports, "WS-4", primary["id"]).status_code == 200
    assert mark(four_reports, "ws-3", "ws-1").status_code == 200
    primary = get(four_reports, "WS-1")
    assert (primary["duplicateCount"], primary["reporterCount"]) == (3, 3)
    assert primary["status"] == "new"

    # One report.updated per duplicate, carrying what it is now a duplicate of.
    [first, *_] = updates(four_reports.application)
    assert first["trackingId"] == "WS-2"
    assert first["duplicateOf"] == {"id": primary["id"], "trackingId": "WS-1"}
    assert first["changes"] == {
        "duplicateOf": {"from": None, "to": "WS-1"},
        "status": {"from": "new", "to": "closed"},
    }
    assert len(updates(four_reports.application)) == 3

    # The activity of both says so.
    assert (
        four_reports.get("/api/v1/reports/WS-2/activity").get_json()[-1]["changes"]
        == (first["changes"])
    )
    joined = [e for e in four_reports.get("/api/v1/reports/WS-1/activity").get_json()[1:]]
    assert [(e["kind"], e["changes"]["duplicates"]["to"]) for e in joined] == [
        ("duplicate", "WS-2"), ("duplicate", "WS-4"), ("duplicate", "WS-3"),
    ]  # fmt: skip
    assert joined[0]["actor"]["name"] == "Ada Lovelace"

    # Marking it again changes nothing.
    assert mark(four_reports, "WS-2", "WS-1").status_code == 200
    assert len(updates(four_reports.application)) == 3


def test_what_cannot_be_a_primary_is_refused_and_nothing_changes(app, four_reports):
    other = create_project(four_reports, name="Blog")
    assert file_report(four_reports, other["apiKey"]).status_code == 201
    blog_report = four_reports.get(f"/api/v1/reports?project_id={other['id']}").get_json()["items"][
        0
    ]
    assert mark(four_reports, "WS-2", "WS-1").status_code == 200

    refused = {
        ("WS-1", "WS-1"): "A report cannot be a duplicate of itself.",
        ("WS-1", blog_report["trackingId"]): "Not a report of the same project.",
        # A duplicate as target: its primary is named, so groups never chain.
        ("WS-3", "WS-2"): "WS-2 is itself a duplicate of WS-1: mark it a duplicate of WS-1.",
        # A loop: the primary into its own duplicate.
        ("WS-1", "WS-2"): "WS-2 is a duplicate of WS-1: undo that first.",
        ("WS-1", "WS-99"): "No report WS-99 in your projects.",
    }
    for (report, target), words in refused.items():
        answer = mark(four_reports, report, target)
        assert answer.status_code == 422, (report, target)
        assert answer.get_json()["errors"] == {"target": [words]}
    assert mark(four_reports, "WS-99", "WS-1").status_code == 404
    assert [get(four_reports, f"WS-{n}")["status"] for n in (1, 3)] == ["new", "new"]
    assert len(updates(app)) == 1

    viewer = new_member(
        app, four_reports, four_reports.project["id"], "vi@example.com", "Vi", role="viewer"
    )
    assert mark(viewer, "WS-3", "WS-1").status_code == 403
    assert viewer.delete("/api/v1/reports/WS-2/duplicate-of", headers=csrf(viewer)).status_code == (
        403
    )


def test_a_primary_marked_a_duplicate_brings_its_duplicates_along(app, four_reports):
    assert mark(four_reports, "WS-2", "WS-1").status_code == 200
    assert mark(four_reports, "WS-1", "WS-3").status_code == 200
    assert get(four_reports, "WS-2")["duplicateOf"]["trackingId"] == "WS-3"
    assert get(four_reports, "WS-1")["duplicateOf"]["trackingId"] == "WS-3"
    assert get(four_reports, "WS-3")["duplicateCount"] == 2
    assert get(four_reports, "WS-1")["duplicateCount"] == 0
    moved = updates(app)[-1]
    assert moved["trackingId"] == "WS-2"
    assert moved["changes"] == {"duplicateOf": {"from": "WS-1", "to": "WS-3"}}
    # A duplicate pointed at another primary leaves the first one's count.
    assert mark(four_reports, "WS-2", "WS-4").status_code == 200
    assert (
        get(four_reports, "WS-3")["duplicateCount"],
        get(four_reports, "WS-4")["duplicateCount"],
    ) == (1, 1)
    left = four_reports.get("/api/v1/reports/WS-3/activity").get_json()[-1]
    assert left["changes"] == {"duplicates": {"from": "WS-2", "to": None}}


def test_undo_opens_the_report_again_on_its_own(app, four_reports):
    assert mark(four_reports, "WS-2", "WS-1").status_code == 200
    undone = four_reports.delete("/api/v1/reports/WS-2/duplicate-of", headers=csrf(four_reports))
    assert undone.status_code == 200, undone.get_json()
    assert (undone.get_json()["status"], undone.get_json()["duplicateOf"]) == ("new", None)
    assert get(four_reports, "WS-1")["duplicateCount"] == 0
    assert updates(app)[-1]["changes"] == {
        "duplicateOf": {"from": "WS-1", "to": None},
        "status": {"from": "closed", "to": "new"},
    }
    again = four_reports.delete("/api/v1/reports/WS-2/duplicate-of", headers=csrf(four_reports))
    assert again.status_code == 409
    assert again.get_json()["detail"] == "WS-2 is not a duplicate"


def test_the_list_filters_and_shows_duplicates_and_bulk_marks_them(app, four_reports):
    bulk = four_reports.patch(
        "/api/v1/reports",
        json={"ids": ["WS-2", "WS-3"], "set": {"duplicate_of": "WS-1", "severity": "low"}},
        headers=csrf(four_reports),
    )
    assert bulk.status_code == 200 and bulk.get_json() == {"updated": 2}

    def listed(query=""):
        items = four_reports.get(f"/api/v1/reports?sort=created_at{query}").get_json()["items"]
        return [(r["trackingId"], r["status"], r["duplicateCount"], r["duplicateOf"] and
                 r["duplicateOf"]["trackingId"]) for r in items]  # fmt: skip

    assert listed() == [
        ("WS-1", "new", 2, None),
        ("WS-2", "closed", 0, "WS-1"),
        ("WS-3", "closed", 0, "WS-1"),
        ("WS-4", "new", 0, None),
    ]
    assert listed("&duplicates=exclude") == [("WS-1", "new", 2, None), ("WS-4", "new", 0, None)]
    assert [item[0] for item in listed("&duplicates=only")] == ["WS-2", "WS-3"]
    assert four_reports.get("/api/v1/reports?duplicates=some").status_code == 422
    assert get(four_reports, "WS-2")["severity"] == "low"
    assert get(four_reports, "WS-1")["reporterCount"] == 3

    # All or none: one report that cannot be one refuses the whole request.
    refused = four_reports.patch(
        "/api/v1/reports",
        json={"ids": ["WS-4", "WS-1"], "set": {"duplicate_of": "WS-1"}},
        headers=csrf(four_reports),
    )
    assert refused.status_code == 422
    assert refused.get_json()["errors"] == {
        "set.duplicate_of": ["A report cannot be a duplicate of itself."]
    }
    assert get(four_reports, "WS-4")["duplicateOf"] is None
    both = four_reports.patch(
        "/api/v1/reports",
        json={"ids": ["WS-4"], "set": {"duplicate_of": "WS-1", "status": "new"}},
        headers=csrf(four_reports),
    )
    assert both.status_code == 422


def test_a_deleted_primary_leaves_its_duplicates_closed_and_on_their_own(app, four_reports):
    assert mark(four_reports, "WS-2", "WS-1").status_code == 200
    assert (
        four_reports.delete("/api/v1/reports/WS-1", headers=csrf(four_reports)).status_code == 204
    )
    left = get(four_reports, "WS-2")
    assert (left["status"], left["duplicateOf"]) == ("closed", None)
