"""Webhook delivery to a real HTTPS receiver on 127.0.0.1 (docs/api.md §12)."""

import hashlib
import hmac
import json
import re
import time
import uuid
from collections import Counter
from datetime import datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select
from standardwebhooks import Webhook

from harness.client import add_to_project, create_project, csrf, register
from svc import deadline
from svc.extensions import db
from svc.models import WebhookDelivery
from svc.models.base import utcnow
from svc.webhooks import delivery, sender
from tests.helpers import SUMMARY_FIELDS, file_report, plan_of, statements_run

# The webhook's report: the report object without screenshots, metadata and assignee.
CREATED_FIELDS = SUMMARY_FIELDS - {
    "screenshotUrl",
    "annotatedScreenshotUrl",
    "metadata",
    "assigneeId",
    "signature",  # made by the fan-out, after the created payload; the list and API show it
    # A group's (docs/api.md §8.11): report.updated says what a report is a duplicate of.
    "duplicateOf",
    "duplicateCount",
    "reporterCount",
}


@pytest.fixture
def hook_app(make_app, certificate_authority):
    """An app whose webhooks may reach the receiver on 127.0.0.1 and trust its certificate."""

    def build(**overrides):
        settings = {
            "SVC_WEBHOOK_ALLOW_PRIVATE": "true",
            "SVC_WEBHOOK_CA_BUNDLE": certificate_authority[1],
            # Room for a TLS handshake on a busy 2-core host; the tests of a receiver that
            # hangs or drips wait longer than this.
            "SVC_WEBHOOK_TIMEOUT": "3",
        }
        return make_app(**{**settings, **overrides})

    return build


@pytest.fixture
def hooked_project(hook_app, receiver):
    """(app, owner client, project) with the project's webhook pointing at the receiver."""
    app = hook_app()
    owner = app.test_client()
    owner.user = register(owner)
    project = create_project(owner, "Web Shop")
    set_webhook(owner, project, receiver.url)
    return app, owner, project


def set_webhook(client, project, url, webhook_format=None):
    settings = {"webhook_url": url}
    if webhook_format:
        settings["webhook_format"] = webhook_format
    response = client.patch(
        f"/api/v1/projects/{project['id']}", headers=csrf(client), json={"settings": settings}
    )
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def run_due(app, at: datetime | None = None) -> int:
    """What the scheduler does each second: claim what is due (at `at`) and attempt it, one
    attempt after another (so with no need to spread the threads over projects)."""
    with app.app_context():
        claimed = delivery.claim_due(100, now=at, per_project=100)
        for delivery_id, attempt_number, _project in claimed:
            delivery.attempt(delivery_id, attempt_number)
    return len(claimed)


def deliveries(client, project) -> list[dict]:
    response = client.get(f"/api/v1/projects/{project['id']}/webhook-deliveries")
    assert response.status_code == 200
    return response.get_json()["items"]


def later(seconds: float) -> datetime:
    return utcnow() + timedelta(seconds=seconds)


# --- payload and signatures ---------------------------------------------------------------------


def test_report_created_is_delivered_signed(hooked_project, receiver):
    app, owner, project = hooked_project
    report = file_report(owner, project["apiKey"], reporter_identifier="u@shop.example").get_json()
    assert run_due(app) == 1
    (request,) = receiver.wait_for(1)
    body = request.json()
    assert set(body) == {"event", "timestamp", "data"}
    assert body["event"] == "report.created"
    assert body["timestamp"].endswith("Z") and len(body["timestamp"]) == 24
    assert set(body["data"]) == CREATED_FIELDS
    assert body["data"] == {key: report[key] for key in CREATED_FIELDS}

    headers = {name.lower(): value for name, value in request.headers.items()}
    assert headers["content-type"] == "application/json"
    assert headers["x-svc-event"] == "report.created"
    assert "svc" in headers["user-agent"]
    expected = hmac.new(project["apiKey"].encode(), request.body, hashlib.sha256).hexdigest()
    assert headers["x-svc-signature"] == expected
    # The Standard Webhooks signature, checked by the reference library.
    Webhook(project["webhookSecret"]).verify(request.body, request.headers)
    assert headers["webhook-id"] == headers["x-svc-delivery"]
    assert abs(int(headers["webhook-timestamp"]) - time.time()) < 30

    (logged,) = deliveries(owner, project)
    assert logged["id"] == headers["x-svc-delivery"]
    assert (
        logged["event"],
        logged["reportId"],
        logged["status"],
        logged["attempts"],
        logged["lastStatusCode"],
        logged["lastError"],
        logged["nextAttemptAt"],
    ) == ("report.created", report["id"], "succeeded", 1, 200, None, None)
    assert logged["trackingId"] == report["trackingId"]  # what the log's link says


