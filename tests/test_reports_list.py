"""GET /api/v1/reports: filters, search, sort, paging, isolation (docs/api.md §8.2)."""

import random
import re
import string
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, insert, select, text, update

from harness.client import add_to_project, create_pat, create_project, csrf, register, sqlite_app
from svc import database
from svc.extensions import db, migrate
from svc.models import SEVERITIES, SEVERITY_RANK, Project, Report, search_index
from svc.models.base import utcnow
from svc.services import projects
from svc.services.identity import users
from svc.services.listing import list_for
from svc.services.reporting import search, stats
from tests.helpers import (
    REPORT,
    SUMMARY_FIELDS,
    fan_out,
    file_report,
    migrated_sqlite_app,
    plan_of,
    png_bytes,
    statements_run,
    upload,
    writer_holding_the_lock,
)


def listing(client, **params):
    response = client.get("/api/v1/reports", query_string=params)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def titles(page) -> list[str]:
    return [item["title"] for item in page["items"]]


@pytest.fixture
def web_shop(user_client):
    return create_project(user_client, "Web Shop")


@pytest.fixture
def backend(user_client):
    return create_project(user_client, "Backend")


def test_empty_list(user_client):
    assert listing(user_client) == {"items": [], "total": 0, "page": 1, "pageSize": 20}


def test_items_are_summaries_newest_first(user_client, web_shop):
    for index in range(3):
        file_report(
            user_client,
            web_shop["apiKey"],
            title=f"r{index}",
            console_logs=[{"message": "x"}],
            metadata={"n": index},
        )
    page = listing(user_client)
    assert titles(page) == ["r2", "r1", "r0"]
    assert set(page["items"][0]) == SUMMARY_FIELDS
    assert page["items"][0]["metadata"] == {"n": 2}
    assert page["total"] == 3


def test_filters(user_client, web_shop, backend, other_client):
    file_report(
        user_client, web_shop["apiKey"], title="shop crash", severity="critical", category="crash"
    )
    file_report(user_client, web_shop["apiKey"], title="shop ui", severity="low", category="ui")
    file_report(
        user_client, backend["apiKey"], title="backend slow", severity="low", category="performance"
    )
    user_client.patch(
        "/api/v1/reports/WS-2", json={"status": "resolved"}, headers=csrf(user_client)
    )
    assert titles(listing(user_client, project_id=web_shop["id"])) == ["shop ui", "shop crash"]
    assert titles(listing(user_client, severity="low")) == ["backend slow", "shop ui"]
    assert titles(listing(user_client, status="resolved")) == ["shop ui"]
    assert titles(listing(user_client, status="new")) == ["backend slow", "shop crash"]
    assert titles(listing(user_client, category="crash")) == ["shop crash"]
    combined = listing(user_client, project_id=web_shop["id"], status="new", severity="critical")
    assert titles(combined) == ["shop crash"] and combined["total"] == 1


def test_assignee_filter(user_client, other_client, web_shop):
    add_to_project(user_client, web_shop["id"], other_client, "grace@example.com")
    for title in ("mine", "hers", "nobody's"):
        file_report(user_client, web_shop["apiKey"], title=title)
    user_client.patch(
        "/api/v1/reports/WS-1",
        headers=csrf(user_client),
        json={"assignee_id": user_client.user["id"]},
    )
    user_client.patch(
        "/api/v1/reports/WS-2",
        headers=csrf(user_client),
        json={"assignee_id": other_client.user["id"]},
    )
    assert titles(listing(user_client, assignee_id=other_client.user["id"])) == ["hers"]
    assert titles(listing(other_client, assignee_id=user_client.user["id"])) == ["mine"]


def test_several_values_of_a_filter_are_alternatives(user_client, web_shop, backend):
    file_report(user_client, web_shop["apiKey"], title="a", severity="critical", category="crash")
    file_report(user_client, web_shop["apiKey"], title="b", severity="low", category="ui")
    file_report(user_client, backend["apiKey"], title="c", severity="medium", category="bug")
    user_client.patch("/api/v1/reports/WS-2", json={"status": "closed"}, headers=csrf(user_client))
    assert titles(listing(user_client, status="new,closed")) == ["c", "b", "a"]
    assert titles(listing(user_client, status="closed,in_progress")) == ["b"]
    assert titles(listing(user_client, severity="low, critical")) == ["b", "a"]
    assert titles(listing(user_client, category="bug,ui,ui")) == ["c", "b"]
    assert listing(user_client, category="bug,ui")["total"] == 2


def test_assigned_to_me_or_to_nobody(user_client, other_client, web_shop):
    add_to_project(user_client, web_shop["id"], other_client, "grace@example.com")
    for title in ("mine", "hers", "nobody's"):
        file_report(user_client, web_shop["apiKey"], title=title)
    for ref, who in (("WS-1", user_client), ("WS-2", other_client)):
        user_client.patch(
            f"/api/v1/reports/{ref}",
            json={"assignee_id": who.user["id"]},
            headers=csrf(user_client),
        )
    assert titles(listing(user_client, assignee="me")) == ["mine"]
    assert titles(listing(other_client, assignee="me")) == ["hers"]
    assert titles(listing(user_client, assignee="none")) == ["nobody's"]
    assert titles(listing(user_client, assignee=other_client.user["id"])) == ["hers"]
    both = user_client.get(
        "/api/v1/reports",
        query_string={"assignee": "me", "assignee_id": other_client.user["id"]},
    )
    assert both.status_code == 422


def test_created_after_is_inclusive_and_created_before_exclusive(app, user_client, web_shop):
    for title in ("first", "second", "third"):
        file_report(user_client, web_shop["apiKey"], title=title)
    with app.app_context():  # exact times, so that the bounds can be hit
        for number in (1, 2, 3):
            moment = datetime(2026, 11, number, 10, tzinfo=UTC)
            db.session.execute(
                update(Report).where(Report.number == number).values(created_at=moment)
            )
        db.session.commit()
    between = listing(
        user_client, created_after="2026-11-02T10:00:00Z", created_before="2026-11-03T10:00:00Z"
    )
    assert titles(between) == ["second"]
    assert titles(listing(user_client, created_after="2026-11-02")) == ["third", "second"]
    # A zone other than UTC is converted; no zone means UTC.
    assert titles(listing(user_client, created_before="2026-11-02T11:00:00+01:00")) == ["first"]
    assert titles(listing(user_client, created_before="2026-11-02T10:00:00.000001")) == [
        "second",
        "first",
    ]


