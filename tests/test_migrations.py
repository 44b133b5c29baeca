"""The migrations build exactly the schema the models describe, on each test database."""

import logging
import uuid
import warnings
from datetime import UTC, datetime, timedelta

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Column, insert, select, text
from sqlalchemy.schema import CreateIndex

from harness.client import create_project, register, sqlite_app
from svc import serve
from svc.extensions import db, migrate
from svc.models import SEVERITY_RANK, Report, declared_by_models, search_index
from svc.services import projects
from svc.services.identity import users
from tests.helpers import file_report


def test_models_and_migrations_agree(app):
    with app.app_context(), db.engine.connect() as connection:
        sqlite = connection.dialect.name == "sqlite"
        # SQLite's reflection skips an index of an expression (with a warning): those are
        # compared by their CREATE INDEX below.
        expressions = {
            index.name: index
            for table in db.metadata.tables.values()
            for index in table.indexes
            if sqlite and any(not isinstance(e, Column) for e in index.expressions)
        }

        def include(obj, name, type_, reflected, compare_to):
            return name not in expressions and declared_by_models(
                obj, name, type_, reflected, compare_to
            )

        context = MigrationContext.configure(
            connection, opts={"compare_type": True, "include_object": include}
        )
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", ".*expression-based index")
            differences = compare_metadata(context, db.metadata)
        made = dict(
            connection.exec_driver_sql(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index'"
            ).all()
        ) if sqlite else {}  # fmt: skip
        for name, index in expressions.items():
            model = str(CreateIndex(index).compile(dialect=connection.dialect))
            assert " ".join(made[name].split()) == " ".join(model.split()), (made[name], model)
    assert differences == []


def test_running_migrations_leaves_the_application_loggers_alone(app):
    # The app fixture migrated after svc's modules made their loggers; Alembic's logging
    # setup used to disable every logger it did not name, silencing svc's error log.
    assert not logging.getLogger("svc.errors").disabled
    assert logging.getLogger("svc.errors").isEnabledFor(logging.ERROR)


def test_reports_stored_before_the_search_migration_are_indexed_and_counted(app, user_client):
    project = create_project(user_client)
    for title in ("Checkout fails", "Login is slow", "Checkout button dead"):
        file_report(user_client, project["apiKey"], title=title)
    with app.app_context():
        migrate.downgrade(revision="2623b13629f0")
        migrate.upgrade()

    page = user_client.get("/api/v1/reports", query_string={"search": "checkout"}).get_json()
    assert user_client.get("/api/v1/reports").get_json()["total"] == 3
    assert sorted(item["title"] for item in page["items"]) == [
        "Checkout button dead",
        "Checkout fails",
    ]
    assert user_client.get("/api/v1/reports").get_json()["total"] == 3
    file_report(user_client, project["apiKey"], title="Checkout again")
    page = user_client.get("/api/v1/reports", query_string={"search": "checkout"}).get_json()
    assert page["total"] == 3


def test_an_installation_from_before_admins_gets_its_first_user_as_admin(app):
    first, second = app.test_client(), app.test_client()
    register(first)
    register(second, email="grace@example.com", name="Grace Hopper")
    with app.app_context():
        migrate.downgrade(revision="cec1088549f4")  # before the admin columns
        migrate.upgrade()
    assert first.get("/api/v1/auth/me").get_json()["isAdmin"] is True
    assert second.get("/api/v1/auth/me").get_json()["isAdmin"] is False


def test_a_trackers_webhook_secret_is_encrypted_by_the_upgrade_and_still_checks(app, user_client):
    """Stored in clear before hardening 5: the upgrade encrypts it with the app's keys, and the
    tracker's deliveries, signed with the secret it was given, still pass."""
    import hashlib
    import hmac
    import json

    from harness.client import csrf
    from svc.models import Integration

    project = create_project(user_client)
    integration = user_client.post(
        f"/api/v1/projects/{project['id']}/integrations",
        json={
            "kind": "github",
            "name": "GitHub",
            "config": {"repository": "acme/shop"},
            "token": "ghp_" + "x" * 36,
        },
        headers=csrf(user_client),
    ).get_json()
    secret = integration["webhookSecret"]
    with app.app_context():
        migrate.downgrade(revision="a4d9c2e7f1b3")  # the secret in clear
        migrate.upgrade()
        stored = db.session.get(Integration, uuid.UUID(integration["id"]))
        assert secret not in stored.webhook_secret_encrypted
    body = json.dumps({"zen": "Keep it logically awesome."}).encode()
    signature = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    answer = user_client.post(
        f"/api/v1/integrations/{integration['id']}/events",
        data=body,
        headers={
            "X-GitHub-Event": "ping",
            "X-Hub-Signature-256": f"sha256={signature}",
            "X-GitHub-Delivery": "d-1",
            "Content-Type": "application/json",
        },
    )
    assert answer.status_code == 202, answer.get_json()


def test_serve_migrates_a_database_behind_the_head_and_skips_one_at_it(app, tmp_path):
    """svc.serve runs `flask db upgrade` only where there is something to do (a restart
    skips importing the app for it); a revision behind, or no database yet, migrates."""
    settings = {**app.config, "SVC_INSTANCE_PATH": str(tmp_path / "instance")}
    assert serve.at_head(settings)
    with app.app_context():
        migrate.downgrade(revision="-1")
        assert not serve.at_head(settings)
        migrate.upgrade()
    assert serve.at_head(settings)

    unset = {**settings, "SVC_DATABASE_URL": None}
    assert not serve.at_head(unset)  # a new SQLite file in the instance folder...
    assert not (tmp_path / "instance").exists()  # ...that the check did not make


def test_search_rows_indexed_before_their_filing_times_get_them_from_the_upgrades(tmp_path):
    """SQLite: migration c8d2f4a6b1e3 gives each search row the newest filing time of its
    report and of every row before it, in rowid order (the order reports were indexed in);
    e5a7c9b1d3f4 its own report's filing time."""
    app = sqlite_app(tmp_path)
    first = datetime(2026, 1, 1, tzinfo=UTC)
    with app.app_context():
        migrate.upgrade(revision="a7c3e9b1d5f2")
        user = users.register("Ada", "ada@example.com", "correct horse battery")
        project_id = projects.create(user, "Shop").project.id
        ids = [uuid.uuid4() for _ in range(4)]
        db.session.execute(
            insert(Report),
            [
                {
                    "id": ids[n],
                    "project_id": project_id,
                    "number": n + 1,
                    "title": f"Report {n}",
                    "description": "d",
                    "severity": "low",
                    "severity_rank": SEVERITY_RANK["low"],
                    "category": "bug",
                    "created_at": first + timedelta(hours=n),
                }
                for n in range(4)
            ],
        )
        for n in (1, 0, 3, 2):  # indexed out of their filing order
            db.session.execute(
                text(
                    "INSERT INTO report_search_rows (report_id, project_id, title, description)"
                    " SELECT id, project_id, title, description FROM reports WHERE number = :n"
                ),
                {"n": n + 1},
            )
        db.session.commit()
        migrate.upgrade()
        rows = search_index.SEARCH_ROWS.c
        read = db.session.execute(select(rows.filed_by, rows.created_at).order_by(rows.rowid))
        bounds, filed = zip(*read, strict=True)
        db.engine.dispose()
    assert list(bounds) == [first + timedelta(hours=n) for n in (1, 1, 3, 3)]
    assert list(filed) == [first + timedelta(hours=n) for n in (1, 0, 3, 2)]