def test_signature_uses_the_api_key_of_the_attempt(hooked_project, receiver):
    app, owner, project = hooked_project
    file_report(owner, project["apiKey"])
    rotated = owner.post(
        f"/api/v1/projects/{project['id']}/rotate-api-key", headers=csrf(owner)
    ).get_json()
    run_due(app)
    (request,) = receiver.wait_for(1)
    assert (
        request.headers["X-Svc-Signature"]
        == hmac.new(rotated["apiKey"].encode(), request.body, hashlib.sha256).hexdigest()
    )


def test_standard_signature_fails_with_another_secret(hooked_project, receiver):
    app, owner, project = hooked_project
    file_report(owner, project["apiKey"])
    rotated = owner.post(
        f"/api/v1/projects/{project['id']}/rotate-webhook-secret", headers=csrf(owner)
    ).get_json()
    run_due(app)
    (request,) = receiver.wait_for(1)
    Webhook(rotated["webhookSecret"]).verify(request.body, request.headers)
    with pytest.raises(Exception, match="signature"):
        Webhook(project["webhookSecret"]).verify(request.body, request.headers)


def test_report_updated_carries_changes(hooked_project, receiver):
    app, owner, project = hooked_project
    file_report(owner, project["apiKey"])
    owner.patch(
        "/api/v1/reports/WS-1",
        headers=csrf(owner),
        json={"status": "in_progress", "severity": "high", "assignee_id": owner.user["id"]},
    )
    run_due(app)
    created, updated = sorted(receiver.wait_for(2), key=lambda r: r.json()["event"])
    data = updated.json()["data"]
    assert updated.json()["event"] == "report.updated"
    assert set(data) == CREATED_FIELDS | {"assigneeId", "duplicateOf", "changes"}
    assert data["duplicateOf"] is None
    assert data["status"] == "in_progress" and data["assigneeId"] == owner.user["id"]
    assert data["changes"] == {
        "status": {"from": "new", "to": "in_progress"},
        "assigneeId": {"from": None, "to": owner.user["id"]},
    }
    assert updated.headers["X-Svc-Event"] == "report.updated"
    assert updated.headers["X-Svc-Delivery"] != created.headers["X-Svc-Delivery"]


def test_one_event_per_change_and_none_for_a_no_op(hooked_project, receiver):
    app, owner, project = hooked_project
    file_report(owner, project["apiKey"])
    owner.patch("/api/v1/reports/WS-1", json={"status": "new"}, headers=csrf(owner))
    owner.patch("/api/v1/reports/WS-1", json={"status": "closed"}, headers=csrf(owner))
    owner.patch("/api/v1/reports/WS-1", json={"status": "closed"}, headers=csrf(owner))
    assert run_due(app) == 2
    events = [r.json()["event"] for r in receiver.wait_for(2)]
    assert sorted(events) == ["report.created", "report.updated"]
    assert [d["event"] for d in deliveries(owner, project)] == ["report.updated", "report.created"]


def test_no_webhook_url_means_no_deliveries(hook_app):
    app = hook_app()
    client = app.test_client()
    register(client)
    project = create_project(client)
    file_report(client, project["apiKey"])
    assert deliveries(client, project) == []


def test_the_event_is_written_with_the_report_or_not_at_all(hooked_project):
    app, owner, project = hooked_project
    assert file_report(owner, project["apiKey"], screenshot_url="nope.png").status_code == 422
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(WebhookDelivery)) == 0


# --- retries ------------------------------------------------------------------------------------


def test_failure_failure_success_makes_three_attempts(hooked_project, receiver):
    app, owner, project = hooked_project
    receiver.script(500, 503)
    file_report(owner, project["apiKey"])
    run_due(app)
    first = deliveries(owner, project)[0]
    assert (first["status"], first["attempts"], first["lastStatusCode"], first["lastError"]) == (
        "pending",
        1,
        500,
        "HTTP 500",
    )
    waited = datetime.fromisoformat(
        first["nextAttemptAt"].replace("Z", "+00:00")
    ) - datetime.fromisoformat(first["updatedAt"].replace("Z", "+00:00"))
    assert abs(waited.total_seconds() - 10) < 0.01
    assert run_due(app) == 0  # not due yet
    run_due(app, at=later(11))
    second = deliveries(owner, project)[0]
    waited = datetime.fromisoformat(
        second["nextAttemptAt"].replace("Z", "+00:00")
    ) - datetime.fromisoformat(second["updatedAt"].replace("Z", "+00:00"))
    assert (second["attempts"], second["lastStatusCode"]) == (2, 503)
    assert abs(waited.total_seconds() - 60) < 0.01
    run_due(app, at=later(61))
    done = deliveries(owner, project)[0]
    assert (done["status"], done["attempts"], done["lastStatusCode"], done["nextAttemptAt"]) == (
        "succeeded",
        3,
        200,
        None,
    )
    requests = receiver.wait_for(3)
    assert len({r.headers["X-Svc-Delivery"] for r in requests}) == 1
    assert len({r.body for r in requests}) == 1


