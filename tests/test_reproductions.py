"""Reproductions (docs/repro-kit.md, "The runner"; contract v6 §25): a report's steps run by
Playwright's test runner in Debian's Chromium against a staging site in the tests whose checkout
is broken on purpose, and what the report gets of it.

The runner's tests need Chromium and Node's @playwright/test (make test installs both).
"""

import io
import json
import subprocess
import sys
import zipfile

import pytest
from playwright.sync_api import expect
from sqlalchemy import func, select

from harness.client import PASSWORD, csrf, register
from svc.extensions import db
from svc.models import Reproduction, Screenshot
from svc.services.reproductions import browser as repro_browser
from svc.services.reproductions import runs
from tests.browser import OPEN_SHADOW_ROOTS, signed_in_context
from tests.helpers import fan_out, team_with_project
from tests.host_site.checkout import CheckoutSite

pytestmark = pytest.mark.skipif(
    repro_browser.browser_path("auto") is None, reason="no Chromium on this machine"
)
T0 = 1_767_225_600_000
PAY_ERROR = "Uncaught TypeError: Cannot read properties of undefined (reading 'id')"


def set_repro(owner, **repro):
    return owner.patch(
        f"/api/v1/projects/{owner.project['id']}",
        json={"settings": {"repro": repro}},
        headers=csrf(owner),
    )


def file_checkout_report(owner, page_url: str, **more) -> dict:
    """A report as the widget files it after a failed Pay on `page_url`."""
    body = {
        "title": "Pay does nothing",
        "description": "I pressed Pay and nothing happened",
        "severity": "high",
        "category": "bug",
        "metadata": {"url": page_url},
        "user_actions": [
            {"type": "click", "target": "button#pay", "timestamp": T0 + 1000,
             "locator": {"role": "button", "name": "Pay now"}},
        ],
        "console_logs": [
            {"level": "error", "message": PAY_ERROR, "timestamp": T0 + 1100,
             "stack": f"TypeError: x\n    at {page_url}:30:50"},
        ],
        "network_logs": [
            {"method": "POST", "url": page_url.rsplit("/", 1)[0] + "/api/pay", "status": 500,
             "timestamp": T0 + 1050},
        ],
        **more,
    }  # fmt: skip
    response = owner.post("/api/v1/reports", json=body, headers={"X-API-Key": owner.key})
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def page_with_widget(context, url: str):
    """A reporter's page at `url`, the widget loaded (its shadow root open to the test)."""
    page = context.new_page()
    page.add_init_script(OPEN_SHADOW_ROOTS)
    page.goto(url)
    page.wait_for_selector("[data-svc-widget]", state="attached")
    return page


def file_with_widget(page, title: str, tracking_id: str) -> None:
    page.get_by_role("button", name="Report a bug").click()
    form = page.get_by_role("dialog", name="Report a bug")
    form.get_by_label("Title").fill(title)
    form.get_by_role("button", name="Send report").click()
    expect(form.get_by_role("status")).to_contain_text(f"Thanks — {tracking_id}")


def run_queued(app) -> list:
    """What the scheduler's runner does: every queued run, one at a time; their ids."""
    done = []
    with app.app_context():
        while (run_id := runs.run_next()) is not None:
            done.append(run_id)
    return done


def reproduce(owner, reference: str) -> dict:
    response = owner.post(f"/api/v1/reports/{reference}/reproductions", headers=csrf(owner))
    assert response.status_code == 202, response.get_json()
    assert response.get_json()["status"] == "queued"
    return response.get_json()


