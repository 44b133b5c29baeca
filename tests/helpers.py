"""What many tests share beyond the harness: sample bodies and images, the fields of a report,
the route table."""

import contextlib
import re
import shutil
import sqlite3
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import pyotp
from babel.support import NullTranslations
from sqlalchemy import event

from harness.client import (
    PASSWORD,
    create_project,
    csrf,
    invite,
    png_bytes,
    register,
    sqlite_app,
)


@contextmanager
def statements_run(engine):
    """The (statement, parameters) of everything the engine sends while the block runs."""
    statements = []

    def note(_connection, _cursor, statement, parameters, _context, _many):
        statements.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", note)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", note)


def plan_of(connection, statement: str, parameters, postgresql: str = "EXPLAIN ") -> str:
    """The database's plan for a statement, its lines joined by " / " (SQLite's EXPLAIN QUERY
    PLAN; on PostgreSQL `postgresql` before the statement)."""
    explain = "EXPLAIN QUERY PLAN " if connection.dialect.name == "sqlite" else postgresql
    return " / ".join(
        str(row[-1]) for row in connection.exec_driver_sql(explain + statement, parameters)
    )


REPORT = {
    "title": "Checkout button does nothing",
    "description": "Clicking pay has no effect.",
    "severity": "high",
    "category": "bug",
}


def file_report(client, api_key: str, headers: dict | None = None, **fields):
    """POST /api/v1/reports with the API key, then what the scheduler's next second does with
    it (fan_out: counters, webhook delivery, notifications); returns the response."""
    response = client.post(
        "/api/v1/reports",
        json={**REPORT, **fields},
        headers={"X-API-Key": api_key, **(headers or {})},
    )
    fan_out(client.application)
    return response


def capture_network_details(owner, project_id: str) -> None:
    """Turn on the project's capture of requests' headers and bodies (off by default: then the
    service keeps none, whatever a client sends)."""
    details = {"settings": {"widget": {"capture_network_details": True}}}
    changed = owner.patch(f"/api/v1/projects/{project_id}", json=details, headers=csrf(owner))
    assert changed.status_code == 200, changed.get_json()


def furnish(owner, project: dict) -> dict:
    """Give a project something of each kind the access tests reach for: a webhook, a report
    with a screenshot and the report's delivery, a comment, a pending invitation, an
    integration (with a tracker that cannot be reached) and a call to it that failed for good,
    the report's status page, an export job, an
    authenticator app the owner began to enrol (unconfirmed: signing in stays as it was). The
    path values naming them."""
    owner.patch(
        f"/api/v1/projects/{project['id']}",
        json={"settings": {"webhook_url": "https://hooks.example.com/svc"}},
        headers=csrf(owner),
    )
    key = upload(owner, project["apiKey"], png_bytes()).get_json()["key"]
    report = file_report(owner, project["apiKey"], screenshot_url=key).get_json()
    deliveries = owner.get(f"/api/v1/projects/{project['id']}/webhook-deliveries").get_json()
    invitation = invite(owner, project["id"], "newcomer@example.com", "viewer")
    comment = owner.post(
        f"/api/v1/reports/{report['trackingId']}/comments",
        json={"body": "Seen on iOS too"},
        headers=csrf(owner),
    ).get_json()
    integration = owner.post(
        f"/api/v1/projects/{project['id']}/integrations",
        json={
            "kind": "github",
            "name": "Shop repository",
            "config": {"repository": "acme/shop", "api_url": "https://github.example/api/v3"},
            "token": "ghp_furnished",
        },
        headers=csrf(owner),
    ).get_json()
    status_link = owner.post(
        f"/api/v1/reports/{report['trackingId']}/status-link", headers=csrf(owner)
    ).get_json()
    call_id = failed_call(owner.application, integration["id"], report["id"])
    factor = owner.post("/api/v1/auth/factors/totp", headers=csrf(owner)).get_json()
    export_job = owner.post(
        f"/api/v1/projects/{project['id']}/exports", json={}, headers=csrf(owner)
    ).get_json()
    return {
        "job_id": export_job["id"],
        "factor_id": factor["id"],
        "token": status_link["url"].rsplit("/", 1)[1],
        "integration_id": integration["id"],
        "invitation_id": invitation["id"],
        "comment_id": comment["id"],
        "project_id": project["id"],
        "report_ref": report["trackingId"],
        "delivery_id": deliveries["items"][0]["id"],
        "call_id": call_id,
        "key": key,
        "name": "player.js",  # /replay/<name>: a file of the replay player
        "locale": "de",  # /widget-<locale>.json: the widget's words in German
    }