def test_always_failing_makes_exactly_four_attempts_then_fails(hooked_project, receiver):
    app, owner, project = hooked_project
    receiver.script(*[500] * 10)
    file_report(owner, project["apiKey"])
    for seconds in (0, 11, 72, 373, 10_000, 100_000):
        run_due(app, at=later(seconds))
    failed = deliveries(owner, project)[0]
    assert (failed["status"], failed["attempts"], failed["nextAttemptAt"]) == ("failed", 4, None)
    assert len(receiver.received) == 4


def test_configured_retry_delays(hook_app, receiver):
    app = hook_app(SVC_WEBHOOK_RETRY_DELAYS="0.05")
    client = app.test_client()
    register(client)
    project = create_project(client)
    set_webhook(client, project, receiver.url)
    receiver.script(500, 500)
    file_report(client, project["apiKey"])
    run_due(app)
    time.sleep(0.1)
    run_due(app)
    time.sleep(0.1)
    assert run_due(app) == 0
    assert deliveries(client, project)[0]["status"] == "failed"
    assert len(receiver.received) == 2


@pytest.mark.parametrize(
    ("behaviour", "error"),
    [
        (("sleep", 4.5), "Timed out"),
        (("redirect", "/elsewhere"), "HTTP 302"),
        (("reset",), "Connection failed"),
        (404, "HTTP 404"),
    ],
)
def test_failures(hooked_project, receiver, behaviour, error):
    app, owner, project = hooked_project
    receiver.script(behaviour)
    file_report(owner, project["apiKey"])
    run_due(app)
    logged = deliveries(owner, project)[0]
    assert logged["status"] == "pending" and logged["attempts"] == 1
    assert logged["lastError"].startswith(error)
    assert [r.path for r in receiver.received] == ["/hook"]  # a redirect is not followed


def hooked_projects(owner, names) -> list[dict]:
    """More projects of `owner`, each with a webhook nothing answers on."""
    projects = []
    for name in names:
        project = create_project(owner, name)
        set_webhook(owner, project, "https://127.0.0.1:9/hook")
        projects.append(project)
    return projects


def test_no_more_than_two_attempts_of_one_project_are_claimed_at_once(hooked_project):
    app, owner, project = hooked_project
    [other] = hooked_projects(owner, ["Blog"])
    for _ in range(4):
        file_report(owner, project["apiKey"])
    file_report(owner, other["apiKey"])
    with app.app_context():
        first = delivery.claim_due(8)
        assert sorted(str(project_id) for _, _, project_id in first) == sorted(
            [project["id"]] * 2 + [other["id"]]
        )
        # Still under way, even with their leases over: none is claimed again, and the
        # project gets no third attempt until one of its two ends.
        running = {delivery_id: project_id for delivery_id, _, project_id in first}
        assert delivery.claim_due(8, now=later(3600), running=running) == []
        del running[next(d for d, p in running.items() if str(p) == project["id"])]
        (second,) = delivery.claim_due(8, running=running)
        assert str(second[2]) == project["id"] and second[0] not in running


