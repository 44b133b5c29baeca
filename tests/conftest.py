"""Fixtures: every test runs against SQLite, and against PostgreSQL as well when
SVC_TEST_DATABASE_URL is set (in a schema of its own, dropped at the end of the run).

The schema is built once per database by the real migrations; after each test every table is
emptied, which is much faster than migrating again.
"""

import os
import uuid
from urllib.parse import quote

import pytest
from flask_migrate import upgrade
from sqlalchemy import create_engine, text

from svc import create_app
from svc.extensions import db
from tests.helpers import register

BACKENDS = ["sqlite"] + (["postgresql"] if os.environ.get("SVC_TEST_DATABASE_URL") else [])


def _with_search_path(url: str, schema: str) -> str:
    separator = "&" if "?" in url else "?"
    return f"{url}{separator}options={quote(f'-csearch_path={schema}')}"


@pytest.fixture(scope="session", params=BACKENDS)
def database_url(request, tmp_path_factory):
    if request.param == "sqlite":
        path = tmp_path_factory.mktemp("sqlite") / "svc.sqlite3"
        url = f"sqlite:///{path}"
        _migrate(url, tmp_path_factory.mktemp("migrate"))
        yield url
        return
    base_url = os.environ["SVC_TEST_DATABASE_URL"]
    schema = f"svc_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    engine = create_engine(base_url)
    with engine.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    url = _with_search_path(base_url, schema)
    try:
        _migrate(url, tmp_path_factory.mktemp("migrate"))
        yield url
    finally:
        with engine.begin() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        engine.dispose()


def _migrate(url: str, instance_path) -> None:
    app = create_app({"SVC_DATABASE_URL": url, "SVC_INSTANCE_PATH": str(instance_path)})
    with app.app_context():
        upgrade()
        db.engine.dispose()


@pytest.fixture
def make_app(database_url, tmp_path):
    """Build an app on the test database; overrides by setting name. Tables are emptied after."""
    apps = []

    def build(**overrides):
        config = {
            "SVC_DATABASE_URL": database_url,
            "SVC_INSTANCE_PATH": str(tmp_path / f"instance{len(apps)}"),
            "SVC_SECRET_KEY": "test-secret-key-" + uuid.uuid4().hex,
            "SVC_RATE_LIMIT_AUTH": "off",
            "SVC_RATE_LIMIT_INGEST": "off",
            "TESTING": True,
        }
        config.update(overrides)
        app = create_app(config)
        apps.append(app)
        return app

    yield build
    for app in apps:
        with app.app_context():
            db.session.remove()
            db.engine.dispose()
    _empty_tables(database_url)


def _empty_tables(url: str) -> None:
    engine = create_engine(url)
    with engine.begin() as connection:
        for table in reversed(db.metadata.sorted_tables):
            connection.execute(table.delete())
    engine.dispose()


@pytest.fixture
def app(make_app):
    return make_app()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def user_client(app):
    """A client signed in as a freshly registered user; `.user` holds the user object."""
    test_client = app.test_client()
    test_client.user = register(test_client)
    return test_client


@pytest.fixture
def other_client(app):
    test_client = app.test_client()
    test_client.user = register(test_client, email="grace@example.com", name="Grace Hopper")
    return test_client
