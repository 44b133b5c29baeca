"""Export (docs/api.md §8.3): the list's reports, all of them, as CSV or NDJSON, streamed."""

import csv
import io
import json

import pytest

from harness.client import create_pat, create_project, csrf, register
from tests.helpers import file_report


@pytest.fixture
def two_projects(user_client):
    project = create_project(user_client, "Web Shop")
    backend = create_project(user_client, "Backend")
    titles = ['=HYPERLINK("https://evil.example")', "plain, with a comma", "two\nlines", "@sum"]
    for number, title in enumerate(titles * 6):
        file_report(
            user_client,
            (project if number % 3 else backend)["apiKey"],
            title=title,
            severity=("low", "high", "critical")[number % 3],
            reporter_identifier=f"user{number}@shop.example" if number % 2 else None,
            metadata={"n": number, "nested": {"ü": [1, 2]}},
        )
    user_client.patch(
        "/api/v1/reports/WS-2",
        json={"status": "resolved", "assignee_id": user_client.user["id"]},
        headers=csrf(user_client),
    )
    # Two duplicates of WS-3 (the list shows what they are, and WS-3 its count): one of them
    # new, so the export's filters meet it too.
    for duplicate in ("WS-4", "WS-5"):
        marked = user_client.post(
            f"/api/v1/reports/{duplicate}/duplicate-of", json={"target": "WS-3"},
            headers=csrf(user_client),
        )  # fmt: skip
        assert marked.status_code == 200
    user_client.delete("/api/v1/reports/WS-5/duplicate-of", headers=csrf(user_client))
    return project


def every_item(client, **filters) -> list[dict]:
    items, page = [], 1
    while True:
        answer = client.get(
            "/api/v1/reports", query_string={**filters, "page": page, "page_size": 7}
        ).get_json()
        items += answer["items"]
        if len(items) >= answer["total"]:
            return items
        page += 1


def export(client, **params):
    response = client.get("/api/v1/reports/export", query_string=params)
    assert response.status_code == 200, response.get_data(as_text=True)
    return response


@pytest.mark.parametrize(
    "filters",
    [
        {},
        {"severity": "low,critical"},
        {"search": "comma"},
        {"assignee": "me"},
        {"reporter": "1"},
        {"duplicates": "only"},
    ],
)
def test_ndjson_holds_what_the_list_pages_hold(user_client, two_projects, filters):
    response = export(user_client, format="ndjson", **filters)
    assert response.is_streamed
    assert response.mimetype == "application/x-ndjson"
    lines = response.get_data(as_text=True).splitlines()
    assert [json.loads(line) for line in lines] == every_item(user_client, **filters)


def test_csv_has_a_header_and_the_lists_values(user_client, two_projects):
    response = export(user_client, format="csv", status="new,resolved")
    assert response.mimetype == "text/csv"
    disposition = response.headers["Content-Disposition"]
    assert disposition.startswith('attachment; filename="svc-reports-') and disposition.endswith(
        '.csv"'
    )
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    items = every_item(user_client, status="new,resolved")
    assert len(rows) == len(items) == 23  # WS-4 is closed, a duplicate
    assert list(rows[0]) == [
        "id", "projectId", "trackingId", "title", "description", "severity", "category",
        "status", "reporterIdentifier", "screenshotUrl", "annotatedScreenshotUrl", "metadata",
        "assigneeId", "signature", "duplicateOf", "duplicateCount", "reporterCount", "createdAt",
        "updatedAt",
    ]  # fmt: skip
    for row, item in zip(rows, items, strict=True):
        for name, value in item.items():
            if name == "metadata":
                assert json.loads(row[name]) == value
            elif name == "duplicateOf" and value:
                assert row[name] == value["trackingId"]
            elif value is None:
                assert row[name] == ""
            elif isinstance(value, str) and value[:1] in "=+-@":
                # What a spreadsheet would run as a formula is led by an apostrophe.
                assert row[name] == "'" + value
            else:
                assert row[name] == str(value), name


def test_csv_is_the_default(user_client, two_projects):
    assert export(user_client).mimetype == "text/csv"


def test_only_the_callers_reports_and_a_bad_format(app, user_client, two_projects):
    other = app.test_client()
    register(other, email="grace@example.com", name="Grace")
    mine = create_project(other, "Mine")
    file_report(other, mine["apiKey"], title="Grace's")
    theirs = export(other, format="ndjson").get_data(as_text=True).splitlines()
    assert [json.loads(line)["title"] for line in theirs] == ["Grace's"]
    # A personal access token works as for the list; no credentials do not.
    token = create_pat(other)["token"]
    bearer = app.test_client().get(
        "/api/v1/reports/export", headers={"Authorization": f"Bearer {token}"}
    )
    assert bearer.status_code == 200 and len(bearer.get_data(as_text=True).splitlines()) == 2
    assert app.test_client().get("/api/v1/reports/export").status_code == 401
    bad = user_client.get("/api/v1/reports/export", query_string={"format": "xlsx"})
    assert bad.status_code == 422 and "format" in bad.get_json()["errors"]
    bad_filter = user_client.get("/api/v1/reports/export", query_string={"status": "open"})
    assert bad_filter.status_code == 422