def test_the_claim_takes_each_projects_earliest_due_as_a_window_over_all_would(hooked_project):
    """The claim reads project by project (svc.webhooks.delivery._due_candidates): what it
    takes is what the earliest due deliveries of each project, at most two, and the earliest of
    those overall say, with a project's attempts under way counted and skipped."""
    app, owner, project = hooked_project
    projects = [project, *hooked_projects(owner, ["Blog", "Shop", "Docs"])]
    for each, reports in zip(projects, (5, 3, 1, 4), strict=True):
        for _ in range(reports):
            file_report(owner, each["apiKey"])
    now = utcnow()
    with app.app_context():
        rows = db.session.scalars(select(WebhookDelivery).order_by(WebhookDelivery.id)).all()
        # Due times interleaved across projects; every fifth in the future, one not pending.
        for place, row in enumerate(rows):
            row.next_attempt_at = now + timedelta(seconds=(place * 7) % 13 - 20)
            if place % 5 == 4:
                row.next_attempt_at = now + timedelta(hours=1)
        rows[1].status = "failed"
        db.session.commit()
        rows = db.session.scalars(select(WebhookDelivery)).all()
        running = {rows[0].id: rows[0].project_id, rows[2].id: rows[2].project_id}
        running |= {r.id: r.project_id for r in rows if r.project_id == rows[2].project_id}
        under_way = Counter(running.values())
        # The reference: every due delivery, each project's two earliest, then the earliest.
        due = sorted(
            (r for r in rows
             if r.status == "pending" and r.next_attempt_at <= now and r.id not in running
             and under_way[r.project_id] < 2),
            key=lambda r: (r.next_attempt_at, r.id),
        )  # fmt: skip
        seen, expected = Counter(under_way), []
        for row in due:
            if seen[row.project_id] < 2 and len(expected) < 3:
                seen[row.project_id] += 1
                expected.append(row.id)
        claimed = delivery.claim_due(3, now=now, running=running)
    assert len(expected) == 3
    assert [delivery_id for delivery_id, _, _ in claimed] == expected


def test_a_claim_seeks_each_projects_due_deliveries_never_the_whole_backlog(hooked_project):
    """A window over every due delivery grew with the backlog: 170 ms a claim at 100,000 on
    SQLite, 83 on PostgreSQL (docs/performance.md, "A webhook claim behind a backlog"). The
    claim's plan looks each project's deliveries up by an index led by the project."""
    app, owner, project = hooked_project
    for each in (project, *hooked_projects(owner, ["Blog"])):
        for _ in range(3):
            file_report(owner, each["apiKey"])
    with app.app_context():
        with statements_run(db.engine) as run:
            assert len(delivery.claim_due(8)) == 4
        [(statement, parameters)] = [(s, p) for s, p in run if s.lstrip().startswith("WITH")]
        connection = db.engine.connect()
        if connection.dialect.name == "sqlite":
            plan = plan_of(connection, statement, parameters)
            by_project = r"USING (COVERING )?INDEX ix_webhook_deliveries_\w+ \([^)]*project_id=\?"
            assert re.search(by_project, plan), plan
            assert "SCAN webhook_deliveries" not in plan, plan
        else:
            # As on a large table: a table this small is cheapest read whole.
            connection.exec_driver_sql("SET enable_seqscan = off; SET enable_bitmapscan = off")
            plan = plan_of(connection, statement, parameters)
            # Either index led by the project: on a table this small the planner takes
            # (project_id, created_at) as readily.
            assert re.search(r"Index Cond: [^/]*\bproject_id = \w+\.project_id\b", plan), plan
            assert "Seq Scan on webhook_deliveries" not in plan, plan
        connection.close()


@pytest.mark.parametrize(
    ("behaviour", "outcome"),
    [
        # 200 MiB: the first 64 KiB are read, then the connection is closed.
        (("huge",), ("succeeded", None)),
        # Every byte well within the 3 s timeout: the attempt still ends at 3 s in all.
        (("drip", 0.3), ("pending", "Timed out after 3 s")),
    ],
)
def test_an_answer_that_never_ends_costs_one_bounded_attempt(
    hooked_project, receiver, behaviour, outcome
):
    app, owner, project = hooked_project
    receiver.script(behaviour)
    file_report(owner, project["apiKey"])
    started = time.monotonic()
    run_due(app)
    assert time.monotonic() - started < 6
    logged = deliveries(owner, project)[0]
    assert (logged["status"], logged["lastError"]) == outcome


def test_untrusted_certificate_is_a_failure(make_app, receiver):
    app = make_app(SVC_WEBHOOK_ALLOW_PRIVATE="true")  # no CA bundle: the system store only
    client = app.test_client()
    register(client)
    project = create_project(client)
    set_webhook(client, project, receiver.url)
    file_report(client, project["apiKey"])
    run_due(app)
    assert deliveries(client, project)[0]["lastError"].startswith("TLS error")


def test_attempts_share_one_tls_context_a_ca_bundle(certificate_authority):
    """A context for each attempt cost 29 ms of CPU loading the system's certificates
    (docs/performance.md): a process keeps one per CA bundle, and a bundle's certificates
    stay out of the system store's context (the test above)."""
    bundle = certificate_authority[1]
    assert deadline.tls_context(bundle) is deadline.tls_context(bundle)
    assert deadline.tls_context(None) is deadline.tls_context(None)
    trusted = {name: deadline.tls_context(name).cert_store_stats()["x509_ca"]
               for name in (None, bundle)}  # fmt: skip
    assert trusted[None] < trusted[bundle]