def failed_call(app, integration_id: str, report_id: str) -> str:
    """A call to a tracker that failed for good (what the scheduler leaves after a 401)."""
    import uuid

    from svc.extensions import db
    from svc.models import IntegrationCall

    call_id = uuid.uuid4()
    with app.app_context():
        db.session.add(
            IntegrationCall(id=call_id, integration_id=uuid.UUID(integration_id),
                            report_id=uuid.UUID(report_id), action="create", status="failed",
                            attempts=1, last_status_code=401, last_error="refused the token")
        )  # fmt: skip
        db.session.commit()
    return str(call_id)


def team_with_project(app):
    """Ada, signed in through the test client, with a project: `.project`, and `.key` its API
    key (the widget's)."""
    client = app.test_client()
    register(client)
    client.project = create_project(client)
    client.key = client.project["apiKey"]
    return client


def fan_out(app) -> int:
    """What the scheduler's fan-out does each second: every waiting report event's effects
    (counters, webhook deliveries, notifications); how many events."""
    from svc.services.reporting import fanout

    with app.app_context():
        return fanout.run()


def wait_until_settled(app, model, count: int, seconds: float = 30) -> None:
    """Wait until the outbox `model` holds `count` rows and none of them is pending, so that no
    attempt is under way or can be claimed again: whatever was sent has arrived, once or twice.
    (A claim needs a pending row, and its attempt is made before its outcome is recorded.)"""
    from sqlalchemy import func, select

    from harness.service import wait_until
    from svc.extensions import db
    from svc.models.webhooks import PENDING

    def settled() -> bool:
        with app.app_context():
            total = db.session.scalar(select(func.count()).select_from(model))
            pending = db.session.scalar(
                select(func.count()).select_from(model).where(model.status == PENDING)
            )
            db.session.rollback()
        return total == count and pending == 0

    wait_until(settled, seconds=seconds, message=f"{count} {model.__tablename__} settled")


def send_due(app) -> list:
    """What the scheduler's reset-link and mail jobs do once: make the reset links asked for,
    claim what is due and attempt each; the attempts' errors (None for a mail that went)."""
    from svc.mail import outbox
    from svc.services.identity import password_resets

    with app.app_context():
        password_resets.handle_requests()
        claimed = outbox.claim_due(10, running={})
        return [outbox.attempt(mail_id, number) for mail_id, number, _ in claimed]


def text_of(message) -> str:
    """The plain-text part of a received mail."""
    return message.get_body(("plain",)).get_content()


def upload(client, api_key: str, data: bytes, filename: str = "shot.png"):
    import io

    return client.post(
        "/api/v1/upload/screenshot",
        headers={"X-API-Key": api_key},
        data={"file": (io.BytesIO(data), filename)},
        content_type="multipart/form-data",
    )


# The widget settings of a project that never changed them (docs/api.md §7.3).
WIDGET_DEFAULTS = {
    "primaryColor": "#2563eb",
    "buttonText": "Report a bug",
    "modalTitle": "Report a bug",
    "logoUrl": None,
    "position": "bottom-right",
    "enableScreenshot": True,
    "enableSessionRecording": True,
    "showWatermark": False,
    "captureConsole": True,
    "captureNetwork": True,
    "captureActions": True,
    "captureNetworkDetails": False,
    "enableReplay": False,
    "replaySeconds": 60,
    "replayMaskAllText": True,
    "locale": "auto",
    "testIdAttribute": "data-testid",
}

# The report object of docs/api.md §8: the list leaves out the captured arrays.
SUMMARY_FIELDS = {
    "id",
    "projectId",
    "trackingId",
    "title",
    "description",
    "severity",
    "category",
    "status",
    "reporterIdentifier",
    "screenshotUrl",
    "annotatedScreenshotUrl",
    "metadata",
    "assigneeId",
    "signature",
    "duplicateOf",
    "duplicateCount",
    "reporterCount",
    "createdAt",
    "updatedAt",
}
FULL_FIELDS = SUMMARY_FIELDS | {
    "consoleLogs",
    "networkLogs",
    "userActions",
    "externalIssues",
    "replayUrl",
    "locale",
    "lastReproduction",
}