def test_reporter_and_screenshot_filters(user_client, web_shop):
    key = upload(user_client, web_shop["apiKey"], png_bytes()).get_json()["key"]
    file_report(user_client, web_shop["apiKey"], title="a", reporter_identifier="Ada@Shop.example")
    file_report(
        user_client, web_shop["apiKey"], title="b", reporter_identifier="100%_b", screenshot_url=key
    )
    file_report(user_client, web_shop["apiKey"], title="c")
    assert titles(listing(user_client, reporter="shop")) == ["a"]
    assert titles(listing(user_client, reporter="%_")) == ["b"]  # no wildcards
    assert titles(listing(user_client, reporter="_")) == ["b"]
    assert titles(listing(user_client, has_screenshot="true")) == ["b"]
    assert titles(listing(user_client, has_screenshot="false")) == ["c", "a"]


@pytest.mark.parametrize(
    ("search", "expected"),
    [
        ("checkout", ["Checkout fails", "Pay button"]),  # title or description
        ("CHECKOUT", ["Checkout fails", "Pay button"]),  # case-insensitive
        ("heck", ["Checkout fails", "Pay button"]),  # substring
        ("checkout safari", ["Checkout fails"]),  # every term must occur
        ("failson", []),  # a term lies in the title or the description, not across them
        ("  safari   checkout ", ["Checkout fails"]),  # white space is only a separator
        ("100%", ["Discount 100% off"]),  # % is literal
        ("a_b", ["Field a_b empty"]),  # _ is literal
        ("it's", ["It's broken"]),  # quotes are literal
        ('"quoted"', ['Says "quoted"']),
        ("back\\slash", ["Path back\\slash"]),
        ("nothing-matches-this", []),
        # FTS5 query syntax is text like any other.
        ("button*", []),
        ("(checkout", []),
        ("checkout OR", []),
        ("NEAR(checkout,", []),
    ],
)
def test_search(user_client, web_shop, search, expected):
    for title, description in [
        ("Checkout fails", "On Safari only"),
        ("Pay button", "The checkout button is dead"),
        ("Discount 100% off", "shows wrong total"),
        ("Discount 1000 off", "not percent"),
        ("Field a_b empty", "form"),
        ("Field axb empty", "form"),
        ("It's broken", "x"),
        ('Says "quoted"', "y"),
        ("Path back\\slash", "z"),
        ("Path backXslash", "z"),
        # Every trigram SQLite's index is asked for by "checkout" (spaced_trigrams), but not
        # the word: the LIKE leaves it out.
        ("Cheap cko layout", "w"),
    ]:
        file_report(user_client, web_shop["apiKey"], title=title, description=description)
    page = listing(user_client, search=search, sort="created_at")
    assert titles(page) == expected
    assert page["total"] == len(expected)


def test_the_search_index_is_asked_for_trigrams_that_cover_each_term_once():
    assert search.spaced_trigrams("checkout") == ["che", "cko", "out"]
    assert search.spaced_trigrams("abcdefg") == ["abc", "def", "efg"]
    assert search.spaced_trigrams("abcd") == ["abc", "bcd"]
    assert search.spaced_trigrams("abc") == ["abc"]
    assert search.spaced_trigrams("ab") == []
    assert search.spaced_trigrams('ab"cdé%fgh') == ['ab"', "cdé", "%fg", "fgh"]
    query = search.fts_query(["checkout", 'say"s'])
    assert query == '"che" AND "cko" AND "out" AND "say" AND "y""s"'


def test_blank_search_matches_everything(user_client, web_shop):
    file_report(user_client, web_shop["apiKey"])
    assert listing(user_client, search="   ")["total"] == 1


def test_sort_by_severity_ranks_critical_highest(user_client, web_shop):
    for title, severity in [
        ("a", "medium"),
        ("b", "critical"),
        ("c", "low"),
        ("d", "high"),
        ("e", "critical"),
    ]:
        file_report(user_client, web_shop["apiKey"], title=title, severity=severity)
    # Ties (b and e are both critical) break newest first.
    assert titles(listing(user_client, sort="-severity")) == ["e", "b", "d", "a", "c"]
    assert titles(listing(user_client, sort="severity")) == ["c", "a", "d", "e", "b"]


def test_least_severe_first_pages_through_every_report_once(user_client, web_shop, backend):
    """Least severe first is read a kind of severity at a time (services.reports): its pages,
    filtered or not, are still those of the one order."""
    rank = {severity: n for n, severity in enumerate(("low", "medium", "high", "critical"))}
    filed = []
    for n in range(14):
        project = (web_shop, backend)[n % 3 == 0]
        severity = ("high", "low", "critical", "medium", "low")[n % 5]
        filed.append(file_report(user_client, project["apiKey"], severity=severity).get_json())

    def in_order(chosen):
        chosen = sorted(chosen, key=lambda report: report["id"])
        chosen.sort(key=lambda report: report["createdAt"], reverse=True)
        return [report["id"] for report in sorted(chosen, key=lambda r: rank[r["severity"]])]

    def paged(**params):
        ids = []
        for page in range(1, 7):
            items = listing(user_client, sort="severity", page=page, page_size=3, **params)
            ids += [item["id"] for item in items["items"]]
        return ids

    assert paged() == in_order(filed)
    in_shop = [report for report in filed if report["projectId"] == web_shop["id"]]
    assert paged(project_id=web_shop["id"]) == in_order(in_shop)
    low = [report for report in filed if report["severity"] == "low"]
    assert paged(severity="low") == in_order(low)


def test_sort_by_dates(user_client, web_shop):
    for title in ("first", "second", "third"):
        file_report(user_client, web_shop["apiKey"], title=title)
    assert titles(listing(user_client, sort="created_at")) == ["first", "second", "third"]
    user_client.patch("/api/v1/reports/WS-1", json={"status": "closed"}, headers=csrf(user_client))
    assert titles(listing(user_client, sort="-updated_at"))[0] == "first"
    assert titles(listing(user_client, sort="updated_at"))[-1] == "first"