def test_redeliver_starts_a_new_cycle_with_the_same_id(hooked_project, receiver):
    app, owner, project = hooked_project
    receiver.script(*[500] * 4)
    file_report(owner, project["apiKey"])
    for seconds in (0, 11, 72, 373):
        run_due(app, at=later(seconds))
    failed = deliveries(owner, project)[0]
    assert failed["status"] == "failed"
    response = owner.post(
        f"/api/v1/projects/{project['id']}/webhook-deliveries/{failed['id']}/redeliver",
        headers=csrf(owner),
    )
    assert response.status_code == 202
    assert (response.get_json()["status"], response.get_json()["attempts"]) == ("pending", 0)
    run_due(app)
    again = deliveries(owner, project)[0]
    assert (again["id"], again["status"], again["attempts"]) == (failed["id"], "succeeded", 1)
    assert receiver.received[-1].headers["X-Svc-Delivery"] == failed["id"]
    assert len(receiver.received) == 5


def test_a_deleted_report_lives_on_in_no_delivery(hooked_project, receiver):
    """docs/api.md §12: its pending deliveries are cancelled, every payload that held
    it is cleared, and none can be redelivered; another report's delivery goes on."""
    app, owner, project = hooked_project
    file_report(owner, project["apiKey"], title="Secret plans for the launch")
    run_due(app)  # report.created, delivered
    owner.patch("/api/v1/reports/WS-1", json={"status": "resolved"}, headers=csrf(owner))
    file_report(owner, project["apiKey"], title="Another report")
    assert owner.delete("/api/v1/reports/WS-1", headers=csrf(owner)).status_code == 204

    log = deliveries(owner, project)
    by_event = sorted((d["event"], d["status"], d["lastError"]) for d in log)
    assert by_event == [
        ("report.created", "pending", None),  # the other report's
        ("report.created", "succeeded", None),
        ("report.updated", "failed", "Cancelled: the report was deleted"),
    ]
    for logged in (d for d in log if d["status"] != "pending"):
        response = owner.post(
            f"/api/v1/projects/{project['id']}/webhook-deliveries/{logged['id']}/redeliver",
            headers=csrf(owner),
        )
        assert response.status_code == 404
    with app.app_context():
        payloads = db.session.scalars(select(WebhookDelivery.payload)).all()
    assert not any("Secret plans" in payload for payload in payloads)
    assert sorted(payload == "" for payload in payloads) == [False, True, True]

    run_due(app, at=later(3600))
    titles = [request.json()["data"]["title"] for request in receiver.received]
    assert titles == ["Secret plans for the launch", "Another report"]


def test_each_attempt_is_claimed_once(hooked_project, receiver):
    app, owner, project = hooked_project
    file_report(owner, project["apiKey"])
    with app.app_context():
        first = delivery.claim_due(10)
        second = delivery.claim_due(10)
    assert len(first) == 1 and second == []


def test_a_stale_outcome_does_not_overwrite_a_redelivery(hooked_project, receiver):
    app, owner, project = hooked_project
    file_report(owner, project["apiKey"])
    with app.app_context():
        ((delivery_id, attempt_number, _project),) = delivery.claim_due(10)
        delivery.redeliver(
            project_id=db.session.get(WebhookDelivery, delivery_id).project_id,
            delivery_id=delivery_id,
        )
        delivery.attempt(delivery_id, attempt_number)
        row = db.session.get(WebhookDelivery, delivery_id)
        db.session.refresh(row)
        assert (row.status, row.attempts) == ("pending", 0)


def test_a_delivery_that_cannot_be_built_fails_at_once(hooked_project, receiver):
    """A payload no attempt can turn into a request (here one a chat format cannot read) is
    failed on its first attempt, not retried for ever."""
    app, owner, project = hooked_project
    set_webhook(owner, project, receiver.url, "slack")
    file_report(owner, project["apiKey"])
    with app.app_context():
        row = db.session.scalars(select(WebhookDelivery)).one()
        row.payload = '{"event": "report.created", "data": '  # cut short
        db.session.commit()
    assert run_due(app) == 1
    [logged] = deliveries(owner, project)
    assert (logged["status"], logged["attempts"]) == ("failed", 1)
    assert logged["lastError"].startswith("cannot be built")
    assert logged["nextAttemptAt"] is None
    assert run_due(app, at=utcnow() + timedelta(days=1)) == 0
    assert receiver.received == []


