"""The overview (docs/api.md §8.4): its counters always equal a count of the reports."""

import itertools
import random
import statistics
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import update

from harness.client import create_project, csrf, register
from svc.extensions import db, migrate
from svc.models import Report
from svc.models.base import utcnow
from svc.services.reporting import stats
from tests.helpers import REPORT, fan_out, file_report, plan_of, statements_run

OPEN = ("new", "in_progress")
_names = (f"Project {n}" for n in itertools.count())


def overview(client, **params):
    response = client.get("/api/v1/stats", query_string=params)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def every_report(client, **filters) -> list[dict]:
    items, page = [], 1
    while True:
        answer = client.get(
            "/api/v1/reports", query_string={**filters, "page": page, "page_size": 100}
        ).get_json()
        items += answer["items"]
        if len(items) >= answer["total"]:
            return items
        page += 1


def counted_from_rows(reports: list[dict], days: int = 30) -> dict:
    """The overview computed from the reports themselves."""
    still_open = [r for r in reports if r["status"] in OPEN]
    today = utcnow().date()
    created = Counter(r["createdAt"][:10] for r in reports)
    return {
        "byStatus": {s: sum(r["status"] == s for r in still_open) for s in OPEN},
        "bySeverity": dict(Counter(r["severity"] for r in still_open)),
        "byCategory": dict(Counter(r["category"] for r in still_open)),
        "created": {
            (today - timedelta(days=n)).isoformat(): created[
                (today - timedelta(days=n)).isoformat()
            ]
            for n in range(days)
        },
    }


def set_status(client, ref, status):
    response = client.patch(f"/api/v1/reports/{ref}", json={"status": status}, headers=csrf(client))
    assert response.status_code == 200


def nonzero(counts: dict) -> dict:
    return {key: value for key, value in counts.items() if value}


STEPS = st.lists(
    st.one_of(
        st.tuples(
            st.just("file"),
            st.sampled_from(["low", "medium", "high", "critical"]),
            st.sampled_from(["bug", "ui", "crash"]),
            st.integers(0, 1),
        ),
        st.tuples(
            st.just("set"),
            st.sampled_from(["status", "severity", "category"]),
            st.sampled_from(["new", "in_progress", "resolved", "closed", "low", "critical", "ui"]),
            st.integers(0, 30),
        ),
        st.tuples(st.just("bulk"), st.sampled_from((*OPEN, "resolved")), st.integers(0, 30)),
        st.tuples(st.just("delete"), st.integers(0, 30)),
    ),
    max_size=20,
)


def take_steps(client, steps) -> list[dict]:
    """Two new projects, and the steps taken in them: filings, changes, deletions."""
    projects = [create_project(client, next(_names)) for _ in range(2)]
    alive: list[str] = []
    for step in steps:
        if step[0] == "file":
            _, severity, category, which = step
            made = file_report(
                client, projects[which]["apiKey"], severity=severity, category=category
            ).get_json()
            alive.append(made["id"])
        elif not alive:
            continue
        elif step[0] == "set":
            _, field, value, pick = step
            client.patch(
                f"/api/v1/reports/{alive[pick % len(alive)]}",
                json={field: value},
                headers=csrf(client),
            )  # a value of the wrong field is a 422 and changes nothing
        elif step[0] == "bulk":
            _, status, pick = step
            client.patch(
                "/api/v1/reports",
                json={"ids": alive[pick % len(alive) :], "set": {"status": status}},
                headers=csrf(client),
            )
        else:
            victim = alive.pop(step[1] % len(alive))
            client.delete(f"/api/v1/reports/{victim}", headers=csrf(client))
    return projects


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=STEPS)
def test_the_counters_equal_a_count_of_the_reports(user_client, steps):
    project_ids = [p["id"] for p in take_steps(user_client, steps)]
    # Every report of the user (earlier examples' projects too), and one project's.
    reports = every_report(user_client)
    for chosen in (reports, [r for r in reports if r["projectId"] == project_ids[0]]):
        params = {} if chosen is reports else {"project_id": project_ids[0]}
        answer = overview(user_client, **params)
        expected = counted_from_rows(chosen)
        assert answer["open"]["byStatus"] == expected["byStatus"]
        assert nonzero(answer["open"]["bySeverity"]) == expected["bySeverity"]
        assert nonzero(answer["open"]["byCategory"]) == expected["byCategory"]
        assert {d["date"]: d["created"] for d in answer["perDay"]} == expected["created"]
        resolved_now = sum(r["status"] not in OPEN for r in chosen)
        assert sum(d["resolved"] for d in answer["perDay"]) == resolved_now