def test_pagination(user_client, web_shop):
    for index in range(25):
        file_report(user_client, web_shop["apiKey"], title=f"r{index:02}")
    first = listing(user_client)
    assert (len(first["items"]), first["total"], first["page"], first["pageSize"]) == (
        20,
        25,
        1,
        20,
    )
    second = listing(user_client, page=2)
    assert titles(second) == [f"r{index:02}" for index in range(4, -1, -1)]
    assert set(titles(first)).isdisjoint(titles(second))
    small = listing(user_client, page=3, page_size=10)
    assert titles(small) == [f"r{index:02}" for index in range(4, -1, -1)]
    past = listing(user_client, page=9)
    assert past["items"] == [] and past["total"] == 25 and past["page"] == 9


def test_page_size_is_clamped_to_100(user_client):
    assert listing(user_client, page_size=500)["pageSize"] == 100
    assert listing(user_client, page_size=100)["pageSize"] == 100


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"page": 0}, "page"),
        ({"page": -1}, "page"),
        ({"page": "two"}, "page"),
        ({"page": "1.5"}, "page"),
        ({"page": 2_147_483_648}, "page"),
        ({"page_size": 0}, "page_size"),
        ({"page_size": "x"}, "page_size"),
        ({"page_size": 2_147_483_648}, "page_size"),
        ({"status": "open"}, "status"),
        ({"severity": "urgent"}, "severity"),
        ({"category": "feature"}, "category"),
        ({"sort": "title"}, "sort"),
        ({"project_id": "not-a-uuid"}, "project_id"),
        ({"assignee_id": "x"}, "assignee_id"),
        ({"assignee": "someone"}, "assignee"),
        ({"status": "new,,closed"}, "status"),
        ({"severity": "low,urgent"}, "severity"),
        ({"created_after": "yesterday"}, "created_after"),
        ({"created_before": "2026-13-01"}, "created_before"),
        ({"has_screenshot": "maybe"}, "has_screenshot"),
        ({"reporter": ""}, "reporter"),
        ({"search": "nul\u0000"}, "search"),
    ],
)
def test_bad_parameters_are_422(user_client, params, field):
    response = user_client.get("/api/v1/reports", query_string=params)
    assert response.status_code == 422
    assert field in response.get_json()["errors"]


def test_unknown_parameters_are_ignored(user_client):
    assert listing(user_client, colour="red", limit=5)["total"] == 0


def test_lists_only_the_callers_projects(user_client, other_client, web_shop):
    file_report(user_client, web_shop["apiKey"], title="ada's")
    theirs = create_project(other_client, "Grace's")
    file_report(other_client, theirs["apiKey"], title="grace's")
    assert titles(listing(user_client)) == ["ada's"]
    assert titles(listing(other_client)) == ["grace's"]
    # Someone else's project id gives an empty page, not an error.
    assert listing(user_client, project_id=theirs["id"]) == {
        "items": [],
        "total": 0,
        "page": 1,
        "pageSize": 20,
    }


def test_a_search_counts_only_the_callers_projects_and_the_one_asked_for(
    user_client, other_client, web_shop, backend
):
    for project, count in ((web_shop, 3), (backend, 2)):
        for n in range(count):
            file_report(user_client, project["apiKey"], title=f"Checkout {n}")
    theirs = create_project(other_client, "Grace's")
    file_report(other_client, theirs["apiKey"], title="Checkout elsewhere")
    assert listing(user_client, search="checkout")["total"] == 5
    assert listing(user_client, search="checkout", project_id=backend["id"])["total"] == 2
    assert listing(user_client, search="checkout", project_id=theirs["id"])["total"] == 0
    assert listing(other_client, search="checkout")["total"] == 1


def test_members_see_the_projects_reports(user_client, other_client, web_shop):
    file_report(user_client, web_shop["apiKey"], title="shared")
    assert listing(other_client)["total"] == 0
    add_to_project(user_client, web_shop["id"], other_client, "grace@example.com")
    assert titles(listing(other_client)) == ["shared"]


def test_a_pat_can_list(app, user_client, web_shop):
    file_report(user_client, web_shop["apiKey"])
    pat = create_pat(user_client)["token"]
    response = app.test_client().get("/api/v1/reports", headers={"Authorization": f"Bearer {pat}"})
    assert response.status_code == 200 and response.get_json()["total"] == 1


def test_listing_needs_a_user_credential(client, web_shop):
    assert client.get("/api/v1/reports").status_code == 401
    assert (
        client.get("/api/v1/reports", headers={"X-API-Key": web_shop["apiKey"]}).status_code == 401
    )


def test_search_is_answered_from_an_index(app, user_client, web_shop):
    # One report: left to themselves, both planners would read a table this small whole.
    file_report(user_client, web_shop["apiKey"], title="Checkout fails")
    with app.app_context():
        dialect = db.engine.dialect.name
        search.steer_planner(db.session, "checkout fails", dialect)
        statement = select(Report.id).where(search.condition("checkout fails", dialect))
        sql = str(statement.compile(db.engine, compile_kwargs={"literal_binds": True}))
        explain = "EXPLAIN QUERY PLAN " if dialect == "sqlite" else "EXPLAIN "
        # In the same transaction, where what the service set for the search holds.
        plan = db.session.connection().exec_driver_sql(explain + sql).all()
        # A scan that the search switched off is priced at 10^10, which must not make the
        # database compile a query that still scans (90 ms to sum ten report counts).
        projects_sum = explain + "SELECT sum(report_count) FROM projects"
        compiled = "JIT" in str(db.session.connection().exec_driver_sql(projects_sum).all())
        db.session.rollback()
    plan = "\n".join(str(row[-1]) for row in plan)
    index = {"sqlite": "VIRTUAL TABLE INDEX", "postgresql": "ix_reports_search_text_trgm"}[dialect]
    assert index in plan, plan
    assert not compiled


def test_the_search_index_follows_deletes(user_client, web_shop):
    for title in ("Alpha checkout", "Beta checkout", "Gamma checkout"):
        file_report(user_client, web_shop["apiKey"], title=title)
    headers = csrf(user_client)
    assert user_client.delete("/api/v1/reports/WS-2", headers=headers).status_code == 204
    assert titles(listing(user_client, search="checkout", sort="created_at")) == [
        "Alpha checkout",
        "Gamma checkout",
    ]
    file_report(user_client, web_shop["apiKey"], title="Delta checkout")
    page = listing(user_client, search="checkout", sort="created_at")
    assert titles(page) == ["Alpha checkout", "Gamma checkout", "Delta checkout"]
    assert page["total"] == 3