# --- chat formats -------------------------------------------------------------------------------


@pytest.mark.parametrize(("webhook_format", "key"), [("slack", "text"), ("discord", "content")])
def test_chat_messages(hook_app, receiver, webhook_format, key):
    app = hook_app(SVC_PUBLIC_URL="https://bugs.example.com/")
    client = app.test_client()
    client.user = register(client)
    project = create_project(client)
    set_webhook(client, project, receiver.url, webhook_format)
    file_report(
        client, project["apiKey"], title="Checkout fails", severity="critical", category="crash"
    )
    client.patch("/api/v1/reports/WS-1", json={"status": "resolved"}, headers=csrf(client))
    run_due(app)
    bodies = sorted((r.json() for r in receiver.wait_for(2)), key=lambda b: b[key])
    expected_keys = {key, "allowed_mentions"} if webhook_format == "discord" else {key}
    assert [set(body) for body in bodies] == [expected_keys, expected_keys]
    created, updated = bodies
    assert created[key] == (
        "New report WS-1 [critical, crash]: Checkout fails https://bugs.example.com/reports/WS-1"
    )
    assert updated[key] == (
        "Updated WS-1 [critical, crash]: Checkout fails "
        "(status new → resolved) https://bugs.example.com/reports/WS-1"
    )
    # Same headers as JSON deliveries, signature over the bytes actually sent.
    request = receiver.received[0]
    assert (
        request.headers["X-Svc-Signature"]
        == hmac.new(project["apiKey"].encode(), request.body, hashlib.sha256).hexdigest()
    )


HOSTILE_TITLE = (
    "<!channel> <https://evil.example|https://good.example> & @everyone "
    "[good](https://evil.example) **now**"
)


@pytest.mark.parametrize(
    ("webhook_format", "key", "escaped"),
    [
        (
            "slack",
            "text",
            "&lt;!channel&gt; &lt;https://evil.example|https://good.example&gt; &amp; @everyone "
            "[good](https://evil.example) **now**",
        ),
        (
            "discord",
            "content",
            "\\<!channel\\> \\<https://evil.example\\|https://good.example\\> & \\@everyone "
            "\\[good\\]\\(https://evil.example\\) \\*\\*now\\*\\*",
        ),
    ],
)
def test_chat_messages_carry_what_users_wrote_as_text(
    hook_app, receiver, webhook_format, key, escaped
):
    """Through the public API key anyone can choose a title: in a channel it must not ping
    everyone nor pass off one link as another, in the created event nor in an update."""
    app = hook_app()
    client = app.test_client()
    client.user = register(client)
    project = create_project(client)
    set_webhook(client, project, receiver.url, webhook_format)
    file_report(client, project["apiKey"], title=HOSTILE_TITLE, severity="low", category="bug")
    client.patch("/api/v1/reports/WS-1", json={"title": "@here x"}, headers=csrf(client))
    run_due(app)
    created, updated = (request.json() for request in receiver.wait_for(2))
    assert created[key] == f"New report WS-1 [low, bug]: {escaped}"
    assert updated[key].startswith("Updated WS-1 [low, bug]: ")
    assert f"(title {escaped} → " in updated[key]
    for body in (created, updated):
        if webhook_format == "discord":
            assert body["allowed_mentions"] == {"parse": []}
        else:
            assert set(body) == {"text"}


def test_chat_message_without_public_url_has_no_link(hooked_project, receiver):
    app, owner, project = hooked_project
    set_webhook(owner, project, receiver.url, "slack")
    file_report(owner, project["apiKey"], title="Checkout fails")
    run_due(app)
    assert receiver.wait_for(1)[0].json() == {"text": "New report WS-1 [high, bug]: Checkout fails"}


