"""The migrations build exactly the schema the models describe, on each test database."""

import logging

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from flask_migrate import downgrade, upgrade

from harness.client import create_project, register
from svc.extensions import db
from svc.models import declared_by_models
from tests.helpers import file_report


def test_models_and_migrations_agree(app):
    with app.app_context(), db.engine.connect() as connection:
        context = MigrationContext.configure(
            connection, opts={"compare_type": True, "include_object": declared_by_models}
        )
        differences = compare_metadata(context, db.metadata)
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
        downgrade(revision="2623b13629f0")
        upgrade()

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
        downgrade(revision="cec1088549f4")  # before the admin columns
        upgrade()
    assert first.get("/api/v1/auth/me").get_json()["isAdmin"] is True
    assert second.get("/api/v1/auth/me").get_json()["isAdmin"] is False