def test_the_search_index_follows_edits(user_client, web_shop):
    for title in ("Alpha checkout", "Beta checkout"):
        file_report(user_client, web_shop["apiKey"], title=title, description="Seen today")
    changes = {"title": "Alpha basket", "description": "Seen yesterday"}
    user_client.patch("/api/v1/reports/WS-1", json=changes, headers=csrf(user_client))
    for searched, expected in (
        ("checkout", ["Beta checkout"]),
        ("basket", ["Alpha basket"]),
        ("yesterday", ["Alpha basket"]),
        ("today", ["Beta checkout"]),
    ):
        page = listing(user_client, search=searched)
        assert (titles(page), page["total"]) == (expected, 1), searched


def test_a_report_is_found_before_the_fan_out_indexes_it(app, user_client, web_shop):
    """SQLite's search index takes new reports in the fan-out (search.index_new); until then a
    search finds a report by its waiting event: from its 201 on, as edited, counted once, and
    not once deleted. The same answers after the fan-out, from the index."""
    for title in ("Alpha checkout", "Beta checkout", "Gamma checkout", "Delta basket"):
        headers = {"X-API-Key": web_shop["apiKey"]}
        body = {**REPORT, "title": title, "description": "Seen on the report form"}
        filed = user_client.post("/api/v1/reports", json=body, headers=headers)
        assert filed.status_code == 201, filed.get_json()
    headers = csrf(user_client)
    user_client.patch("/api/v1/reports/WS-2", json={"title": "Beta basket"}, headers=headers)
    assert user_client.delete("/api/v1/reports/WS-3", headers=headers).status_code == 204
    expected = {
        "checkout": ["Alpha checkout"],  # read from its matches
        "basket": ["Delta basket", "Beta basket"],
        "report": ["Delta basket", "Beta basket", "Alpha checkout"],  # off the sort index
    }
    for fanned_out in (False, True):
        if fanned_out:
            assert fan_out(app) == 4
        for searched, titled in expected.items():
            page = listing(user_client, search=searched)
            assert (titles(page), page["total"]) == (titled, len(titled)), (searched, fanned_out)


def test_totals_without_filters_follow_creates_and_deletes(user_client, web_shop, backend):
    for _ in range(3):
        file_report(user_client, web_shop["apiKey"])
    for _ in range(2):
        file_report(user_client, backend["apiKey"])
    user_client.delete("/api/v1/reports/WS-1", headers=csrf(user_client))
    assert listing(user_client)["total"] == 4
    assert listing(user_client, project_id=web_shop["id"])["total"] == 2
    assert listing(user_client, project_id=backend["id"])["total"] == 2
    assert listing(user_client, status="new")["total"] == 4


def test_reads_do_not_wait_for_a_writer(tmp_path):
    """On SQLite a GET reads in a transaction that takes no lock, so the dashboard lists and
    searches while a worker stores a report, and a long search holds up no report."""
    app = migrated_sqlite_app(tmp_path)
    client = app.test_client()
    register(client)
    project = create_project(client)
    report = file_report(client, project["apiKey"], title="Checkout button does nothing")
    report = report.get_json()
    with writer_holding_the_lock(tmp_path / "svc.sqlite3"):
        # Each of these used to wait out the busy timeout (10 s), then fail: database locked.
        assert titles(listing(client)) == ["Checkout button does nothing"]
        assert listing(client, search="button")["total"] == 1
        response = client.get(f"/api/v1/reports/{report['trackingId']}")
        assert response.status_code == 200 and response.get_json()["id"] == report["id"]
        assert client.get("/readyz").status_code == 200
    with app.app_context():
        db.engine.dispose()


def _insert_reports(
    project_ids,
    start,
    stop,
    title=str,
    severity=lambda n: "low",
    first=datetime(2026, 1, 1, tzinfo=UTC),
    apart=timedelta(minutes=1),
):
    """Reports start..stop-1, in turn of the projects, `apart` from `first` on, straight into
    the table; indexed for search and the projects' counters kept, as the service keeps
    them."""
    rows = [
        {
            "id": uuid.uuid4(),
            "project_id": project_ids[n % len(project_ids)],
            "number": n // len(project_ids) + 1,
            "title": title(n),
            "description": "d",
            "severity": severity(n),
            "severity_rank": SEVERITY_RANK[severity(n)],
            "category": "bug",
            "created_at": first + apart * n,
        }
        for n in range(start, stop)
    ]
    db.session.execute(insert(Report), rows)
    search_index.index_new(db.session, [row["id"] for row in rows])
    stored = select(func.count()).where(Report.project_id == Project.id).scalar_subquery()
    db.session.execute(update(Project).values(report_count=stored, last_report_number=stored))
    db.session.commit()


def _fill_sqlite(tmp_path, title):
    """An app on SQLite with 2,000 reports in two projects (titled title(n)), their counters
    and planner statistics; its user."""
    app = sqlite_app(tmp_path)
    with app.app_context():
        migrate.upgrade()
    return app, _fill(app, title)


def _fill(app, title):
    """2,000 reports in two projects of a new user (titled title(n)), their counters and
    planner statistics; the user."""
    with app.app_context():
        user = users.register("Ada", "ada@example.com", "correct horse battery")
        project_ids = [projects.create(user, name).project.id for name in ("Shop", "Blog")]
        _insert_reports(project_ids, 0, 2_000, title)
        database.refresh_planner_statistics()
    return user


def _page_and_plan(app, user, read="ORDER BY", **query):
    """A page of listing.list_for and the database's plan for the query that read it (the last
    with `read`: with read="count(", the query that counted its total), in the transaction that
    ran it."""
    with app.app_context():
        with statements_run(db.engine) as statements:
            page = list_for(user, {"sort": "-created_at", "page": 1, "page_size": 20, **query})
        statement, parameters = [s for s in statements if read in s[0]][-1]
        plan = plan_of(db.session.connection(), statement, parameters)
        db.engine.dispose()
    return page, plan


def test_the_hourly_statistics_cover_the_small_tables(app, user_client, web_shop):
    # PostgreSQL's autovacuum would not analyse a table of a few projects or members, ever.
    with app.app_context():
        database.refresh_planner_statistics()
        if db.engine.dialect.name == "sqlite":
            analysed = db.session.scalars(text("SELECT tbl FROM sqlite_stat1"))
        else:
            analysed = db.session.scalars(
                text("SELECT tablename FROM pg_stats WHERE schemaname = current_schema()")
            )
        analysed = set(analysed)
    assert {"users", "projects", "project_members"} <= analysed, analysed