def test_a_broken_checkout_is_reproduced_and_its_fix_is_not(app):
    owner = team_with_project(app)
    with CheckoutSite() as site:
        report = file_checkout_report(owner, "https://shop.example/checkout")
        # No staging origin: nothing is run.
        refused = owner.post("/api/v1/reports/WS-1/reproductions", headers=csrf(owner))
        assert refused.status_code == 409
        assert "staging origin" in refused.get_json()["detail"]
        assert set_repro(owner, origin=site.url, timeout_seconds=30).status_code == 200

        first = reproduce(owner, "WS-1")
        assert run_queued(app)
        [run] = owner.get("/api/v1/reports/WS-1/reproductions").get_json()["items"]
        assert site.hits.get("/checkout") == 1, json.dumps(run)
        assert run["id"] == first["id"] and run["status"] == "done", run
        assert run["verdict"] == "reproduced", run
        assert run["evidence"] == [
            "console: typeerror: cannot read property id of undefined",
            "request: POST /api/pay -> 500",
        ]
        assert run["failedStep"] is None and run["stepsRun"] == 2
        assert run["requestedBy"]["name"] == "Ada Lovelace" and run["auto"] is False
        assert site.hits.get("/api/pay") == 1

        # The trace opens: a zip of Playwright's, whose actions include the click on Pay.
        trace = owner.get(run["traceUrl"])
        assert trace.status_code == 200
        with zipfile.ZipFile(io.BytesIO(trace.get_data())) as archive:
            names = archive.namelist()
            actions = "".join(
                archive.read(name).decode(errors="replace")
                for name in names
                if name.endswith(".trace")
            )
        assert "test.trace" in names and "Pay now" in actions, names
        shot = owner.get(run["screenshotUrl"])
        assert shot.status_code == 200 and shot.get_data()[:8] == b"\x89PNG\r\n\x1a\n"

        # The fix: run again, not reproduced.
        site.broken = False
        reproduce(owner, "WS-1")
        run_queued(app)
        latest, earlier = owner.get("/api/v1/reports/WS-1/reproductions").get_json()["items"]
        assert (latest["verdict"], earlier["verdict"]) == ("not_reproduced", "reproduced")
        assert latest["evidence"] == [] and latest["stepsRun"] == 2
    full = owner.get("/api/v1/reports/WS-1").get_json()
    assert full["lastReproduction"]["id"] == latest["id"]
    listed = owner.get("/api/v1/reports?reproduced=false").get_json()["items"]
    assert [item["trackingId"] for item in listed] == ["WS-1"]
    assert owner.get("/api/v1/reports?reproduced=true").get_json()["items"] == []
    kinds = owner.get("/api/v1/reports/WS-1/activity").get_json()
    said = [entry["changes"]["verdict"] for entry in kinds if entry["kind"] == "reproduced"]
    assert said == [{"from": None, "to": "reproduced"}, {"from": "reproduced",
                                                        "to": "not_reproduced"}]  # fmt: skip
    assert report["lastReproduction"] is None


@pytest.mark.any_database  # the sandbox's and the browser's doing: the database cannot change it
def test_the_run_reaches_the_staging_origin_alone_and_stops_at_its_limit(app):
    """A request of the page to another origin is aborted and counted; a link whose answer
    redirects elsewhere goes nowhere (a route never sees a navigation's redirect: the proxy
    does); a page that never answers is stopped at the limit, and the run says which step."""
    owner = team_with_project(app)
    with (
        CheckoutSite() as elsewhere,
        CheckoutSite(elsewhere=elsewhere.url, redirect_to=elsewhere.url) as site,
    ):
        assert set_repro(owner, origin=site.url, timeout_seconds=10).status_code == 200
        leave = [{"type": "click", "target": "a", "timestamp": T0 + 2000,
                  "locator": {"role": "link", "name": "Leave"}}]  # fmt: skip
        file_checkout_report(owner, "https://shop.example/checkout", user_actions=leave)
        reproduce(owner, "WS-1")
        run_queued(app)
        [run] = owner.get("/api/v1/reports/WS-1/reproductions").get_json()["items"]
        assert run["requestsBlocked"] >= 1, run
        assert site.hits.get("/away") == 1 and elsewhere.hits == {}, elsewhere.hits
        assert run["verdict"] in ("failed", "not_reproduced"), run

        stuck = [{"type": "click", "target": "a", "timestamp": T0 + 2000,
                  "locator": {"role": "link", "name": "Stuck"}},
                 {"type": "click", "target": "button#pay", "timestamp": T0 + 3000,
                  "locator": {"role": "button", "name": "Pay now"}}]  # fmt: skip
        file_checkout_report(owner, "https://shop.example/checkout", user_actions=stuck,
                             console_logs=[], network_logs=[])  # fmt: skip
        reproduce(owner, "WS-2")
        run_queued(app)
        [run] = owner.get("/api/v1/reports/WS-2/reproductions").get_json()["items"]
    assert run["verdict"] == "failed", run
    assert run["failedStep"]["index"] in (2, 3), run  # the click that led nowhere, or the next
    assert run["durationMs"] < (10 + repro_browser.GRACE_SECONDS) * 1000, run