def reports_in_file_alone(database: Path, copy: Path) -> int | None:
    """The reports a copy of the database file holds without its write-ahead log; None when
    the copy caught a checkpoint half-way."""
    shutil.copyfile(database, copy)
    try:
        with contextlib.closing(sqlite3.connect(copy)) as connection:
            return connection.execute("SELECT count(*) FROM reports").fetchone()[0]
    except sqlite3.DatabaseError:
        return None
    finally:
        for leftover in (copy, Path(f"{copy}-wal"), Path(f"{copy}-shm")):
            leftover.unlink(missing_ok=True)


WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def migrated_sqlite_app(tmp_path):
    """harness.client.sqlite_app, its database migrated: its file is tmp_path / "svc.sqlite3"."""
    from svc.extensions import migrate

    app = sqlite_app(tmp_path)
    with app.app_context():
        migrate.upgrade()
    return app


@contextmanager
def writer_holding_the_lock(database: Path):
    """Another connection holds SQLite's write lock for the block: a worker in the middle of
    storing a report. What must not wait for it is checked inside."""
    writer = sqlite3.connect(database, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        writer.rollback()
        writer.close()


@contextmanager
def collection_app():
    """An app for reading the route table or the API description while tests are collected;
    neither depends on the database."""
    from svc import create_app

    with tempfile.TemporaryDirectory() as instance:
        yield create_app({"SVC_INSTANCE_PATH": instance, "SVC_SECRET_KEY": "collection only"})


def api_routes() -> list[tuple[str, str, tuple[str, ...]]]:
    """(rule, method, accepted credential kinds) of every API route, read off the route table so
    that a new endpoint is covered by every test built on it."""
    from svc.openapi import is_api_rule

    with collection_app() as app:
        return [
            (
                rule.rule,
                method,
                getattr(app.view_functions[rule.endpoint], "accepted_credentials", ()),
            )
            for rule in app.url_map.iter_rules()
            if is_api_rule(rule)
            for method in sorted(rule.methods - {"HEAD", "OPTIONS"})
        ]


# A body that passes validation, so that what answers is the check under test (the order of
# checks puts validation before ids). A new write endpoint that needs a body fails
# test_other_users_ids_are_404 until it is given one here.
VALID_BODIES = {
    ("/api/v1/projects/<uuid:project_id>", "PATCH"): {"name": "Renamed"},
    ("/api/v1/projects/<uuid:project_id>/invitations", "POST"): {"email": "mallory@example.com"},
    ("/api/v1/projects/<uuid:project_id>/members/<uuid:user_id>", "PATCH"): {"role": "viewer"},
    ("/api/v1/reports/<report_ref>", "PATCH"): {"status": "closed"},
    ("/api/v1/reports", "PATCH"): {"ids": ["WS-1"], "set": {"status": "closed"}},
    # The furnished project's one report: itself, which is refused after the role is checked.
    ("/api/v1/reports/<report_ref>/duplicate-of", "POST"): {"target": "WS-1"},
    ("/api/v1/reports", "DELETE"): {"ids": ["WS-1"]},
    ("/api/v1/reports/<report_ref>/comments", "POST"): {"body": "Me too"},
    ("/api/v1/comments/<uuid:comment_id>", "PATCH"): {"body": "Edited"},
    ("/api/v1/tokens", "POST"): {"name": "t"},
    ("/api/v1/auth/factors/<uuid:factor_id>/confirm", "POST"): {
        "code": "123456",
        "current_password": PASSWORD,
    },
    ("/api/v1/auth/factors/<uuid:factor_id>", "DELETE"): {"current_password": PASSWORD},
    ("/api/v1/auth/recovery-codes", "POST"): {"current_password": PASSWORD},
    ("/api/v1/admin/users/<uuid:user_id>", "PATCH"): {"active": False},
    ("/api/v1/projects", "POST"): {"name": "Another"},
    ("/api/v1/projects/<uuid:project_id>/exports", "POST"): {"format": "ndjson"},
    ("/api/v1/projects/<uuid:project_id>/reporter-data/erase", "POST"): {
        "reporter_identifier": "jo@example.com"
    },
    ("/api/v1/projects/<uuid:project_id>/integrations", "POST"): {
        "kind": "github",
        "name": "Another repository",
        "config": {"repository": "acme/other", "api_url": "https://github.example/api/v3"},
        "token": "ghp_another",
    },
    ("/api/v1/integrations/<uuid:integration_id>", "PATCH"): {"name": "Renamed"},
    # No such integration: what answers is the check under test, or else a 404.
    ("/api/v1/reports/<report_ref>/issues", "POST"): {
        "integration_id": "00000000-0000-4000-8000-000000000000"
    },
    ("/api/v1/auth/password", "POST"): {
        "current_password": PASSWORD,
        "new_password": "another long password",
    },
}


def needed_roles() -> dict[tuple[str, str], str]:
    """{(rule, method): the least project role it needs} of the endpoints that declare one
    (svc.api.decorators.documents_role)."""
    with collection_app() as app:
        return {
            (rule.rule, method): app.view_functions[rule.endpoint].documented_role
            for rule in app.url_map.iter_rules()
            if hasattr(app.view_functions[rule.endpoint], "documented_role")
            for method in rule.methods - {"HEAD", "OPTIONS"}
        }


def admin_routes() -> list[tuple[str, str, tuple[str, ...]]]:
    """The api_routes() entries of the administrators' endpoints (svc.auth.guard.admin_required)."""
    with collection_app() as app:
        admin_only = {
            rule.rule
            for rule in app.url_map.iter_rules()
            if getattr(app.view_functions[rule.endpoint], "needs_admin", False)
        }
    return [route for route in api_routes() if route[0] in admin_only]


def route_id(route) -> str:
    rule, method, _ = route
    return f"{method} {rule}"


# The query strings that routes require, as VALID_BODIES gives bodies.
VALID_QUERIES = {
    "/api/v1/projects/<uuid:project_id>/reporter-data": "?reporter_identifier=jo@example.com",
}


def url_for_route(rule: str, values: dict) -> str:
    """The rule with Ada's ids filled in (and the query it requires, if any). A new path
    parameter is a KeyError here: give it one."""
    path = re.sub(r"<(?:\w+:)?(\w+)>", lambda match: str(values[match.group(1)]), rule)
    return path + VALID_QUERIES.get(rule, "")


def run_in_processes(app, code: str, count: int = 2) -> list[str]:
    """Run `code` (Python, with `app` bound to an app on `app`'s database) in `count` processes
    at once, as that many schedulers would; what each printed."""
    import os
    import subprocess
    import sys
    import textwrap

    environment = {
        **os.environ,
        "SVC_DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"],
        "SVC_INSTANCE_PATH": app.instance_path,
        "SVC_SECRET_KEY": app.config["SECRET_KEY"],
    }
    script = "from svc import create_app\napp = create_app()\n" + textwrap.dedent(code)
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", script], env=environment, stdout=subprocess.PIPE, text=True
        )
        for _ in range(count)
    ]
    return [process.communicate(timeout=120)[0] for process in processes]


# TOTP codes from explicit time steps (svc takes one step of drift either side and spends a
# step once): a code recomputed "now" seconds later may be another step's, so tests keep the
# step they spent and derive every later code from it.
TOTP_STEP_SECONDS = 30


def totp_step() -> int:
    return int(time.time()) // TOTP_STEP_SECONDS


def totp_code(secret: str, step: int) -> str:
    return pyotp.TOTP(secret).generate_otp(step)


def unspent_totp_code(secret: str, spent: int) -> str:
    """A code svc takes after step `spent` was used: the current step's, or, while the clock is
    still on the spent step, the next one's (within the drift)."""
    return totp_code(secret, max(spent + 1, totp_step()))


# --- a pseudo-language: what svc says, wrapped and made longer ---------------------------------


def pseudo(message: str) -> str:
    """Every message wrapped and a third longer: what is not wrapped was never translated, and
    what is cut off or overflows would be in a longer language."""
    return f"⟦{message}{'~' * (len(message) // 3)}⟧"


class PseudoTranslations(NullTranslations):
    """A catalog that says every message in the pseudo-language."""

    def gettext(self, message):
        return pseudo(message)

    def ngettext(self, singular, plural, n):
        return pseudo(singular if n == 1 else plural)