def test_sqlite_statistics_are_a_plain_analyze_s_one_index_at_a_time(tmp_path):
    # An ANALYZE holds SQLite's write lock while it reads: svc analyses each index (and each
    # table without one) by itself, so that filings get the lock in between. The statistics
    # must be the whole ANALYZE's, row for row.
    app, _user = _fill_sqlite(tmp_path, lambda n: f"Report {n}")
    with app.app_context():
        stats = "SELECT tbl, idx, stat FROM sqlite_stat1 ORDER BY tbl, idx"
        by_index = db.session.execute(text(stats)).all()
        db.session.execute(text("DELETE FROM sqlite_stat1"))
        db.session.commit()
        connection = db.engine.raw_connection()
        connection.cursor().execute("ANALYZE")
        connection.close()
        whole = db.session.execute(text(stats)).all()
        db.engine.dispose()
    assert any(row.tbl == "reports" and row.idx == "ix_reports_created" for row in whole)
    assert by_index == whole


def test_with_statistics_sqlite_reads_a_long_list_in_sort_order(tmp_path):
    app, user = _fill_sqlite(tmp_path, lambda n: f"Report {n}")
    page, plan = _page_and_plan(app, user)
    assert [item.title for item in page.items][:2] == ["Report 1999", "Report 1998"]
    assert page.total == 2_000
    assert "SCAN reports USING INDEX ix_reports_created" in plan, plan
    assert "TEMP B-TREE" not in plan, plan


def test_sqlite_walks_a_broad_search_by_its_search_rows_and_counts_among_them(tmp_path):
    app, user = _fill_sqlite(tmp_path, lambda n: f"Report {n} " + ("checkout" if n % 2 else "cart"))
    # Another order than newest first: the search's own read gives no page for it.
    recent = {"search": "checkout", "sort": "-updated_at"}
    page, plan = _page_and_plan(app, user, **recent)
    assert [item.title for item in page.items][-1] == "Report 1961 checkout"
    # Each report walked past is looked up among the matches by its id; the matches are not
    # each mapped to their report before the walk starts.
    assert "report_search_rows USING COVERING INDEX" in plan, plan
    # The total is counted among the search rows, in FTS5's rowid order (no sort), newest
    # first, each match's id and filing time read there too (migration e5a7c9b1d3f4).
    _, plan = _page_and_plan(app, user, read="rowid DESC", **recent)
    assert "SEARCH report_search_rows USING INTEGER PRIMARY KEY" in plan, plan
    assert "TEMP B-TREE" not in plan.split("UNION ALL")[0], plan
    read = re.findall(r"[A-Z]+ reports\b[^/]*", plan)
    # The reports are read only for those not indexed yet, each by its id.
    assert read == ["SEARCH reports USING INDEX sqlite_autoindex_reports_1 (id=?) "], plan


def test_sqlite_pages_a_newest_first_search_among_its_newest_matches(tmp_path):
    """SQLite reads a search's matches newest FTS rowid first, up to the count's limit, once:
    the count, and the newest-first page among them where it ends after every report not read
    was filed (report_search_rows' filed_by). Rowids follow the order reports were indexed in:
    the newest report indexed first, before all the others, is found by the walk instead."""
    app = sqlite_app(tmp_path)
    app.config["SVC_SEARCH_COUNT_LIMIT"] = 5
    with app.app_context():
        migrate.upgrade()
        user = users.register("Ada", "ada@example.com", "correct horse battery")
        project_ids = [projects.create(user, name).project.id for name in ("Shop", "Blog")]
        title = lambda n: f"Report {n} checkout"  # noqa: E731
        _insert_reports(project_ids, 59, 60, title)  # indexed first: the lowest rowid
        _insert_reports(project_ids, 20, 59, title)
        _insert_reports(project_ids, 60, 80, lambda n: f"Report {n} cart")

    def read(search_for, **query):
        with app.app_context(), statements_run(db.engine) as statements:
            page = list_for(
                user,
                {"sort": "-created_at", "page": 1, "page_size": 3, "search": search_for, **query},
            )
        return page, [s for s, _ in statements if "ORDER BY reports.created_at DESC" in s]

    page, orders = read("checkout")
    assert (page.total, page.total_exact) == (5, False)
    assert [item.title for item in page.items] == [f"Report {n} checkout" for n in (59, 58, 57)]
    # Report 59 sorts first but was not among the newest rowids read: the page is walked.
    assert "reports_fts" in orders[-1], orders
    # 20 of "cart", filed and indexed last: no report among those not read was filed later.
    page, orders = read("cart")
    assert [item.title for item in page.items] == [f"Report {n} cart" for n in (79, 78, 77)]
    assert "reports_fts" not in orders[-1], orders  # the page's three, by id
    page, orders = read("cart", page=2)
    assert [item.title for item in page.items] == [f"Report {n} cart" for n in (76, 75, 74)]
    assert "reports_fts" not in orders[-1], orders
    # Fewer than the limit: every match read, so the page is theirs wherever they were filed.
    page, orders = read("59 checkout")
    assert (page.total, page.total_exact) == (1, True)
    assert [item.title for item in page.items] == ["Report 59 checkout"]
    assert "reports_fts" not in orders[-1], orders