def test_a_stranger_sees_no_run_and_a_service_without_a_browser_says_so(app, make_app):
    owner = team_with_project(app)
    file_checkout_report(owner, "https://shop.example/checkout")
    assert set_repro(owner, origin="https://staging.shop.example").status_code == 200
    stranger = app.test_client()
    register(stranger, email="eve@example.com", name="Eve")
    assert stranger.get("/api/v1/reports/WS-1/reproductions").status_code == 404

    without = make_app(SVC_REPRO_BROWSER="off")
    owner_there = without.test_client()
    owner_there.post("/api/v1/auth/login", json={"email": "ada@example.com", "password": PASSWORD})
    answer = owner_there.post("/api/v1/reports/WS-1/reproductions", headers=csrf(owner_there))
    assert answer.status_code == 409
    assert "SVC_REPRO_BROWSER is off" in answer.get_json()["detail"]
    assert owner_there.get("/api/v1/reports/WS-1/reproductions").get_json() == {
        "items": [],
        "unavailable": "SVC_REPRO_BROWSER is off",
    }
    assert owner.get("/api/v1/admin/health").get_json()["reproductions"] == {
        "unavailable": None,
        "queued": 0,
    }


def test_auto_runs_new_reports_with_steps_thirty_an_hour(app):
    owner = team_with_project(app)
    set_repro(owner, origin="https://staging.shop.example", auto=True)
    owner.patch(f"/api/v1/projects/{owner.project['id']}",
                json={"settings": {"webhook_url": None}}, headers=csrf(owner))  # fmt: skip
    file_checkout_report(owner, "https://shop.example/checkout")
    file_checkout_report(owner, "https://shop.example/checkout", user_actions=[])  # no steps
    fan_out(app)
    with app.app_context():
        queued = db.session.scalars(select(Reproduction)).all()
        assert [(run.auto, run.status, run.requested_by_id) for run in queued] == [
            (True, "queued", None)
        ]
        for _ in range(runs.AUTO_PER_HOUR - 1):
            db.session.add(Reproduction(report_id=queued[0].report_id,
                                        project_id=queued[0].project_id, auto=True))  # fmt: skip
        db.session.commit()
    file_checkout_report(owner, "https://shop.example/checkout")
    fan_out(app)
    with app.app_context():
        assert db.session.query(Reproduction).count() == runs.AUTO_PER_HOUR


HOLD_SLOT = """
import fcntl, sys, time
handle = open(sys.argv[1], "a+")
fcntl.flock(handle, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(60)
"""


def test_one_run_at_a_time_per_host_whichever_process_holds_it(app):
    """Another process of the host holds the slot (as a second scheduler running a run
    would): this one takes nothing, and the run waits, queued; then it runs."""
    owner = team_with_project(app)
    file_checkout_report(owner, "https://shop.example/checkout")
    set_repro(owner, origin="https://staging.shop.example")
    reproduce(owner, "WS-1")
    lock = f"{app.instance_path}/repro-slot-0.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_SLOT, lock], stdout=subprocess.PIPE,
                              text=True)  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        with app.app_context():
            assert runs.run_next() is None
            assert db.session.scalar(select(Reproduction.status)) == "queued"
    finally:
        holder.kill()
        holder.wait()
    with app.app_context():
        assert runs.run_next() is not None
        assert db.session.scalar(select(Reproduction.status)) == "done"


@pytest.mark.browser
@pytest.mark.any_database  # a page in the browser: the database cannot change it
def test_a_report_filed_through_the_widget_is_reproduced(browser, app, live_server):
    """The whole way: a reporter on the broken checkout presses Pay, then files a report with
    the widget in Chromium; the run of its steps on the staging site says reproduced."""
    owner = team_with_project(app)
    with CheckoutSite(svc_url=live_server) as site:
        context = browser.new_context()
        page = page_with_widget(context, f"{site.url}/checkout?project={owner.key}")
        errors = []
        page.on("pageerror", lambda error: errors.append(error.message))
        with page.expect_event("pageerror"):
            page.get_by_role("button", name="Pay now").click()
        file_with_widget(page, "Pay does nothing", "WS-1")
        context.close()
        assert errors and "reading 'id'" in errors[0]
        assert set_repro(owner, origin=site.url).status_code == 200
        reproduce(owner, "WS-1")
        run_queued(app)
        [run] = owner.get("/api/v1/reports/WS-1/reproductions").get_json()["items"]
    assert run["verdict"] == "reproduced", run
    assert "request: POST /api/pay -> 500" in run["evidence"], run
    assert run["requestsBlocked"] >= 1  # the widget's own script, from svc's origin


