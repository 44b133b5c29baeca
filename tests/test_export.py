"""Export (docs/api.md §8.3): the list's reports, all of them, as CSV or NDJSON, streamed."""

import csv
import gzip
import io
import json
import uuid
from pathlib import Path

import pytest

from harness.client import create_pat, create_project, csrf, register
from svc.services.reporting import export as reporting_export
from tests.helpers import file_report, plan_of, statements_run


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
def test_ndjson_holds_what_the_list_pages_hold(user_client, two_projects, filters, monkeypatch):
    monkeypatch.setattr(reporting_export, "BATCH", 2)  # batches read ahead, in their order
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


def test_a_number_is_spelled_as_the_list_spells_it(user_client):
    project = create_project(user_client, "Numbers")
    metadata = {"big": 1e16, "small": 1.5e-7, "ratio": 0.1, "name": "Zoë"}
    file_report(user_client, project["apiKey"], metadata=metadata)
    listed = user_client.get("/api/v1/reports").get_data(as_text=True)
    line = export(user_client, format="ndjson").get_data(as_text=True)
    (row,) = csv.DictReader(io.StringIO(export(user_client, format="csv").get_data(as_text=True)))
    for spelled in ('"big":1e+16', '"small":1.5e-7', '"ratio":0.1', '"name":"Zoë"'):
        assert spelled in listed and spelled in line and spelled in row["metadata"], spelled


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


# --- export jobs (docs/api.md §8.3.1) -----------------------------------------------------------


def write_exports(app) -> int:
    """What the scheduler's export runner does: every queued job, one after another."""
    from svc.services.reporting import export_jobs

    done = 0
    with app.app_context():
        while export_jobs.run_next() is not None:
            done += 1
    return done


@pytest.mark.parametrize("kind", ["ndjson", "csv"])
def test_an_export_too_large_for_one_answer_is_a_job_with_the_same_rows(
    make_app, kind, monkeypatch
):
    """A small SVC_EXPORT_SYNC_LIMIT forces the job's way: the synchronous export says 409 and
    names it; the job writes the same rows, gzipped, with its progress, for its requester."""
    app = make_app(SVC_EXPORT_SYNC_LIMIT=5)
    monkeypatch.setattr(reporting_export, "BATCH", 4)  # six rows in two batches, read ahead
    client = app.test_client()
    register(client)
    project = create_project(client, "Web Shop")
    for number in range(12):
        file_report(client, project["apiKey"], title=f"report {number}",
                    severity=("low", "high")[number % 2])  # fmt: skip
    small = client.get("/api/v1/reports/export",
                       query_string={"severity": "high", "project_id": project["id"]})  # fmt: skip
    assert small.status_code == 409
    assert "POST /api/v1/projects/{id}/exports" in small.get_json()["detail"]
    assert (
        client.get("/api/v1/reports/export", query_string={"search": "report 1"}).status_code == 200
    )

    wanted = {"format": kind, "severity": "high"}
    started = client.post(f"/api/v1/projects/{project['id']}/exports", json=wanted,
                          headers=csrf(client))  # fmt: skip
    assert started.status_code == 202, started.get_json()
    job = started.get_json()
    assert (job["status"], job["written"], job["downloadUrl"]) == ("queued", 0, None)
    assert write_exports(app) == 1
    done = client.get(f"/api/v1/exports/{job['id']}").get_json()
    assert (done["status"], done["total"], done["written"]) == ("done", 6, 6), done
    answer = client.get(done["downloadUrl"])
    assert answer.status_code == 200 and answer.mimetype == "application/gzip"
    assert answer.headers["Content-Disposition"].endswith(f".{kind}.gz")
    text = gzip.decompress(answer.get_data()).decode()
    if kind == "ndjson":
        rows = [json.loads(line) for line in text.splitlines()]
        listed = every_item(client, severity="high")
        assert rows == listed
    else:
        rows = list(csv.DictReader(io.StringIO(text)))
        assert [row["title"] for row in rows] == [f"report {n}" for n in (11, 9, 7, 5, 3, 1)]

    # Another account sees neither the job nor its file; the job goes a day later.
    other = app.test_client()
    register(other, email="eve@example.com", name="Eve")
    assert other.get(f"/api/v1/exports/{job['id']}").status_code == 404
    assert other.get(done["downloadUrl"]).status_code == 404
    assert other.post(f"/api/v1/projects/{project['id']}/exports", json={},
                      headers=csrf(other)).status_code == 404  # fmt: skip
    from datetime import timedelta

    from svc.models.base import utcnow
    from svc.services.reporting import export_jobs

    with app.app_context():
        assert export_jobs.forget_expired(utcnow()) == 0
        assert export_jobs.forget_expired(utcnow() + timedelta(days=1, seconds=1)) == 1
    assert client.get(f"/api/v1/exports/{job['id']}").status_code == 404
    assert not any(path.name.endswith(".gz") for path in Path(app.instance_path).rglob("*"))