def test_a_search_reads_its_page_as_its_count_says(app):
    """A search whose count read every match from the reports (PostgreSQL's; SQLite's with
    other filters) takes its page among them; one counted among SQLite's search rows reads its
    page off the sort index if it is broad, from its matches if it is narrow. Past the count
    limit, how many match is not known: the page is walked. PostgreSQL's own guess, from a
    sample of a hundred texts, can be far off either way."""
    with app.app_context():
        dialect = db.engine.dialect.name
    walked, read_from_matches = {
        "sqlite": ("SCAN reports USING INDEX ix_reports_updated", "TEMP B-TREE FOR ORDER BY"),
        "postgresql": ("Index Scan using ix_reports_created", "Bitmap Heap Scan"),
    }[dialect]
    # SQLite: an order other than newest first, which its search's own read pages (see
    # test_sqlite_pages_a_newest_first_search_among_its_newest_matches).
    sort = {"sqlite": "-updated_at", "postgresql": "-created_at"}[dialect]

    def read_among_matches(**query):
        page, plan = _page_and_plan(app, user, sort=sort, **query)
        assert walked not in plan, plan
        if dialect == "postgresql":  # the count's read, then the page's reports by id
            _, plan = _page_and_plan(app, user, read="OVER (", **query)
        assert read_from_matches in plan and walked not in plan, plan
        return page

    # No sample on PostgreSQL: its planner then takes any search to match one report in 200,
    # as it does a word that its sample missed. (The schema outlives the test: set back after.)
    _search_text_statistics(app, 0)
    limit = app.config["SVC_SEARCH_COUNT_LIMIT"]
    try:
        user = _fill(app, lambda n: f"Report {n} " + ("checkout" if n % 2 else "cart"))
        if dialect == "sqlite":
            page, plan = _page_and_plan(app, user, search="checkout", sort=sort)
            assert walked in plan and read_from_matches not in plan, plan
        else:
            page = read_among_matches(search="checkout")
        assert page.total == 1_000
        assert [item.title for item in page.items][:2] == [
            "Report 1999 checkout",
            "Report 1997 checkout",
        ]

        page = read_among_matches(search="1999 checkout")
        assert [item.title for item in page.items] == ["Report 1999 checkout"]

        # 7 matches: read from them; past a count limit, how many is not known: walked.
        narrow = {"search": "199 checkout", "page_size": 5}
        page = read_among_matches(**narrow)
        assert (page.total, page.total_exact) == (7, True)
        assert [item.title for item in page.items] == [
            f"Report {n} checkout" for n in (1999, 1997, 1995, 1993, 1991)
        ]
        page = read_among_matches(**narrow, page=2)  # the page's place among the matches
        assert [item.title for item in page.items] == [
            "Report 1199 checkout",
            "Report 199 checkout",
        ]
        app.config["SVC_SEARCH_COUNT_LIMIT"] = 3
        # PostgreSQL's walk is the query that reads which walked entries match (its page's
        # reports are then read by id); SQLite's the page's own.
        page, plan = _page_and_plan(app, user, read=_WALK[dialect], sort=sort, **narrow)
        assert (page.total, page.total_exact) == (5, False)  # counted to the page's end
        assert [item.title for item in page.items] == [
            f"Report {n} checkout" for n in (1999, 1997, 1995, 1993, 1991)
        ]
        assert walked in plan and read_from_matches not in plan, plan
    finally:
        app.config["SVC_SEARCH_COUNT_LIMIT"] = limit
        _search_text_statistics(app, -1)


# The query that walks a sort index for a search's page (see _page_and_plan's `read`).
_WALK = {"sqlite": "ORDER BY", "postgresql": " AS hit"}


def test_a_walk_past_the_count_limit_stops_at_its_budget_then_reads_the_matches(app):
    """Past its count limit a search does not know how many match. PostgreSQL walks the sort
    index for at most walk_budget entries, then reads and sorts every match: a search of 40
    old reports among 2,000 walked the whole index for its page of 20 (docs/performance.md,
    "A walk with a budget")."""
    with app.app_context():
        dialect = db.engine.dialect.name
    limit = app.config["SVC_SEARCH_COUNT_LIMIT"]
    app.config["SVC_SEARCH_COUNT_LIMIT"] = 10
    _search_text_statistics(app, 0)
    try:
        user = _fill(app, lambda n: f"Report {n} " + ("oldest" if n < 40 else "later"))
        page, plan = _page_and_plan(app, user, search="oldest")
        assert (page.total, page.total_exact) == (20, False)
        assert [item.title for item in page.items] == [
            f"Report {n} oldest" for n in range(39, 19, -1)
        ]
        page, _ = _page_and_plan(app, user, search="oldest", page=2)
        assert [item.title for item in page.items] == [
            f"Report {n} oldest" for n in range(19, -1, -1)
        ]
        if dialect == "postgresql":
            # The page read from the matches, after a walk that stopped at its budget.
            assert "Bitmap Heap Scan" in plan and "ix_reports_created" not in plan, plan
            _, walk = _page_and_plan(app, user, read=" AS hit", search="oldest")
            assert walk.count("Limit") == 2, walk  # the page's, and the budget's
    finally:
        app.config["SVC_SEARCH_COUNT_LIMIT"] = limit
        _search_text_statistics(app, -1)