# Filters a list's total is read from the counters for (docs/api.md §8.2): any of status,
# severity and category, one value or several, alone or with a project.
TALLIED_FILTERS = [
    {"status": "new"},
    {"status": "in_progress,resolved"},
    {"severity": "critical"},
    {"severity": "low,high", "category": "ui"},
    {"status": "new", "severity": "high", "category": "bug"},
    {"category": "crash,bug", "status": "closed,new"},
]


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    steps=STEPS,
    waiting=st.lists(
        st.tuples(
            st.sampled_from(["low", "high", "critical"]),
            st.sampled_from(["bug", "ui", "crash"]),
            st.sampled_from([None, "resolved", "delete"]),
        ),
        max_size=4,
    ),
)
def test_a_filtered_lists_total_counts_every_report_it_lists(app, user_client, steps, waiting):
    """Also for reports whose created event waits for the fan-out, and that were changed or
    deleted meanwhile: the total is the counters' and those events'."""
    projects = take_steps(user_client, steps)
    for severity, category, then in waiting:
        made = user_client.post(
            "/api/v1/reports",
            json={**REPORT, "severity": severity, "category": category},
            headers={"X-API-Key": projects[0]["apiKey"]},
        ).get_json()
        if then == "delete":
            user_client.delete(f"/api/v1/reports/{made['id']}", headers=csrf(user_client))
        elif then:
            set_status(user_client, made["id"], then)

    def check() -> None:
        reports = every_report(user_client)  # its total is the projects' report counts
        for filters, project in itertools.product(TALLIED_FILTERS, (None, projects[0]["id"])):
            chosen = [
                r
                for r in reports
                if (project is None or r["projectId"] == project)
                and all(r[name] in values.split(",") for name, values in filters.items())
            ]
            params = {**filters, "page_size": 1} | ({"project_id": project} if project else {})
            answer = user_client.get("/api/v1/reports", query_string=params).get_json()
            assert answer["total"] == len(chosen), (filters, project)

    check()
    fan_out(app)
    check()


def test_resolving_reopening_and_the_median(app, user_client):
    project = create_project(user_client)
    for _ in range(4):
        file_report(user_client, project["apiKey"])
    for ref in ("WS-1", "WS-2", "WS-3"):
        user_client.patch(
            f"/api/v1/reports/{ref}", json={"status": "resolved"}, headers=csrf(user_client)
        )
    today = overview(user_client)["perDay"][-1]
    assert (today["created"], today["resolved"]) == (4, 3)
    # Reopened: no longer resolved that day. Closed after resolved: still resolved once.
    set_status(user_client, "WS-3", "new")
    set_status(user_client, "WS-2", "closed")
    answer = overview(user_client)
    assert answer["perDay"][-1]["resolved"] == 2
    assert answer["open"]["byStatus"] == {"new": 2, "in_progress": 0}

    # The median reads when each report was filed and resolved (rows changed beside the
    # service are counted again, as the benchmarks' are).
    now = utcnow()
    with app.app_context():
        for number, hours in ((1, 2), (2, 10)):
            db.session.execute(
                update(Report)
                .where(Report.number == number)
                .values(created_at=now - timedelta(hours=hours), resolved_at=now)
            )
        db.session.commit()
        with db.engine.begin() as connection:
            stats.recount_all(connection)
    assert overview(user_client)["medianHoursToResolve"] == 6.0
    user_client.patch(
        "/api/v1/reports/WS-4", json={"status": "resolved"}, headers=csrf(user_client)
    )
    assert 1.9 < overview(user_client)["medianHoursToResolve"] <= 2.0  # 2, 10 and nearly 0


# Hours to resolve on bands' bounds (models.stats.BANDS) and a millisecond either side.
MILLISECOND = 1 / 3_600_000
BOUNDARY_HOURS = [
    bound + offset
    for bound in (1, 2, 12, 24, 36, 336, 720, 8760)
    for offset in (0, 0, -MILLISECOND, MILLISECOND)
] + [0.0, 0.25]


def test_the_median_is_exact_at_the_bands_bounds(app, user_client, monkeypatch):
    """The median sorts only its band's reports (ReportHours): a report resolved exactly on a
    band's bound, or a microsecond off, is in the same band for the counter and the sort,
    through resolving, reopening and deleting, and as a recount from the rows counts it."""
    rng = random.Random(73)
    project = create_project(user_client)
    resolved_at = utcnow().replace(microsecond=0) - timedelta(hours=1)
    monkeypatch.setattr(stats, "utcnow", lambda: resolved_at)  # when the API resolves them
    # The counters and the sorted band agree: the sort of the whole window is for a change
    # committed between the two reads only.
    monkeypatch.setattr(stats, "_median_of_all", None)
    hours = {}
    for number, value in enumerate(BOUNDARY_HOURS, 1):
        file_report(user_client, project["apiKey"])
        hours[f"WS-{number}"] = value
        with app.app_context():
            db.session.execute(
                update(Report)
                .where(Report.number == number)
                .values(created_at=resolved_at - timedelta(hours=value))
            )
            db.session.commit()
    fan_out(app)

    def check():
        resolved = [h for ref, h in hours.items() if ref in still_resolved]
        answer = overview(user_client, days=5)["medianHoursToResolve"]
        assert answer == round(statistics.median(resolved), 2) if resolved else answer is None
        with app.app_context(), db.engine.begin() as connection:
            kept = counters(connection)
            stats.recount_all(connection)
            assert counters(connection) == kept  # the bands the database gave as each resolved

    still_resolved = set()
    for ref in rng.sample(sorted(hours), len(hours)):
        set_status(user_client, ref, "resolved")
        still_resolved.add(ref)
        if len(still_resolved) % 3 == 0:
            check()
    check()
    for ref in rng.sample(sorted(still_resolved), 12):
        if rng.random() < 0.5:
            set_status(user_client, ref, "new")
        else:
            user_client.delete(f"/api/v1/reports/{ref}", headers=csrf(user_client))
        still_resolved.discard(ref)
        check()


