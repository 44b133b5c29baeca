"""Issue trackers (docs/api.md §15, docs/integrations.md), against a local HTTPS server that
answers as GitHub, GitLab, Jira and Linear do (harness/trackers.py); the tracker's webhooks
into svc are signed as each tracker signs them."""

import base64
import hashlib
import hmac
import json
import tarfile
import uuid
from datetime import timedelta

import pytest
import requests
from playwright.sync_api import expect
from sqlalchemy import select, update

from harness.client import PASSWORD, create_pat, create_project, csrf, new_member, register
from harness.trackers import JIRA_EMAIL, TOKEN, FakeTrackers, adf_problems
from svc.extensions import db
from svc.models import IntegrationCall
from svc.models.base import utcnow
from svc.operations import backup
from svc.services.trackers import integrations, tracker_calls
from tests.browser import save_screenshot
from tests.helpers import file_report, run_in_processes
from tests.test_dashboard import create_project as create_project_in_browser
from tests.test_dashboard import sign_up

KINDS = ["github", "gitlab", "jira", "jira-server", "linear"]


@pytest.fixture
def trackers(certificate_authority):
    server = FakeTrackers(certificate_authority[0]).start()
    yield server
    server.stop()


@pytest.fixture
def tracker_setup(make_app, certificate_authority, trackers):
    """(app, Ada the owner, Web Shop), trackers reachable on 127.0.0.1 with their certificate."""
    app = make_app(
        SVC_WEBHOOK_ALLOW_PRIVATE="true",
        SVC_WEBHOOK_CA_BUNDLE=certificate_authority[1],
        SVC_WEBHOOK_TIMEOUT="3",
        SVC_INTEGRATION_RETRY_DELAYS="5,5,5",
        SVC_PUBLIC_URL="https://bugs.example.com",
    )
    ada = app.test_client()
    ada.user = register(ada)
    return app, ada, create_project(ada)


def config_for(kind: str, trackers: FakeTrackers) -> tuple[str, dict]:
    base = trackers.base
    return {
        "github": ("github", {"repository": "acme/shop", "api_url": f"{base}/api/v3"}),
        "gitlab": ("gitlab", {"project": "acme/shop", "api_url": f"{base}/api/v4"}),
        "jira": ("jira", {"site_url": base, "project_key": "PROJ", "email": JIRA_EMAIL}),
        "jira-server": ("jira", {"site_url": base, "project_key": "PROJ"}),
        "linear": ("linear", {"team_id": "team-1", "api_url": f"{base}/graphql"}),
    }[kind]