def test_a_search_counts_among_the_newest_first_where_the_projects_hold_many(app):
    """On PostgreSQL a search first counts among the newest SVC_SEARCH_COUNT_WINDOW reports (to
    the day, by the daily counters) where the projects hold 24 windows or more: matches up to
    the count's limit there are a lower bound of the total without a count over every report
    (docs/performance.md, "A search's count in the newest reports"). Fewer there: counted over
    every report, as before, and a newest-first page that they hold whole is read there alone.
    The answers are the same either way."""
    saved = {
        name: app.config[name] for name in ("SVC_SEARCH_COUNT_LIMIT", "SVC_SEARCH_COUNT_WINDOW")
    }
    # 600 reports below: 24 windows of 25.
    app.config.update(SVC_SEARCH_COUNT_LIMIT=5, SVC_SEARCH_COUNT_WINDOW=25)
    try:
        with app.app_context():
            dialect = db.engine.dialect.name
            user = users.register("Ada", "ada@example.com", "correct horse battery")
            project_ids = [projects.create(user, name).project.id for name in ("Shop", "Blog")]
            _file_every_two_hours(
                project_ids,
                600,
                lambda n: (
                    f"Report {n} {'plain' if n % 3 else 'common'}{' oldest' * (n < 40)}"
                    + " sparse" * (n % 12 == 0)
                ),
            )

        def read(search_for):
            """The page, and what each statement that read the search did: among the newest,
            or over every report a count, a read of the matches, a walk of the sort index or
            the page's query."""
            with app.app_context(), statements_run(db.engine) as statements:
                page = list_for(
                    user, {"sort": "-created_at", "page": 1, "page_size": 2, "search": search_for}
                )
                db.session.commit()
            searched = "search_text" if dialect == "postgresql" else "reports_fts"
            did = [
                "newest" if "date_trunc(" in s or "rowid DESC" in s else
                "matches" if " OVER " in s else
                "walk" if " AS hit" in s else
                "count" if "count(" in s else "page"
                for s, _ in statements if searched in s
            ]  # fmt: skip
            return page, did

        page, did = read("common")
        assert (page.total, page.total_exact) == (5, False)
        assert [item.title for item in page.items] == ["Report 597 common", "Report 594 common"]
        # The newest held enough of "common" (PostgreSQL): no count over every report. SQLite
        # reads its newest matches by index order once, for the count and the page.
        assert did == (["newest", "walk"] if dialect == "postgresql" else ["newest"])
        page, did = read("sparse")
        assert (page.total, page.total_exact) == (5, False)
        assert [item.title for item in page.items] == [
            "Report 588 common sparse",
            "Report 576 common sparse",
        ]
        # The newest held the page but not the limit (PostgreSQL): counted over every report,
        # the page read among the newest alone.
        assert did == (["newest", "count"] if dialect == "postgresql" else ["newest"])
        page, did = read("oldest")
        assert (page.total, page.total_exact) == (5, False)
        assert [item.title for item in page.items] == [
            "Report 39 common oldest",
            "Report 38 plain oldest",
        ]
        # None of "oldest" among the newest: read over every report too.
        assert did[:2] == (["newest", "matches"] if dialect == "postgresql" else ["newest"])
        if dialect == "postgresql":
            with app.app_context(), statements_run(db.engine) as statements:
                search.steer_planner(db.session, "common", dialect)
                since = utcnow().date() - timedelta(days=2)
                db.session.execute(
                    select(func.count()).where(
                        search.filed_since(since), search.condition("common", dialect)
                    )
                )
                plan = plan_of(db.session.connection(), *statements[-1])
                db.session.commit()
            # The search index answers the window's bound and the word together.
            assert "Bitmap Index Scan on ix_reports_search_text_trgm" in plan, plan
            assert "Index Cond: ((date_trunc('day'" in plan and "~~" in plan, plan

        app.config["SVC_SEARCH_COUNT_WINDOW"] = 26  # 600 reports: fewer than 24 windows
        page, did = read("common")
        assert [item.title for item in page.items] == ["Report 597 common", "Report 594 common"]
        assert (page.total, page.total_exact) == (5, False)
        assert did == (["matches", "walk"] if dialect == "postgresql" else ["newest"])
    finally:
        app.config.update(saved)


def test_a_sparse_search_looks_for_its_page_among_wider_newest_windows_while_they_pay(app):
    """A window of the newest that holds too few matches for a newest-first page is followed by
    one as much wider as their rate asks (search.wider_window), while it pays: the page is read
    there, and only the count goes over every report (docs/performance.md, "Two words at ten
    million"). A list in another order looks in one window, for the count alone. Answers as
    without windows."""
    saved = {
        name: app.config[name] for name in ("SVC_SEARCH_COUNT_LIMIT", "SVC_SEARCH_COUNT_WINDOW")
    }
    # 1,200 reports, 12 a day: windows of 10 to 50 pay (24 of them or more).
    app.config.update(SVC_SEARCH_COUNT_LIMIT=5, SVC_SEARCH_COUNT_WINDOW=10)
    # In the first window (at most 22 reports: a day and part of another), in the wider one
    # (40 or more) and among the oldest.
    thin = {1195, 1165} | set(range(0, 1000, 50))
    try:
        with app.app_context():
            dialect = db.engine.dialect.name
            user = users.register("Ada", "ada@example.com", "correct horse battery")
            project_ids = [projects.create(user, "Shop").project.id]
            _file_every_two_hours(
                project_ids, 1200, lambda n: f"Report {n}" + " thin" * (n in thin)
            )

        def read(sort):
            with app.app_context(), statements_run(db.engine) as statements:
                page = list_for(user, {"sort": sort, "page": 1, "page_size": 2, "search": "thin"})
                db.session.commit()
            return page, [s for s, _ in statements if "search_text" in s or "reports_fts" in s]

        page, searched = read("-created_at")
        assert [item.title for item in page.items] == ["Report 1195 thin", "Report 1165 thin"]
        assert (page.total, page.total_exact) == (5, False)
        windows = [s for s in searched if "date_trunc(" in s]
        if dialect == "postgresql":
            # Two windows, then the count over every report; no read of every match.
            assert len(windows) == 2 and len(searched) == 3, searched
            assert "count(" in searched[2] and " OVER " not in searched[2], searched[2]
        else:
            assert windows == []
        # Oldest first, the newest hold no page: one window, for the count.
        page, searched = read("created_at")
        assert [item.title for item in page.items] == ["Report 0 thin", "Report 50 thin"]
        windows = [s for s in searched if "date_trunc(" in s]
        assert len(windows) == (dialect == "postgresql"), searched
    finally:
        app.config.update(saved)


def _file_every_two_hours(project_ids, count: int, title) -> None:
    """`count` reports, 12 a day, the newest an hour ago, with their daily counters and the
    planner's statistics, as the search windows read them."""
    apart = timedelta(hours=2)
    first = utcnow() - apart * (count - 1) - timedelta(hours=1)
    _insert_reports(project_ids, 0, count, title, first=first, apart=apart)
    stats.recount_all(db.session.connection())
    db.session.commit()
    database.refresh_planner_statistics()


def _search_text_statistics(app, target: int) -> None:
    """PostgreSQL's statistics target for reports.search_text (-1: the default)."""
    with app.app_context():
        if db.engine.dialect.name == "postgresql":
            db.session.execute(
                text(f"ALTER TABLE reports ALTER search_text SET STATISTICS {target}")
            )
            db.session.commit()


def _steps_of_a_page(app, user, query) -> int:
    """How many steps SQLite's virtual machine takes (in hundreds) for listing.list_for: a
    measure of its work that does not depend on the machine's speed or load."""
    with app.app_context():
        driver = db.session.connection().connection.driver_connection
        steps = []
        driver.set_progress_handler(lambda: steps.append(1) and 0, 100)
        list_for(user, {"sort": "-created_at", "page": 1, "page_size": 20, **query})
        driver.set_progress_handler(None, 100)
        db.session.commit()
    return len(steps)