# --- SSRF guard ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "10.0.0.1", "169.254.169.254", "localhost", "[::1]", "192.168.1.1", "0.0.0.0",
     "svc-no-such-host.invalid"],
)  # fmt: skip
def test_non_public_addresses_are_refused(make_app, receiver, certificate_authority, host):
    app = make_app(SVC_WEBHOOK_CA_BUNDLE=certificate_authority[1])  # guard on (the default)
    client = app.test_client()
    register(client)
    project = create_project(client)
    set_webhook(client, project, f"https://{host}:{receiver.port}/hook")
    file_report(client, project["apiKey"])
    run_due(app)
    logged = deliveries(client, project)[0]
    # Which address the name stands for, or whether it stands for any, is not told: the log is
    # no DNS oracle for members (a name that does not resolve gets the same words).
    assert logged["lastError"] == "Refused: no public address"
    assert logged["lastStatusCode"] is None
    assert receiver.received == []


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("93.184.216.34", True),
        ("2606:2800:220:1:248:1893:25c8:1946", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.0.1", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("0.0.0.0", False),
        ("224.0.0.1", False),
        ("::1", False),
        ("fe80::1", False),
        ("fc00::1", False),
        ("::ffff:127.0.0.1", False),
        ("240.0.0.1", False),
        ("198.18.0.1", False),
        # IPv6 forms that hold an IPv4 address are judged by it...
        ("::ffff:93.184.216.34", True),
        ("64:ff9b::93.184.216.34", True),
        ("64:ff9b::127.0.0.1", False),
        ("64:ff9b::10.0.0.1", False),
        ("64:ff9b::169.254.169.254", False),
        ("2002:5db8:d822::1", True),  # 6to4 of 93.184.216.34
        ("2002:7f00:1::1", False),  # 6to4 of 127.0.0.1
        ("2002:a9fe:a9fe::1", False),  # 6to4 of 169.254.169.254
        # ...and those that never lead to a webhook receiver are refused, whatever they hold.
        ("64:ff9b:1::93.184.216.34", False),  # local-use NAT64
        ("::93.184.216.34", False),  # IPv4-compatible
        ("::127.0.0.1", False),
        ("::ffff:0:93.184.216.34", False),  # IPv4-translated
        ("::ffff:0:7f00:1", False),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", False),  # Teredo
        ("fec0::1", False),  # site-local
    ],
)
def test_public_address_check(address, public):
    assert sender.is_public(address) is public


# --- delivery log -------------------------------------------------------------------------------


def test_delivery_log_pages_newest_first(hooked_project):
    _app, owner, project = hooked_project
    for _ in range(3):
        file_report(owner, project["apiKey"])
    response = owner.get(
        f"/api/v1/projects/{project['id']}/webhook-deliveries", query_string={"page_size": 2}
    )
    page = response.get_json()
    assert (page["total"], page["page"], page["pageSize"], len(page["items"])) == (3, 1, 2, 2)
    assert set(page["items"][0]) == {
        "id",
        "event",
        "reportId",
        "trackingId",
        "status",
        "attempts",
        "lastStatusCode",
        "lastError",
        "nextAttemptAt",
        "createdAt",
        "updatedAt",
    }
    all_items = deliveries(owner, project)
    created = [item["createdAt"] for item in all_items]
    assert created == sorted(created, reverse=True)
    assert (
        owner.get(
            f"/api/v1/projects/{project['id']}/webhook-deliveries", query_string={"page": 0}
        ).status_code
        == 422
    )


def test_delivery_log_rights(hooked_project):
    app, owner, project = hooked_project
    file_report(owner, project["apiKey"])
    member = app.test_client()
    register(member, email="grace@example.com")
    outsider = app.test_client()
    register(outsider, email="mallory@example.com")
    add_to_project(owner, project["id"], member, "grace@example.com")
    assert len(deliveries(member, project)) == 1
    delivery_id = deliveries(owner, project)[0]["id"]
    path = f"/api/v1/projects/{project['id']}/webhook-deliveries"
    assert outsider.get(path).status_code == 404
    assert (
        outsider.post(f"{path}/{delivery_id}/redeliver", headers=csrf(outsider)).status_code == 404
    )
    assert (
        owner.post(
            f"{path}/00000000-0000-4000-8000-000000000000/redeliver", headers=csrf(owner)
        ).status_code
        == 404
    )
    other_project = create_project(owner, "Backend")
    assert (
        owner.post(
            f"/api/v1/projects/{other_project['id']}/webhook-deliveries/{delivery_id}/redeliver",
            headers=csrf(owner),
        ).status_code
        == 404
    )


def test_deleting_the_project_removes_its_deliveries(hooked_project):
    app, owner, project = hooked_project
    file_report(owner, project["apiKey"])
    owner.delete(f"/api/v1/projects/{project['id']}", headers=csrf(owner))
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(WebhookDelivery)) == 0


def test_payload_is_fixed_when_the_event_happens(hooked_project, receiver):
    """A report changed before delivery: the created event still says what was created."""
    app, owner, project = hooked_project
    file_report(owner, project["apiKey"], title="Original")
    owner.patch("/api/v1/reports/WS-1", json={"title": "Renamed"}, headers=csrf(owner))
    run_due(app)
    by_event = {r.json()["event"]: r.json() for r in receiver.wait_for(2)}
    assert by_event["report.created"]["data"]["title"] == "Original"
    assert by_event["report.updated"]["data"]["changes"] == {
        "title": {"from": "Original", "to": "Renamed"}
    }
    assert json.loads(json.dumps(by_event))  # plain JSON throughout