@pytest.mark.browser
@pytest.mark.any_database  # a page in the browser: the database cannot change it
def test_the_dashboard_sets_the_origin_runs_and_shows_the_verdict(browser, app, live_server):
    owner = team_with_project(app)
    with CheckoutSite() as site:
        file_checkout_report(owner, f"{site.url}/checkout")
        context = signed_in_context(browser, owner, live_server)
        page = context.new_page()
        page.goto(f"{live_server}/projects/{owner.project['id']}")
        settings = page.get_by_role("form", name="On staging")
        settings.get_by_label("Staging origin").fill(site.url)
        settings.get_by_role("button", name="Save").click()
        expect(settings.get_by_role("status")).to_have_text(f"Reports run on {site.url}.")

        page.goto(f"{live_server}/reports/WS-1")
        panel = page.get_by_role("region", name="On staging")
        expect(panel).to_contain_text("Never run.")
        panel.get_by_role("button", name="Run on staging").click()
        expect(panel).to_contain_text("queued")
        run_queued(app)
        expect(panel).to_contain_text("Reproduced on staging", timeout=15_000)
        expect(panel.get_by_text("request: POST /api/pay -> 500")).to_be_visible()
        expect(panel.get_by_role("link", name="Trace")).to_have_attribute("download", "trace.zip")
        expect(panel.get_by_role("button", name="Run again")).to_be_visible()

        page.goto(f"{live_server}/reports?reproduced=true")
        expect(page.get_by_role("link", name="WS-1", exact=True)).to_be_visible()
        context.close()


@pytest.mark.browser
@pytest.mark.any_database  # a page in the browser: the database cannot change it
def test_every_recorded_click_of_the_corpus_replays(browser, app, live_server):
    """Headings, a form's field and button, a link, a table's cell, words in a span and a div,
    a test id of the project's own attribute, a button in an open shadow root: clicked by a
    reporter with the widget on, filed, then run on the same site. Every step runs (the run
    is inconclusive: the report holds no error), and the page sees the same clicks again."""
    owner = team_with_project(app)
    owner.patch(f"/api/v1/projects/{owner.project['id']}",
                json={"settings": {"widget": {"test_id_attribute": "data-qa"}}},
                headers=csrf(owner))  # fmt: skip
    with CheckoutSite(svc_url=live_server) as site:
        context = browser.new_context()
        page = page_with_widget(context, f"{site.url}/account?project={owner.key}")
        page.get_by_role("heading", name="Account").click()
        page.get_by_label("Nickname").fill("Ada")
        page.get_by_role("button", name="Save profile").click()
        page.get_by_role("link", name="Details").click()
        page.get_by_text("Order 1001").click()
        page.get_by_text("Plain words in a span").click()
        page.get_by_text("Text in a div").click()
        page.locator("[data-qa=buy]").click()
        page.get_by_role("button", name="Inside the shadow").click()
        file_with_widget(page, "Clicks", "WS-1")
        context.close()
        clicked, site.seen = list(site.seen), []
        assert len(clicked) == 8, json.dumps(clicked)

        assert set_repro(owner, origin=site.url).status_code == 200
        spec = owner.get("/api/v1/reports/WS-1/repro.spec.ts").get_data(as_text=True)
        assert 'test.use({ testIdAttribute: "data-qa" });' in spec
        assert 'page.getByTestId("buy")' in spec, spec
        reproduce(owner, "WS-1")
        run_queued(app)
        [run] = owner.get("/api/v1/reports/WS-1/reproductions").get_json()["items"]
        replayed = list(site.seen)
    assert run["failedStep"] is None, (run, spec)
    assert run["verdict"] == "inconclusive", run
    assert replayed == clicked, spec


def test_a_report_deleted_while_its_run_is_under_way_leaves_nothing(app, monkeypatch):
    """The member deletes the report while the browser runs: the run's row went with it, and
    nothing of the run (its trace, its screenshot) is kept for a report that is gone."""
    owner = team_with_project(app)
    with CheckoutSite() as site:
        file_checkout_report(owner, "https://shop.example/checkout")
        set_repro(owner, origin=site.url)
        reproduce(owner, "WS-1")
        real_run = repro_browser.run

        def run_then_delete(*arguments):
            outcome = real_run(*arguments)
            assert owner.delete("/api/v1/reports/WS-1", headers=csrf(owner)).status_code == 204
            return outcome

        monkeypatch.setattr(repro_browser, "run", run_then_delete)
        assert len(run_queued(app)) == 1
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(Reproduction)) == 0
        assert db.session.scalar(select(func.count()).select_from(Screenshot)) == 0