@pytest.mark.browser
def test_the_dashboard_follows_an_export_job_to_its_download(browser, app, live_server):
    from playwright.sync_api import expect

    from tests.browser import signed_in_context

    app.config["SVC_EXPORT_SYNC_LIMIT"] = 2
    client = app.test_client()
    register(client)
    project = create_project(client, "Web Shop")
    for number in range(3):
        file_report(client, project["apiKey"], title=f"report {number}")
    context = signed_in_context(browser, client, live_server, accept_downloads=True)
    page = context.new_page()
    page.goto(f"{live_server}/reports")
    expect(page.get_by_text("Export CSV: choose a project (more than 2 reports)")).to_be_visible()
    page.goto(f"{live_server}/reports?project_id={project['id']}")
    page.get_by_role("button", name="Export NDJSON").click()
    expect(page.get_by_text("Queued…").or_(page.get_by_text("of 3…"))).to_be_visible()
    assert write_exports(app) == 1
    link = page.get_by_role("link", name="Download")
    expect(link).to_be_visible(timeout=10_000)
    with page.expect_download() as downloading:
        link.click()
    rows = gzip.decompress(Path(downloading.value.path()).read_bytes()).decode().splitlines()
    assert [json.loads(row)["title"] for row in rows] == ["report 2", "report 1", "report 0"]
    context.close()


def test_an_export_reads_each_signature_from_an_index(app):
    """An export joins its signature to every report: from ix_report_signatures_report_signature
    alone, not from report_signatures' rows, whose terms are most of that table (at ten million a
    job read most of its pages: docs/performance.md, "Export jobs read ahead")."""
    from datetime import UTC, datetime, timedelta

    from sqlalchemy import insert

    from svc import database
    from svc.extensions import db
    from svc.models import Report, ReportSignature
    from svc.services import projects
    from svc.services.identity import users

    with app.app_context():
        user = users.register("Ada", "ada@example.com", "correct horse battery")
        project_id = projects.create(user, "Shop").project.id
        began = datetime(2026, 1, 1, tzinfo=UTC)
        reports = [
            {"id": uuid.uuid4(), "project_id": project_id, "number": n + 1, "title": f"r{n}",
             "description": "d", "severity": "low", "severity_rank": 1, "category": "bug",
             "created_at": began + timedelta(minutes=n)}
            for n in range(3_000)
        ]  # fmt: skip
        db.session.execute(insert(Report), reports)
        db.session.execute(
            insert(ReportSignature),
            [{"report_id": r["id"], "project_id": project_id, "signature": f"s{n % 50}",
              "created_at": r["created_at"], "terms": "stem " * 100, "label": "a label"}
             for n, r in enumerate(reports)],
        )  # fmt: skip
        db.session.commit()
        database.refresh_planner_statistics()
        dialect = db.engine.dialect.name
        if dialect == "postgresql":  # what autovacuum does: index-only scans need it
            with db.engine.connect() as connection:
                connection.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql(
                    "VACUUM report_signatures"
                )
        with statements_run(db.engine) as statements:
            exported = list(reporting_export.rows(user, {"project_id": project_id}))
        assert len(exported) == 3_000 and exported[0]["signature"] == "s49"
        statement, parameters = next(s for s in statements if "ORDER BY" in s[0])
        # On PostgreSQL as the export reads it: a cursor, planned for its first rows.
        plan = plan_of(db.session.connection(), statement, parameters,
                       postgresql="EXPLAIN DECLARE planned CURSOR FOR ")  # fmt: skip
        db.session.rollback()
    assert "ix_report_signatures_report_signature" in plan, plan
    assert ("COVERING INDEX" if dialect == "sqlite" else "Index Only Scan") in plan, plan