# --- the retry schedule, as a property ------------------------------------------------------------


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    delays=st.lists(st.integers(min_value=1, max_value=10_000), min_size=0, max_size=4),
    answers=st.lists(st.sampled_from([200, 204, 404, 500, 503]), min_size=1, max_size=6),
)
def test_the_retry_schedule_follows_the_configured_delays(
    hooked_project, receiver, delays, answers
):
    """Whatever the delays and the receiver's answers: one attempt, then one per delay at most;
    each retry falls due exactly its delay after the failure; the end state says how it went."""
    app, owner, project = hooked_project
    app.config["SVC_WEBHOOK_RETRY_DELAYS"] = tuple(float(d) for d in delays)
    receiver.received.clear()
    receiver.script(*answers)
    report = file_report(owner, project["apiKey"]).get_json()
    budget = len(delays) + 1
    # Once its script runs out the receiver answers 200.
    first_success = next(i for i, a in enumerate([*answers, 200]) if 200 <= a < 300)
    expected_attempts = min(budget, first_success + 1)

    for attempt_number in range(1, expected_attempts + 1):
        assert run_due(app, at=later(10_001 * attempt_number)) == 1
        with app.app_context():
            row = db.session.scalars(
                select(WebhookDelivery).where(WebhookDelivery.report_id == uuid.UUID(report["id"]))
            ).one()
            assert row.attempts == attempt_number
            if row.status == "pending":
                waited = row.next_attempt_at - row.updated_at
                assert waited == timedelta(seconds=delays[attempt_number - 1])
    assert run_due(app, at=later(10_001 * (budget + 1))) == 0  # nothing more, ever

    final = next(d for d in deliveries(owner, project) if d["reportId"] == report["id"])
    succeeded = first_success < budget
    assert final["status"] == ("succeeded" if succeeded else "failed")
    assert final["attempts"] == expected_attempts
    assert final["nextAttemptAt"] is None
    assert len(receiver.received) == expected_attempts
    receiver.clear_script()  # answers left unused must not reach the next example


def test_a_comment_is_a_signed_report_commented_event(hooked_project, receiver):
    app, owner, project = hooked_project
    report = file_report(owner, project["apiKey"]).get_json()
    run_due(app)
    response = owner.post(
        "/api/v1/reports/WS-1/comments", json={"body": "Seen on iOS too"}, headers=csrf(owner)
    )
    comment = response.get_json()
    assert run_due(app) == 1
    request = receiver.wait_for(2)[1]
    body = request.json()
    assert body["event"] == "report.commented" and request.headers["X-Svc-Event"] == (
        "report.commented"
    )
    # The report's webhook fields (a comment leaves the report as it was), and the comment.
    assert {key: body["data"][key] for key in CREATED_FIELDS} == {
        key: report[key] for key in CREATED_FIELDS
    }
    assert body["data"]["comment"] == {
        "id": comment["id"],
        "author": {"id": owner.user["id"], "name": "Ada Lovelace"},
        "body": "Seen on iOS too",
    }
    Webhook(project["webhookSecret"]).verify(request.body, request.headers)


@pytest.mark.parametrize(
    ("webhook_format", "key", "escaped"),
    [
        ("slack", "text", "&lt;!channel&gt; [good](https://evil.example) &amp; @everyone"),
        ("discord", "content", "\\<!channel\\> \\[good\\]\\(https://evil.example\\) & \\@everyone"),
    ],
)
def test_a_comment_in_a_chat_channel_is_text(hook_app, receiver, webhook_format, key, escaped):
    app = hook_app(SVC_PUBLIC_URL="https://bugs.example.com")
    client = app.test_client()
    client.user = register(client)
    project = create_project(client)
    set_webhook(client, project, receiver.url, webhook_format)
    file_report(client, project["apiKey"], title="Checkout fails")
    client.post(
        "/api/v1/reports/WS-1/comments",
        json={"body": "<!channel> [good](https://evil.example)\n& @everyone"},
        headers=csrf(client),
    )
    run_due(app)
    commented = receiver.wait_for(2)[1].json()
    assert commented[key] == (
        f"Ada Lovelace commented on WS-1 (Checkout fails): {escaped} "
        "https://bugs.example.com/reports/WS-1"
    )