def counters(connection) -> list:
    return sorted(
        tuple(row)
        for row in connection.exec_driver_sql("SELECT * FROM report_hours WHERE count != 0")
    )


def test_the_median_is_read_from_an_index_alone(app, user_client):
    """The reports resolved in the window are read for the median (160,000 for 30 days at
    10,000,000 reports): once, the middle band's sorted, from the index of the resolved and the
    hours it holds, not from the reports' rows."""
    project = create_project(user_client)
    file_report(user_client, project["apiKey"])
    set_status(user_client, "WS-1", "resolved")
    with app.app_context():
        with statements_run(db.engine) as run:
            assert overview(user_client)["medianHoursToResolve"] is not None
        statements = [(s, p) for s, p in run if "resolved_at >=" in s]
        connection = db.engine.connect()
        sqlite = connection.dialect.name == "sqlite"
        if not sqlite:
            # As on a large table: a table this small is cheapest read whole.
            connection.exec_driver_sql("SET enable_seqscan = off; SET enable_bitmapscan = off")
        plans = [plan_of(connection, s, p) for s, p in statements]
        # SQLite takes each report's hours from the index, not julianday of its timestamps.
        programs = [
            [str(row[4]) for row in connection.exec_driver_sql("EXPLAIN " + s, p)]
            for s, p in statements
        ] if sqlite else []  # fmt: skip
        connection.close()
    assert len(plans) == 1, statements  # the middle band, sorted
    assert "ix_reports_project_resolved" in plans[0], plans
    assert "COVERING INDEX" in plans[0] or "Index Only Scan" in plans[0], plans
    for program in programs:
        assert not any("julianday" in operand for operand in program), program


def test_days_projects_and_rights(app, user_client):
    project = create_project(user_client)
    file_report(user_client, project["apiKey"])
    answer = overview(user_client, days=7)
    assert [d["date"] for d in answer["perDay"]] == [
        (utcnow().date() - timedelta(days=n)).isoformat() for n in range(6, -1, -1)
    ]
    assert answer["medianHoursToResolve"] is None
    assert len(overview(user_client)["perDay"]) == 30
    for days in (0, 366, "x"):
        assert user_client.get("/api/v1/stats", query_string={"days": days}).status_code == 422
    other = app.test_client()
    register(other, email="grace@example.com", name="Grace")
    refused = other.get("/api/v1/stats", query_string={"project_id": project["id"]})
    assert refused.status_code == 404
    assert overview(other)["open"]["byStatus"] == {"new": 0, "in_progress": 0}
    assert app.test_client().get("/api/v1/stats").status_code == 401


def test_the_migration_counts_the_reports_stored_before_it(app, user_client):
    """An installation from before the counters: the upgrade counts its reports, by the days
    they were created and resolved."""
    project = create_project(user_client)
    for _ in range(3):
        file_report(user_client, project["apiKey"])
    set_status(user_client, "WS-1", "closed")
    three_days_ago = datetime.now(UTC) - timedelta(days=3)
    with app.app_context():
        migrate.downgrade(revision="e0f6ccd030c8")
        db.session.execute(
            db.text("UPDATE reports SET created_at = :moment WHERE number = 2"),
            {"moment": three_days_ago.replace(tzinfo=None)},
        )
        db.session.commit()
        migrate.upgrade()
    answer = overview(user_client, days=5)
    assert [d["created"] for d in answer["perDay"]] == [0, 1, 0, 0, 2]
    assert [d["resolved"] for d in answer["perDay"]] == [0, 0, 0, 0, 1]
    assert answer["open"]["byStatus"] == {"new": 2, "in_progress": 0}


@pytest.mark.parametrize("params", [{"project_id": "nope"}, {"days": "-1"}])
def test_bad_parameters_are_422(user_client, params):
    response = user_client.get("/api/v1/stats", query_string=params)
    assert response.status_code == 422 and response.get_json()["errors"]


def test_recounting_from_the_reports_gives_the_same_counters(app, user_client):
    """What the benchmarks' bulk loads use (stats.recount_all) agrees with the counters kept."""
    project = create_project(user_client)
    for severity in ("low", "high", "critical", "critical"):
        file_report(user_client, project["apiKey"], severity=severity)
    set_status(user_client, "WS-2", "resolved")
    set_status(user_client, "WS-3", "in_progress")
    user_client.delete("/api/v1/reports/WS-4", headers=csrf(user_client))
    kept = overview(user_client)
    with app.app_context():
        db.session.execute(db.text("DELETE FROM report_tallies"))
        db.session.commit()
        assert overview(user_client)["open"]["byStatus"] == {"new": 0, "in_progress": 0}
        with db.engine.begin() as connection:
            stats.recount_all(connection)
    assert overview(user_client) == kept