def connect(client, project, kind, trackers, **extra) -> dict:
    tracker_kind, config = config_for(kind, trackers)
    response = client.post(
        f"/api/v1/projects/{project['id']}/integrations",
        json={"kind": tracker_kind, "name": kind, "config": config, "token": TOKEN, **extra},
        headers=csrf(client),
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def file_detailed(client, project, **fields):
    return file_report(
        client,
        project["apiKey"],
        console_logs=[
            {"level": "error", "message": "TypeError: x is undefined", "timestamp": 1},
            {"level": "log", "message": "just chatter", "timestamp": 2},
        ],
        network_logs=[
            {
                "method": "POST",
                "url": "https://shop.example/api/pay",
                "status": 500,
                "duration": 80,
                "timestamp": 3,
            },
            {
                "method": "GET",
                "url": "https://shop.example/ok",
                "status": 200,
                "duration": 5,
                "timestamp": 4,
            },
        ],
        user_actions=[{"type": "click", "target": "button#pay", "timestamp": 5}],
        metadata={"url": "https://shop.example/checkout", "userAgent": "Firefox/140"},
        **fields,
    ).get_json()


def create_issue(client, report, integration):
    return client.post(
        f"/api/v1/reports/{report['trackingId']}/issues",
        json={"integration_id": integration["id"]},
        headers=csrf(client),
    )


def run_calls(app) -> int:
    """What the scheduler's tracker runner does each second: every due call, once."""
    with app.app_context():
        claimed = tracker_calls.claim_due(50)
        for call_id, number, _ in claimed:
            tracker_calls.attempt(call_id, number)
    return len(claimed)


def make_due(app) -> None:
    """The retry's time has come."""
    with app.app_context():
        db.session.execute(update(IntegrationCall).values(next_attempt_at=utcnow()))
        db.session.commit()


def calls(app) -> list[IntegrationCall]:
    with app.app_context():
        found = db.session.scalars(select(IntegrationCall).order_by(IntegrationCall.created_at))
        return [(c.action, c.status, c.attempts, c.last_error, c.next_attempt_at) for c in found]


# --- what the trackers send, signed as each signs it ----------------------------------------------


def tracker_event(kind: str, trackers: FakeTrackers, issue: dict, closed: bool, **change):
    """(headers without the signature, body) of the tracker's webhook for one of its issues."""
    return trackers.delivery(kind, issue["remote_id"], closed, **change)


def send_event(client, kind, integration, headers, body, secret=None, delivery=None):
    raw = json.dumps(body).encode()
    secret = secret or integration["webhookSecret"]
    signature = hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()
    delivery = delivery or str(uuid.uuid4())
    signed = {
        "github": {"X-Hub-Signature-256": f"sha256={signature}", "X-GitHub-Delivery": delivery},
        "gitlab": {"X-Gitlab-Token": secret, "Idempotency-Key": delivery},
        "jira": {
            "X-Hub-Signature": f"sha256={signature}",
            "X-Atlassian-Webhook-Identifier": delivery,
        },
        "linear": {"Linear-Signature": signature, "Linear-Delivery": delivery},
    }[integration["kind"]]
    return client.post(
        f"/api/v1/integrations/{integration['id']}/events",
        data=raw,
        headers={**headers, **signed, "Content-Type": "application/json"},
    )


def linked_issue(client, report) -> dict:
    full = client.get(f"/api/v1/reports/{report['trackingId']}").get_json()
    (issue,) = full["externalIssues"]
    return issue


def remote_of(app, report_id) -> dict:
    with app.app_context():
        (issue,) = integrations.issues_of(uuid.UUID(report_id))
        return {"remote_id": issue.remote_id, "key": issue.key}


# --- creating an issue ----------------------------------------------------------------------------


# What a tracker sees does not depend on svc's database: the tests per kind run on SQLite, and
# test_the_rounds_on_each_database runs the background and sync rounds on each database.
@pytest.mark.any_database
@pytest.mark.parametrize("kind", KINDS)
def test_a_member_creates_the_reports_issue_as_the_tracker_expects_it(
    tracker_setup, trackers, kind
):
    app, ada, project = tracker_setup
    integration = connect(ada, project, kind, trackers)
    assert "token" not in integration and integration["webhookSecret"]
    grace = new_member(app, ada, project["id"], "grace@example.com", "Grace Hopper")
    report = file_detailed(ada, project)

    response = create_issue(grace, report, integration)
    assert response.status_code == 201, response.get_json()
    made = response.get_json()
    request = trackers.requests[-1]
    title = f"[{report['trackingId']}] {report['title']}"
    if kind == "github":
        assert (request.method, request.path) == ("POST", "/api/v3/repos/acme/shop/issues")
        assert request.headers["Authorization"] == f"Bearer {TOKEN}"
        assert request.headers["X-GitHub-Api-Version"] == "2022-11-28"
        assert request.headers["Accept"] == "application/vnd.github+json"
        sent = request.json()
        assert sent["title"] == title and sent["labels"] == []
        text = sent["body"]
        assert made["key"].startswith("#")
    elif kind == "gitlab":
        assert (request.method, request.path) == ("POST", "/api/v4/projects/acme%2Fshop/issues")
        assert request.headers["PRIVATE-TOKEN"] == TOKEN
        sent = request.json()
        assert sent["title"] == title
        text = sent["description"]
    elif kind == "jira":
        assert (request.method, request.path) == ("POST", "/rest/api/3/issue")
        pair = base64.b64encode(f"{JIRA_EMAIL}:{TOKEN}".encode()).decode()
        assert request.headers["Authorization"] == f"Basic {pair}"
        fields = request.json()["fields"]
        assert fields["project"] == {"key": "PROJ"} and fields["issuetype"] == {"name": "Bug"}
        assert fields["summary"] == title
        assert adf_problems(fields["description"]) == []
        text = json.dumps(fields["description"])
        assert made["key"].startswith("PROJ-")
    elif kind == "jira-server":
        assert (request.method, request.path) == ("POST", "/rest/api/2/issue")
        assert request.headers["Authorization"] == f"Bearer {TOKEN}"
        text = request.json()["fields"]["description"]
        assert "h3. Console errors" in text and "{noformat}" in text
    else:
        assert (request.method, request.path) == ("POST", "/graphql")
        assert request.headers["Authorization"] == TOKEN
        document = request.json()
        assert "issueCreate(input: $input)" in document["query"]
        sent = document["variables"]["input"]
        assert sent["teamId"] == "team-1" and sent["title"] == title
        text = sent["description"]
        assert made["key"].startswith("ENG-")
    # The body: the description, the facts, the errors and failed requests, the links.
    for part in (
        "Clicking pay has no effect",
        "high",
        "TypeError: x is undefined",
        "https://shop.example/api/pay",
        "button#pay",
        "Firefox/140",
        f"https://bugs.example.com/reports/{report['trackingId']}",
    ):
        assert part in text, part
    assert "just chatter" not in text and "https://shop.example/ok" not in text
    assert TOKEN not in text

    assert made["kind"] == integration["kind"] and made["state"] == "open"
    assert linked_issue(ada, report)["key"] == made["key"]
    history = ada.get(f"/api/v1/reports/{report['trackingId']}/activity").get_json()
    assert history[-1]["kind"] == "linked" and history[-1]["actor"]["name"] == "Grace Hopper"
    again = create_issue(grace, report, integration)
    assert again.status_code == 409
    assert len(trackers.calls("POST", "issue|graphql")) == 1


def test_a_duplicates_issue_stays_with_it_and_new_ones_go_to_its_primary(tracker_setup, trackers):
    """docs/api.md §8.11: merged, a report keeps the issue it had (closed with it, as any
    report's); an issue asked for it afterwards is made for the report it was merged into."""
    app, ada, project = tracker_setup
    integration = connect(ada, project, "github", trackers)
    primary, duplicate = file_detailed(ada, project), file_detailed(ada, project)
    assert create_issue(ada, duplicate, integration).status_code == 201
    kept = linked_issue(ada, duplicate)
    merged = ada.post(
        f"/api/v1/reports/{duplicate['trackingId']}/duplicate-of",
        json={"target": primary["trackingId"]},
        headers=csrf(ada),
    )
    assert merged.status_code == 200, merged.get_json()
    assert run_calls(app) == 1  # its issue closes with it
    assert trackers.requests[-1].json()["state"] == "closed"

    made = create_issue(ada, duplicate, integration)
    assert made.status_code == 201, made.get_json()
    assert linked_issue(ada, primary)["key"] == made.get_json()["key"] != kept["key"]
    assert linked_issue(ada, duplicate)["key"] == kept["key"]
    sent = trackers.requests[-1].json()
    assert sent["title"] == f"[{primary['trackingId']}] {primary['title']}"


def test_viewers_cannot_create_issues_and_outsiders_do_not_see_the_report(tracker_setup, trackers):
    app, ada, project = tracker_setup
    integration = connect(ada, project, "github", trackers)
    report = file_detailed(ada, project)
    vera = new_member(app, ada, project["id"], "vera@example.com", "Vera Rubin", "viewer")
    mallory = app.test_client()
    register(mallory, email="mallory@example.com", name="Mallory")
    assert create_issue(vera, report, integration).status_code == 403
    assert create_issue(mallory, report, integration).status_code == 404
    assert mallory.get(f"/api/v1/integrations/{integration['id']}").status_code == 404
    assert trackers.requests == []


def test_a_token_cannot_make_or_change_an_integration_but_can_create_issues(
    tracker_setup, trackers
):
    app, ada, project = tracker_setup
    integration = connect(ada, project, "gitlab", trackers)
    pat = {"Authorization": f"Bearer {create_pat(ada)['token']}"}
    client = app.test_client()
    kind, config = config_for("github", trackers)
    made = client.post(
        f"/api/v1/projects/{project['id']}/integrations",
        json={"kind": kind, "name": "x", "config": config, "token": TOKEN},
        headers=pat,
    )
    changed = client.patch(
        f"/api/v1/integrations/{integration['id']}", json={"name": "y"}, headers=pat
    )
    removed = client.delete(f"/api/v1/integrations/{integration['id']}", headers=pat)
    assert [made.status_code, changed.status_code, removed.status_code] == [403, 403, 403]
    report = file_detailed(ada, project)
    response = client.post(
        f"/api/v1/reports/{report['trackingId']}/issues",
        json={"integration_id": integration["id"]},
        headers=pat,
    )
    assert response.status_code == 201
    listed = ada.get(f"/api/v1/projects/{project['id']}/integrations").get_json()
    assert [i["name"] for i in listed] == ["gitlab"]


@pytest.mark.parametrize(
    ("status", "words"),
    [
        (401, "refused the token"),
        (404, "found no such"),
        (422, "refused the issue's fields"),
        (429, "asks svc to slow down"),
    ],
)
def test_a_refused_manual_create_is_a_502_in_plain_words_and_records_nothing(
    tracker_setup, trackers, status, words
):
    _app, ada, project = tracker_setup
    integration = connect(ada, project, "github", trackers)
    report = file_detailed(ada, project)
    trackers.refuse(status, {"message": f"the tracker's own words for {status}"}, retry_after=7)
    response = create_issue(ada, report, integration)
    assert response.status_code == 502
    detail = response.get_json()["detail"]
    assert words in detail and f"the tracker's own words for {status}" in detail
    assert f"HTTP {status}" in detail
    assert ada.get(f"/api/v1/reports/{report['trackingId']}").get_json()["externalIssues"] == []
    shown = ada.get(f"/api/v1/integrations/{integration['id']}").get_json()
    assert words in shown["lastError"]


def test_every_issue_made_is_in_the_audit_log(tracker_setup, trackers):
    """A member's and auto-create's: each is made with the project's token."""
    app, ada, project = tracker_setup
    integration = connect(ada, project, "github", trackers, auto_create={"severities": []})
    first = file_detailed(ada, project)
    run_calls(app)
    second = file_detailed(ada, project, severity="low")
    ada.patch(
        f"/api/v1/integrations/{integration['id']}", json={"auto_create": None}, headers=csrf(ada)
    )
    made = ada.get(
        f"/api/v1/projects/{project['id']}/audit", query_string={"action": "issue_created"}
    ).get_json()["items"]
    assert {entry["detail"]["trackingId"] for entry in made} == {first["trackingId"]}
    assert create_issue(ada, second, integration).status_code == 201
    made = ada.get(
        f"/api/v1/projects/{project['id']}/audit", query_string={"action": "issue_created"}
    ).get_json()["items"]
    assert made[0]["detail"]["trackingId"] == second["trackingId"]
    assert made[0]["actor"] is not None and made[1]["actor"] is None


def test_a_tracker_answer_missing_what_svc_reads_is_a_502_naming_it(tracker_setup, trackers):
    _app, ada, project = tracker_setup
    integration = connect(ada, project, "github", trackers)
    report = file_detailed(ada, project)
    trackers.answer_without("html_url")
    refused = create_issue(ada, report, integration)
    assert refused.status_code == 502
    assert refused.get_json()["detail"] == "GitHub answered without 'html_url', which svc needs"
    assert ada.get(f"/api/v1/reports/{report['trackingId']}").get_json()["externalIssues"] == []


def test_the_token_is_hidden_in_every_form_a_tracker_may_echo(tracker_setup, trackers):
    """Inside Jira Cloud's Basic base64 too; and a token too short to hide without mangling
    svc's own words is refused."""
    _app, ada, project = tracker_setup
    integration = connect(ada, project, "jira", trackers)
    report = file_detailed(ada, project)
    basic = base64.b64encode(f"{JIRA_EMAIL}:{TOKEN}".encode()).decode()
    trackers.refuse(400, {"errorMessages": [f"Bad header: Basic {basic}"]})
    refused = create_issue(ada, report, integration).get_json()["detail"]
    assert basic not in refused and "[token]" in refused
    short = ada.post(
        f"/api/v1/projects/{project['id']}/integrations",
        json={"kind": "github", "name": "x", "config": {"repository": "a/b"}, "token": "t"},
        headers=csrf(ada),
    )
    assert short.status_code == 422 and "token" in short.get_json()["errors"]


def test_test_connection_says_what_it_reached_or_the_trackers_words(tracker_setup, trackers):
    _app, ada, project = tracker_setup
    integration = connect(ada, project, "jira", trackers)
    response = ada.post(f"/api/v1/integrations/{integration['id']}/test", headers=csrf(ada))
    assert response.get_json() == {"ok": True, "detail": "Reached PROJ (Web Shop)"}
    assert trackers.requests[-1].path == "/rest/api/3/project/PROJ"
    ada.patch(
        f"/api/v1/integrations/{integration['id']}",
        json={"config": {"project_key": "MISSING"}},
        headers=csrf(ada),
    )
    failed = ada.post(f"/api/v1/integrations/{integration['id']}/test", headers=csrf(ada))
    assert failed.status_code == 422
    assert "No project could be found with key 'MISSING'" in failed.get_json()["detail"]


def test_test_connection_says_one_word_for_an_internal_name_and_a_missing_one(make_app):
    """ "Test connection" told a member whether an internal host name
    resolves ("Refused" for one, "Cannot resolve" for the other). Now one answer for both."""
    app = make_app(SVC_WEBHOOK_TIMEOUT="3")  # the guard on, as installed
    ada = app.test_client()
    register(ada)
    project = create_project(ada)
    answers = []
    for host in ("localhost", "svc-no-such-host.invalid"):
        made = ada.post(
            f"/api/v1/projects/{project['id']}/integrations",
            json={"kind": "github", "name": host, "token": TOKEN,
                  "config": {"repository": "acme/shop", "api_url": f"https://{host}/api/v3"}},
            headers=csrf(ada),
        )  # fmt: skip
        assert made.status_code == 201, made.get_json()
        tested = ada.post(f"/api/v1/integrations/{made.get_json()['id']}/test", headers=csrf(ada))
        answers.append((tested.status_code, tested.get_json()["detail"]))
    assert answers[0] == answers[1], answers
    assert "no public address" in answers[0][1] and "localhost" not in answers[0][1]


def test_sending_the_token_to_another_host_needs_the_token(tracker_setup, trackers, elsewhere):
    """The token is write-only: an owner who moves the integration to another host (or
    repository, project, account) gives it again, or nothing changes and no later call (a
    member's "Test connection") takes it there."""
    _app, ada, project = tracker_setup
    integration = connect(ada, project, "github", trackers)
    url = f"/api/v1/integrations/{integration['id']}"
    moved = {"api_url": f"{elsewhere.base}/api/v3"}
    for change in (moved, {"repository": "acme/other"}):
        refused = ada.patch(url, json={"config": change}, headers=csrf(ada))
        assert refused.status_code == 422 and "token" in refused.get_json()["errors"]
    assert ada.get(url).get_json()["config"]["repository"] == "acme/shop"
    assert ada.post(f"{url}/test", headers=csrf(ada)).status_code == 200
    assert elsewhere.requests == []
    labels = ada.patch(url, json={"config": {"labels": ["bug"]}}, headers=csrf(ada))
    assert labels.status_code == 200

    given = ada.patch(url, json={"config": moved, "token": TOKEN}, headers=csrf(ada))
    assert given.status_code == 200
    (entry, *_) = ada.get(
        f"/api/v1/projects/{project['id']}/audit", query_string={"action": "integration_updated"}
    ).get_json()["items"]
    assert entry["detail"]["fromHost"] == trackers.base.removeprefix("https://")
    assert entry["detail"]["toHost"] == elsewhere.base.removeprefix("https://")


# --- auto-create ----------------------------------------------------------------------------------


@pytest.mark.any_database
@pytest.mark.parametrize("kind", KINDS)
def test_auto_create_survives_a_failure_and_makes_one_issue(tracker_setup, trackers, kind):
    auto_create_round(tracker_setup, trackers, kind)


def auto_create_round(tracker_setup, trackers, kind):
    app, ada, project = tracker_setup
    connect(ada, project, kind, trackers, auto_create={"severities": ["critical"]})
    minor = file_detailed(ada, project, severity="low")
    report = file_detailed(ada, project, severity="critical")
    assert trackers.requests == []  # never in the request, nor in the fan-out
    trackers.refuse(503)
    assert run_calls(app) == 1
    ((action, status, attempts, error, _),) = calls(app)
    assert (action, status, attempts) == ("create", "pending", 1)
    assert "HTTP 503" in error
    assert run_calls(app) == 0  # not due yet
    make_due(app)
    assert run_calls(app) == 1
    assert calls(app)[0][:4] == ("create", "succeeded", 2, None)
    assert len(trackers.issues) == 1
    issue = linked_issue(ada, report)
    assert issue["state"] == "open" and issue["lastError"] is None
    assert ada.get(f"/api/v1/reports/{minor['trackingId']}").get_json()["externalIssues"] == []
    linked = ada.get("/api/v1/reports?linked=true").get_json()["items"]
    unlinked = ada.get("/api/v1/reports?linked=false").get_json()["items"]
    assert [r["trackingId"] for r in linked] == [report["trackingId"]]
    assert [r["trackingId"] for r in unlinked] == [minor["trackingId"]]
    history = ada.get(f"/api/v1/reports/{report['trackingId']}/activity").get_json()
    assert history[-1]["kind"] == "linked" and history[-1]["actor"] is None
    assert history[-1]["via"] == integration_kind(kind)


def integration_kind(kind: str) -> str:
    return "jira" if kind == "jira-server" else kind


@pytest.mark.parametrize(
    ("status", "words"),
    [(401, "refused the token"), (404, "found no such"), (422, "refused the issue's fields")],
)
def test_auto_create_stops_at_a_refusal_that_retrying_cannot_help(
    tracker_setup, trackers, status, words
):
    app, ada, project = tracker_setup
    integration = connect(ada, project, "linear", trackers, auto_create={"severities": []})
    report = file_detailed(ada, project)
    trackers.refuse(status, {"errors": [{"message": "Linear's own words"}]})
    run_calls(app)
    ((_, call_status, attempts, error, _),) = calls(app)
    assert (call_status, attempts) == ("failed", 1)
    assert words in error and "Linear's own words" in error
    shown = ada.get(f"/api/v1/integrations/{integration['id']}").get_json()
    assert words in shown["lastError"]
    log = ada.get(f"/api/v1/integrations/{integration['id']}/deliveries").get_json()
    assert log["total"] == 1 and log["items"][0]["status"] == "failed"
    assert log["items"][0]["lastStatusCode"] == status
    make_due(app)
    assert run_calls(app) == 0  # never tried again

    # Until a member asks: a new cycle, due now; the tracker takes it.
    [failed] = log["items"]
    assert failed["trackingId"] == report["trackingId"]  # the log names it
    retry = f"/api/v1/integrations/{integration['id']}/calls/{failed['id']}/retry"
    retried = ada.post(retry, headers=csrf(ada))
    assert retried.status_code == 202, retried.get_json()
    assert (retried.get_json()["status"], retried.get_json()["attempts"]) == ("pending", 0)
    assert run_calls(app) == 1
    assert calls(app)[0][1] == "succeeded" and len(trackers.issues) == 1
    assert ada.post(retry, headers=csrf(ada)).status_code == 409  # it did not fail
    other = f"/api/v1/integrations/{integration['id']}/calls/{uuid.uuid4()}/retry"
    assert ada.post(other, headers=csrf(ada)).status_code == 404
    assert ada.get(f"/api/v1/integrations/{integration['id']}").get_json()["lastError"] is None


def test_auto_create_waits_what_a_429_asks_then_tries_again(tracker_setup, trackers):
    app, ada, project = tracker_setup
    connect(ada, project, "github", trackers, auto_create={"severities": []})
    report = file_detailed(ada, project)
    trackers.refuse(429, retry_after=120)
    before = utcnow()
    run_calls(app)
    ((_, status, _, error, next_attempt),) = calls(app)
    assert status == "pending" and "wait 120 s" in error
    assert next_attempt - before >= timedelta(seconds=119)  # not the 5 s of the first delay
    make_due(app)
    run_calls(app)
    assert calls(app)[0][1] == "succeeded"
    assert linked_issue(ada, report)["state"] == "open"


# --- status, both ways ----------------------------------------------------------------------------


@pytest.mark.any_database
@pytest.mark.parametrize("kind", KINDS)
def test_status_syncs_both_ways_without_an_echo(tracker_setup, trackers, kind):
    sync_round(tracker_setup, trackers, kind)


def test_the_rounds_on_each_database(tracker_setup, trackers):
    """Auto-create with a failure, then the sync both ways: the outbox's claims, the kept
    delivery ids and the status changes are SQL, run here on each database."""
    auto_create_round(tracker_setup, trackers, "jira")
    _, ada, project = tracker_setup
    for integration in ada.get(f"/api/v1/projects/{project['id']}/integrations").get_json():
        ada.delete(f"/api/v1/integrations/{integration['id']}", headers=csrf(ada))
    trackers.requests.clear()
    sync_round(tracker_setup, trackers, "jira")


def sync_round(tracker_setup, trackers, kind):
    app, ada, project = tracker_setup
    integration = connect(ada, project, kind, trackers)
    report = file_detailed(ada, project)
    assert create_issue(ada, report, integration).status_code == 201
    remote = remote_of(app, report["id"])
    made_before = len(trackers.requests)

    # Closed in the tracker: the report is resolved, by the tracker, and nothing goes back.
    headers, body = tracker_event(kind, trackers, remote, closed=True)
    answer = send_event(
        ada.application.test_client(), kind, integration, headers, body, delivery="delivery-1"
    )
    assert answer.status_code == 202, answer.get_json()
    full = ada.get(f"/api/v1/reports/{report['trackingId']}").get_json()
    assert full["status"] == "resolved"
    assert full["externalIssues"][0]["state"] == "closed"
    entry = ada.get(f"/api/v1/reports/{report['trackingId']}/activity").get_json()[-1]
    assert entry["actor"] is None and entry["via"] == integration["kind"]
    assert entry["changes"] == {"status": {"from": "new", "to": "resolved"}}
    assert calls(app) == [] and run_calls(app) == 0
    assert len(trackers.requests) == made_before

    # The same delivery again: applied once.
    again = send_event(app.test_client(), kind, integration, headers, body, delivery="delivery-1")
    assert again.status_code == 202 and again.get_json()["detail"] == "already applied"
    assert len(ada.get(f"/api/v1/reports/{report['trackingId']}/activity").get_json()) == 3

    # Reopened in the tracker: in progress again.
    headers, body = tracker_event(kind, trackers, remote, closed=False)
    assert send_event(app.test_client(), kind, integration, headers, body).status_code == 202
    assert ada.get(f"/api/v1/reports/{report['trackingId']}").get_json()["status"] == "in_progress"
    assert calls(app) == []

    # Resolved in svc: the tracker gets its close call, in the background.
    ada.patch(
        f"/api/v1/reports/{report['trackingId']}", json={"status": "resolved"}, headers=csrf(ada)
    )
    assert len(trackers.requests) == made_before
    assert run_calls(app) == 1
    closing = trackers.requests[made_before:]
    stored = trackers.issues[remote["remote_id"]]
    if kind == "github":
        assert [(r.method, r.json()["state"]) for r in closing] == [("PATCH", "closed")]
        assert closing[0].headers["X-GitHub-Api-Version"] == "2022-11-28"
        assert stored["state"] == "closed"
    elif kind == "gitlab":
        assert [(r.method, r.json()) for r in closing] == [("PUT", {"state_event": "close"})]
        assert closing[0].path == f"/api/v4/projects/acme%2Fshop/issues/{stored['iid']}"
    elif kind in ("jira", "jira-server"):
        assert [r.method for r in closing] == ["GET", "POST"]
        assert closing[1].json() == {"transition": {"id": "31"}}
        assert stored["status"] == "Done"
    else:
        assert "issueUpdate" in closing[-1].json()["query"]
        assert closing[-1].json()["variables"] == {
            "id": remote["remote_id"],
            "input": {"stateId": "st-done"},
        }
    assert linked_issue(ada, report)["state"] == "closed"


@pytest.mark.any_database
@pytest.mark.parametrize("kind", KINDS)
def test_a_bad_or_missing_signature_is_401_and_changes_nothing(tracker_setup, trackers, kind):
    app, ada, project = tracker_setup
    integration = connect(ada, project, kind, trackers)
    report = file_detailed(ada, project)
    create_issue(ada, report, integration)
    headers, body = tracker_event(kind, trackers, remote_of(app, report["id"]), closed=True)
    forged = send_event(app.test_client(), kind, integration, headers, body, secret="guessed")
    unsigned = app.test_client().post(
        f"/api/v1/integrations/{integration['id']}/events", json=body, headers=headers
    )
    unknown = app.test_client().post(f"/api/v1/integrations/{uuid.uuid4()}/events", json=body)
    assert [forged.status_code, unsigned.status_code, unknown.status_code] == [401, 401, 401]
    assert ada.get(f"/api/v1/reports/{report['trackingId']}").get_json()["status"] == "new"
    assert ada.get(f"/api/v1/integrations/{integration['id']}/events").get_json() == []


def test_every_jira_status_of_the_done_category_resolves(tracker_setup, trackers):
    app, ada, project = tracker_setup
    integration = connect(ada, project, "jira", trackers)
    report = file_detailed(ada, project)
    create_issue(ada, report, integration)
    headers, body = tracker_event(
        "jira", trackers, remote_of(app, report["id"]), closed=True, status="Cancelled"
    )
    assert send_event(app.test_client(), "jira", integration, headers, body).status_code == 202
    assert ada.get(f"/api/v1/reports/{report['trackingId']}").get_json()["status"] == "resolved"
    received = ada.get(f"/api/v1/integrations/{integration['id']}/events").get_json()
    assert "resolved" in received[0]["outcome"]


def test_a_jira_issue_moved_to_another_project_stays_linked_under_its_new_key(
    tracker_setup, trackers
):
    app, ada, project = tracker_setup
    integration = connect(ada, project, "jira", trackers)
    report = file_detailed(ada, project)
    create_issue(ada, report, integration)
    remote = remote_of(app, report["id"])
    headers, body = tracker_event(
        "jira", trackers, remote, closed=False, key="OPS-9", no_status=True
    )
    assert send_event(app.test_client(), "jira", integration, headers, body).status_code == 202
    issue = linked_issue(ada, report)
    assert issue["key"] == "OPS-9" and issue["url"].endswith("/browse/OPS-9")
    assert ada.get(f"/api/v1/reports/{report['trackingId']}").get_json()["status"] == "new"
    headers, body = tracker_event("jira", trackers, remote, closed=True, key="OPS-9")
    send_event(app.test_client(), "jira", integration, headers, body)
    assert ada.get(f"/api/v1/reports/{report['trackingId']}").get_json()["status"] == "resolved"


def test_an_unknown_issue_or_another_event_is_accepted_and_ignored(tracker_setup, trackers):
    app, ada, project = tracker_setup
    integration = connect(ada, project, "github", trackers)
    url = f"{trackers.base}/api/v3/repos/acme/shop/issues/1"
    body = {"action": "closed", "issue": {"id": 1, "number": 1, "html_url": "h", "url": url}}
    answer = send_event(
        app.test_client(), "github", integration, {"X-GitHub-Event": "issues"}, body
    )
    assert answer.status_code == 202 and "not linked" in answer.get_json()["detail"]
    ping = send_event(
        app.test_client(), "github", integration, {"X-GitHub-Event": "ping"}, {"zen": "x"}
    )
    assert ping.status_code == 202 and "ignored" in ping.get_json()["detail"]


def test_a_close_the_tracker_refuses_is_retried_and_shown_never_done(tracker_setup, trackers):
    app, ada, project = tracker_setup
    integration = connect(ada, project, "gitlab", trackers)
    report = file_detailed(ada, project)
    create_issue(ada, report, integration)
    ada.patch(
        f"/api/v1/reports/{report['trackingId']}", json={"status": "closed"}, headers=csrf(ada)
    )
    trackers.refuse(500)
    run_calls(app)
    issue = linked_issue(ada, report)
    assert issue["state"] == "open" and "Close failed" in issue["lastError"]
    make_due(app)
    run_calls(app)
    issue = linked_issue(ada, report)
    assert issue["state"] == "closed" and issue["lastError"] is None


# --- deliveries name no address ------------------------------------------------------------------


@pytest.fixture
def elsewhere(certificate_authority):
    """Another HTTPS host, answering as GitHub would: where a forged delivery points."""
    server = FakeTrackers(certificate_authority[0]).start()
    yield server
    server.stop()


def test_a_signed_delivery_cannot_send_the_token_to_another_host(
    tracker_setup, trackers, elsewhere
):
    """A delivery signed with the integration's secret (a leaked backup once held it in clear)
    names the issue at another host; svc refuses it, records why, and the next close goes to
    the configured repository with the token, never to that host."""
    app, ada, project = tracker_setup
    integration = connect(ada, project, "github", trackers)
    report = file_detailed(ada, project)
    create_issue(ada, report, integration)
    stored = trackers.issues[remote_of(app, report["id"])["remote_id"]]
    forged = {
        "action": "edited",
        "issue": {
            **stored,
            "url": f"{elsewhere.base}/api/v3/repos/acme/shop/issues/{stored['number']}",
            "html_url": f"{elsewhere.base}/phish",
        },
    }
    answer = send_event(
        app.test_client(), "github", integration, {"X-GitHub-Event": "issues"}, forged
    )
    assert answer.status_code == 202 and answer.get_json()["detail"].startswith("refused:")
    events = ada.get(f"/api/v1/integrations/{integration['id']}/events").get_json()
    assert events[0]["outcome"].startswith("refused: it names 127.0.0.1:")
    assert linked_issue(ada, report)["url"] == stored["html_url"]

    ada.patch(
        f"/api/v1/reports/{report['trackingId']}", json={"status": "resolved"}, headers=csrf(ada)
    )
    assert run_calls(app) == 1
    assert elsewhere.requests == []
    (closing,) = trackers.calls("PATCH")
    assert closing.path == f"/api/v3/repos/acme/shop/issues/{stored['number']}"


def test_a_delivery_is_applied_once_whatever_id_it_comes_with(tracker_setup, trackers):
    """The delivery id is not signed: the same signed body sent again under a new id (a
    replay) changes nothing; Linear's, which signs its time, is refused after a minute."""
    app, ada, project = tracker_setup
    integration = connect(ada, project, "github", trackers)
    report = file_detailed(ada, project)
    create_issue(ada, report, integration)
    headers, body = tracker_event("github", trackers, remote_of(app, report["id"]), True)
    client = app.test_client()
    assert (
        "resolved" in send_event(client, "github", integration, headers, body).get_json()["detail"]
    )
    ada.patch(f"/api/v1/reports/{report['trackingId']}", json={"status": "new"}, headers=csrf(ada))
    again = send_event(client, "github", integration, headers, body, delivery="another-id")
    assert again.status_code == 202 and again.get_json()["detail"] == "already applied"
    shown = ada.get(f"/api/v1/reports/{report['trackingId']}").get_json()
    assert shown["status"] == "new"

    linear = connect(ada, project, "linear", trackers)
    other = file_detailed(ada, project)
    create_issue(ada, other, linear)
    headers, body = tracker_event("linear", trackers, remote_of(app, other["id"]), True)
    body["webhookTimestamp"] -= 120_000
    stale = send_event(client, "linear", linear, headers, body)
    assert stale.get_json()["detail"].startswith("refused: it was sent 120 s ago")
    assert ada.get(f"/api/v1/reports/{other['trackingId']}").get_json()["status"] == "new"


def test_a_gitlab_delivery_cannot_steer_the_calls_path(tracker_setup, trackers):
    """GitLab's project id and iid from a delivery once made the address of the next call: a
    traversal on the configured host. The call is built from the configured project."""
    app, ada, project = tracker_setup
    integration = connect(ada, project, "gitlab", trackers)
    report = file_detailed(ada, project)
    create_issue(ada, report, integration)
    remote = remote_of(app, report["id"])
    stored = trackers.issues[remote["remote_id"]]
    headers, body = tracker_event("gitlab", trackers, remote, False)
    body["object_attributes"].update(project_id="1/../../../users/1", action="update")
    answer = send_event(app.test_client(), "gitlab", integration, headers, body)
    assert answer.status_code == 202
    ada.patch(
        f"/api/v1/reports/{report['trackingId']}", json={"status": "resolved"}, headers=csrf(ada)
    )
    assert run_calls(app) == 1
    (closing,) = trackers.calls("PUT")
    assert closing.path == f"/api/v4/projects/acme%2Fshop/issues/{stored['iid']}"


# --- the token ------------------------------------------------------------------------------------


def test_the_token_and_the_webhook_secret_are_never_stored_in_clear(
    tracker_setup, trackers, caplog, tmp_path
):
    app, ada, project = tracker_setup
    integration = connect(ada, project, "github", trackers)
    report = file_detailed(ada, project)
    # A tracker that echoes the token in its refusal does not get it into svc's words.
    trackers.refuse(401, {"message": f"Bad credentials: {TOKEN}"})
    refused = create_issue(ada, report, integration)
    assert refused.status_code == 502 and "[token]" in refused.get_json()["detail"]
    create_issue(ada, report, integration)
    ada.patch(
        f"/api/v1/integrations/{integration['id']}",
        json={"token": TOKEN + "-new"},
        headers=csrf(ada),
    )
    answers = [
        refused.get_data(as_text=True),
        ada.get(f"/api/v1/projects/{project['id']}/integrations").get_data(as_text=True),
        ada.get(f"/api/v1/integrations/{integration['id']}").get_data(as_text=True),
        ada.get(f"/api/v1/reports/{report['trackingId']}").get_data(as_text=True),
        ada.get(f"/api/v1/projects/{project['id']}/audit").get_data(as_text=True),
        ada.get("/api/v1/admin/audit").get_data(as_text=True),
    ]
    assert all(TOKEN not in answer for answer in answers)
    assert "integration_created" in answers[4] and "integration_updated" in answers[4]
    assert TOKEN not in caplog.text
    with app.app_context():
        backup.backup(str(tmp_path / "backup.tar.gz"))
    with tarfile.open(tmp_path / "backup.tar.gz") as archive:
        stored = {m.name: archive.extractfile(m).read() for m in archive.getmembers() if m.isfile()}
    assert "database.sqlite3" in stored
    # The instance folder (the SQLite database on SQLite) and every file of the backup.
    stored.update({str(p): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()})
    # The webhook secret signs deliveries: in a backup in clear, anyone could forge one.
    secret = integration["webhookSecret"].encode()
    for name, content in stored.items():
        assert TOKEN.encode() not in content, name
        assert secret not in content, name


def test_linear_signs_with_the_secret_it_made_once_pasted_into_svc(tracker_setup, trackers):
    app, ada, project = tracker_setup
    integration = connect(ada, project, "linear", trackers)
    report = file_detailed(ada, project)
    create_issue(ada, report, integration)
    linears = "lin_wh_" + "5" * 32
    pasted = ada.patch(
        f"/api/v1/integrations/{integration['id']}",
        json={"webhook_secret": linears},
        headers=csrf(ada),
    )
    assert pasted.status_code == 200 and "webhookSecret" not in pasted.get_json()
    headers, body = tracker_event("linear", trackers, remote_of(app, report["id"]), closed=True)
    old = send_event(app.test_client(), "linear", integration, headers, body)
    assert old.status_code == 401
    new = send_event(app.test_client(), "linear", integration, headers, body, secret=linears)
    assert new.status_code == 202
    assert ada.get(f"/api/v1/reports/{report['trackingId']}").get_json()["status"] == "resolved"


# --- the dashboard ------------------------------------------------------------------------------


@pytest.fixture
def app(make_app, certificate_authority):
    """The app the browser test's live server serves: trackers reachable as in `team`."""
    return make_app(
        SVC_WEBHOOK_ALLOW_PRIVATE="true",
        SVC_WEBHOOK_CA_BUNDLE=certificate_authority[1],
        SVC_WEBHOOK_TIMEOUT="3",
    )


@pytest.mark.browser
@pytest.mark.any_database
def test_an_owner_connects_github_and_a_report_gets_its_issue_in_the_browser(
    browser, live_server, app, trackers
):
    context = browser.new_context(
        base_url=live_server, viewport={"width": 1280, "height": 860}, locale="en-GB"
    )
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    sign_up(page)
    api_key = create_project_in_browser(page)
    page.get_by_role("navigation", name="Sections of this page").get_by_role(
        "link", name="Integrations"
    ).click()
    connect_form = page.get_by_role("form", name="Connect a tracker")
    connect_form.get_by_label("Name").fill("Shop repository")
    connect_form.get_by_label("Repository").fill("acme/shop")
    connect_form.get_by_label("API URL").fill(f"{trackers.base}/api/v3")
    connect_form.get_by_label("Token").fill(TOKEN)
    connect_form.get_by_role("button", name="Connect").click()
    section = page.get_by_role("region", name="Integrations")
    expect(section.get_by_role("article", name="Shop repository")).to_be_visible()
    # Shown once, beside its card under the section's heading (not above the heading).
    shown = section.locator("article[aria-label='Shop repository'] + .notice code.webhook-secret")
    secret = shown.inner_text()
    assert len(secret) == 48
    assert section.locator("code.webhook-url").first.inner_text().endswith("/events")
    assert TOKEN not in page.content()
    section.get_by_role("button", name="Test connection").click()
    expect(section.get_by_text("Reached acme/shop")).to_be_visible()
    save_screenshot(page, "project-integrations")

    response = requests.post(
        f"{live_server}/api/v1/reports",
        json={
            "title": "Pay fails",
            "description": "Nothing happens.",
            "severity": "high",
            "category": "bug",
        },
        headers={"X-API-Key": api_key},
    )
    tracking_id = response.json()["trackingId"]
    page.goto(f"/reports/{tracking_id}")
    issues = page.get_by_role("region", name="Tracker issues")
    issues.get_by_role("button", name="Create issue").click()
    expect(issues.get_by_role("link", name="#101")).to_be_visible()
    assert trackers.requests[-1].json()["title"] == f"[{tracking_id}] Pay fails"
    expect(issues.get_by_role("button", name="Create issue")).to_have_count(0)
    expect(page.get_by_role("region", name="Activity")).to_contain_text("linked the issue #101")
    save_screenshot(page, "report-issues")
    assert errors == []
    context.close()


def test_a_token_survives_a_key_rotation_and_a_lost_key_is_said_in_plain_words(
    tracker_setup, trackers, make_app, certificate_authority
):
    from cryptography.fernet import Fernet

    app, _, project = tracker_setup
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings = {
        "SVC_WEBHOOK_ALLOW_PRIVATE": "true",
        "SVC_WEBHOOK_CA_BUNDLE": certificate_authority[1],
        "SVC_SECRET_KEY": app.config["SVC_SECRET_KEY"],
    }
    first = make_app(**settings, SVC_ENCRYPTION_KEYS=old)
    owner = first.test_client()
    owner.post("/api/v1/auth/login", json={"email": "ada@example.com", "password": PASSWORD})
    integration = connect(owner, project, "github", trackers)
    report = file_detailed(owner, project)
    rotated = make_app(**settings, SVC_ENCRYPTION_KEYS=f"{new},{old}").test_client()
    rotated.post("/api/v1/auth/login", json={"email": "ada@example.com", "password": PASSWORD})
    assert create_issue(rotated, report, integration).status_code == 201
    lost = make_app(**settings, SVC_ENCRYPTION_KEYS=new).test_client()
    lost.post("/api/v1/auth/login", json={"email": "ada@example.com", "password": PASSWORD})
    refused = lost.post(f"/api/v1/integrations/{integration['id']}/test", headers=csrf(lost))
    assert refused.status_code == 422
    assert "cannot decrypt" in refused.get_json()["detail"]


def test_two_schedulers_make_each_call_once(make_app, certificate_authority, trackers, monkeypatch):
    """The calls' claims hold across processes: two schedulers at once, every report's issue
    made once."""
    from cryptography.fernet import Fernet

    shared = {
        "SVC_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
        "SVC_WEBHOOK_ALLOW_PRIVATE": "true",
        "SVC_WEBHOOK_CA_BUNDLE": certificate_authority[1],
    }
    for name, value in shared.items():
        monkeypatch.setenv(name, value)  # for the processes run_in_processes starts
    app = make_app(**shared)
    ada = app.test_client()
    register(ada)
    project = create_project(ada)
    connect(ada, project, "github", trackers, auto_create={"severities": []})
    reports = [file_detailed(ada, project, title=f"Broken {n}") for n in range(12)]
    printed = run_in_processes(
        app,
        """
        from svc.services.trackers import tracker_calls
        made = 0
        with app.app_context():
            for _ in range(30):
                for call_id, number, _ in tracker_calls.claim_due(2):
                    tracker_calls.attempt(call_id, number)
                    made += 1
        print(made)
        """,
    )
    assert sum(int(output) for output in printed) == 12
    assert len(trackers.calls("POST", r"/issues$")) == 12
    for report in reports:
        assert linked_issue(ada, report)["state"] == "open"