def test_every_sort_reads_its_first_page_in_steps_that_do_not_grow_with_the_reports(tmp_path):
    """Ten times the reports, about the same work for a first page, in every sort, with and
    without a project. Least severe first used to sort every report of the least severe kind
    (no index holds that order whole: its ties run newest first), which grows tenfold."""
    app = sqlite_app(tmp_path)
    with app.app_context():
        migrate.upgrade()
        user = users.register("Ada", "ada@example.com", "correct horse battery")
        project_ids = [projects.create(user, name).project.id for name in ("Shop", "Blog")]
    sorts = ("-created_at", "created_at", "-updated_at", "updated_at", "-severity", "severity")
    queries = [
        {"sort": sort, **({"project_id": project_ids[0]} if one_project else {})}
        for sort in sorts
        for one_project in (False, True)
    ]
    steps = {}
    for start, stop in ((0, 600), (600, 6_000)):
        with app.app_context():
            _insert_reports(project_ids, start, stop, severity=lambda n: SEVERITIES[n // 2 % 4])
            database.refresh_planner_statistics()
            db.engine.dispose()  # a connection reads the planner statistics when it opens
        steps[stop] = [_steps_of_a_page(app, user, query) for query in queries]
    growth = {
        " ".join(map(str, query.values())): round(large / small, 1)
        for query, small, large in zip(queries, steps[600], steps[6_000], strict=True)
    }
    assert all(factor < 2 for factor in growth.values()), growth
    with app.app_context():
        db.engine.dispose()


def test_a_search_walks_the_sort_index_only_when_that_reads_less():
    # 20 of 100,000 reports: 1,400 matches fill a page within 1,429 index entries; 140 do not.
    assert search.walk_sort_index("sqlite", matches=1_400, page_end=20, reports=100_000)
    assert not search.walk_sort_index("sqlite", matches=140, page_end=20, reports=100_000)
    assert not search.walk_sort_index("sqlite", matches=1_400, page_end=20_000, reports=100_000)
    assert not search.walk_sort_index("sqlite", matches=0, page_end=20, reports=0)
    # On PostgreSQL each entry walked past is a report read, as each match is.
    assert search.walk_sort_index("postgresql", matches=14_000, page_end=20, reports=1_000_000)
    assert not search.walk_sort_index("postgresql", matches=1_400, page_end=20, reports=1_000_000)
    assert not search.walk_sort_index(
        "postgresql", matches=14_000, page_end=1_000, reports=1_000_000
    )
    # Where the two meet: a walk of sqrt(cost x page_end x reports) entries, on PostgreSQL.
    assert search.walk_budget("postgresql", page_end=20, reports=10_000_000) == 14_143
    assert search.walk_budget("postgresql", page_end=1_000, reports=10_000_000) == 100_001
    assert search.walk_budget("sqlite", page_end=20, reports=10_000_000) is None


def test_a_search_counts_its_matches_up_to_its_limit(make_app):
    """Past SVC_SEARCH_COUNT_LIMIT a search's total is a lower bound and says so; a page past
    it is counted to its end, and a page past the last has the exact total (docs/api.md §8.2).
    Indexed matches and those whose created event waits (not indexed yet) alike."""
    app = make_app(SVC_SEARCH_COUNT_LIMIT=4)
    client = app.test_client()
    register(client)
    project = create_project(client, "Web Shop")
    for number in range(9):
        file_report(client, project["apiKey"], title=f"checkout {number}")
    for number in range(9, 11):  # not indexed yet: their events wait for the fan-out
        made = client.post(
            "/api/v1/reports",
            json={**REPORT, "title": f"checkout {number}"},
            headers={"X-API-Key": project["apiKey"]},
        )
        assert made.status_code == 201
    file_report(client, project["apiKey"], title="basket")

    def page(**params):
        answer = client.get("/api/v1/reports", query_string={"search": "checkout", **params})
        assert answer.status_code == 200
        return answer.get_json()

    first = page(page_size=2)
    assert (first["total"], first["totalExact"], len(first["items"])) == (4, False, 2)
    third = page(page_size=2, page=3)
    assert (third["total"], third["totalExact"], len(third["items"])) == (6, False, 2)
    last = page(page_size=3, page=4)
    assert (last["total"], len(last["items"])) == (11, 2) and "totalExact" not in last
    past = page(page_size=5, page=7)
    assert (past["total"], past["items"]) == (11, []) and "totalExact" not in past
    # Under the limit, and a list with no search, exact as ever: nothing more is said.
    narrow = page(search="checkout 1")
    assert narrow["total"] == 2 and "totalExact" not in narrow  # "checkout 1", "checkout 10"
    everything = client.get("/api/v1/reports").get_json()
    assert everything["total"] == 12 and "totalExact" not in everything


def test_a_bulk_load_indexes_in_few_segments_and_leaves_fts5_as_it_was(tmp_path):
    """index_all (a fill, a copy into SQLite) writes its reports' words with a hash large enough
    for few segments and no merges, then sets FTS5's defaults again for the fan-out. With
    FTS5's 1 MiB hash these 3,000 reports' trigrams took several segments: at ten million, 739
    of them cost every search a seek in each for each trigram (docs/performance.md)."""
    app = migrated_sqlite_app(tmp_path)
    rng = random.Random(3)
    with app.app_context():
        user = users.register("Ada", "ada@example.com", "correct horse battery")
        project = projects.create(user, "Shop").project
        words = ["".join(rng.choices(string.ascii_lowercase, k=7)) for _ in range(5_000)]
        rows = [
            {
                "id": uuid.uuid4(),
                "project_id": project.id,
                "number": n + 1,
                "title": f"Report {n}",
                "description": " ".join(rng.choices(words, k=70)),
                "severity": "low",
                "severity_rank": SEVERITY_RANK["low"],
                "category": "bug",
            }
            for n in range(3_000)
        ]
        db.session.execute(insert(Report), rows)
        search_index.index_all(db.session)
        db.session.commit()
        segments = db.session.execute(
            text("SELECT count(DISTINCT segid) FROM reports_fts_idx")
        ).scalar()
        settings = dict(db.session.execute(text("SELECT k, v FROM reports_fts_config")).all())
        word = rows[1_234]["description"].split()[10]
        query = {"search": word, "sort": "-created_at", "page": 1, "page_size": 100}
        page = list_for(user, query)
    assert segments == 1
    assert {name: settings[name] for name in search_index.FTS5_DEFAULTS} == (
        search_index.FTS5_DEFAULTS
    )
    expected = {row["title"] for row in rows if word in row["description"]}
    assert {item.title for item in page.items} == expected
