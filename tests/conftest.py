"""Fixtures: every test runs against SQLite, and against PostgreSQL as well when
SVC_TEST_DATABASE_URL is set (in a schema of its own, dropped at the end of the run).

The schema is built once per database by the real migrations; after each test every table is
emptied, which is much faster than migrating again.
"""

import os
import subprocess
import threading
import uuid
from pathlib import Path

import pytest
from argon2 import PasswordHasher
from sqlalchemy import create_engine, make_url
from werkzeug.serving import make_server

from harness.browser import CHROMIUM, HEADLESS_SHELL, launch_chromium
from harness.client import register
from harness.databases import postgresql_schema
from harness.service import kill_service, start_service
from svc import create_app, rate_limits
from svc.auth import passwords
from svc.extensions import db, migrate

BACKENDS = ["sqlite"] + (["postgresql"] if os.environ.get("SVC_TEST_DATABASE_URL") else [])


def pytest_generate_tests(metafunc):
    """Every test that uses the database runs on each of BACKENDS, unless it is marked
    `any_database`: the database cannot change its answer (a page in the browser, the command
    line, the served widget, headers...), so it runs on SQLite alone. Tests of SQL,
    transactions, locks, search and migrations are never marked. This is the one place that
    decides it."""
    if "database_url" in metafunc.fixturenames:
        marked = metafunc.definition.get_closest_marker("any_database")
        backends = BACKENDS[:1] if marked else BACKENDS
        metafunc.parametrize("database_url", backends, indirect=True, scope="session")


# The files that take longest (docs/performance.md, "The test suite"), handed to the parallel
# processes first: a long file begun last would keep one process running after the others end.
LONGEST_FIRST = (
    "test_fuzz.py",
    "test_operations.py",
    "test_server.py",
    "test_security.py",
    "test_roles.py",
    "test_bench.py",
    "test_hosts.py",
    "test_cli.py",
)


def pytest_collection_modifyitems(items):
    """Files in LONGEST_FIRST first, in its order; the rest as collected. A stable sort by
    file, so each file's own order (and its grouping by database) stays as it was."""

    def rank(item) -> int:
        name = item.path.name
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)


# The versions the two patches below were written against: werkzeug's Rule.compile (and what it
# sets) and Flask-SQLAlchemy's SQLAlchemy._make_engine are private. tests/test_harness.py fails,
# naming this line, when an upgrade moves past them.
PATCHED_FOR = {"werkzeug": "3.1.", "flask-sqlalchemy": "3.1."}


def _remember_rule_compiles() -> None:
    """Every app the tests make compiles its 134 URL rules again: werkzeug parses each pattern
    and writes and compiles two Python functions per rule to build its URLs (docs/performance.md,
    "The test suite": 80 ms of each of the suite's thousands of apps, then 7 ms a test for the
    parse). What a compile makes depends on the key's parts alone, so the first app's serves
    the same rule of every later app; converters keep only their map, which none of them reads."""
    from werkzeug.routing.rules import Rule

    made = {}
    compile_rule = Rule.compile

    def remembered(rule):
        routes = rule.map
        domain = rule.host if routes.host_matching else rule.subdomain
        key = (rule.rule, domain, rule.merge_slashes, routes.host_matching,
               tuple(sorted(routes.converters.items())),
               repr(sorted((rule.defaults or {}).items())))  # fmt: skip
        if key not in made:
            arguments = set(rule.arguments)
            compile_rule(rule)
            made[key] = (rule._parts, rule._trace, rule._converters, rule.arguments - arguments,
                         rule._build.__func__, rule._build_unknown.__func__)  # fmt: skip
            return
        parts, trace, converters, arguments, build, build_unknown = made[key]
        rule._parts, rule._trace, rule._converters = list(parts), list(trace), dict(converters)
        rule.arguments.update(arguments)
        rule._build = build.__get__(rule, None)
        rule._build_unknown = build_unknown.__get__(rule, None)

    Rule.compile = remembered


_remember_rule_compiles()

# The test databases' URLs (one per backend and worker); apps on them share an engine.
SHARED_DATABASES: set[str] = set()


def _share_engines() -> None:
    """SQLAlchemy keeps the statements it compiled per engine, and every app makes its own:
    each test's app compiled every statement it ran again (a quarter of an in-process test
    file's CPU; docs/performance.md, "The test suite"). Apps on a test database share one
    engine per set of options (svc.database's listeners go on once: SQLAlchemy adds a
    listener only once); any other database gets its own, as before."""
    import flask_sqlalchemy

    engines = {}
    make_engine = flask_sqlalchemy.SQLAlchemy._make_engine

    def shared(self, bind_key, options, app):
        url = _rendered(options["url"])
        if url not in SHARED_DATABASES:
            return make_engine(self, bind_key, options, app)
        key = (url, repr(sorted((k, v) for k, v in options.items() if k != "url")))
        if key not in engines:
            engines[key] = make_engine(self, bind_key, options, app)
        return engines[key]

    flask_sqlalchemy.SQLAlchemy._make_engine = shared


def _rendered(url) -> str:
    return make_url(url).render_as_string(hide_password=False)


_share_engines()


@pytest.fixture(autouse=True)
def quick_password_hashing(request, monkeypatch):
    """Argon2id at its least cost in the tests' own process: at OWASP's (20 ms of CPU a hash)
    the suite's thousands of sign-ups cost over a minute. Tests marked `owasp_hashing` keep the
    product's parameters (they check them); the services the tests start always do."""
    if request.node.get_closest_marker("owasp_hashing") is None:
        quick = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
        monkeypatch.setattr(passwords, "_hasher", lambda: quick)


@pytest.fixture(scope="session")
def database_url(request):
    """The test database of the test's backend. Each backend's lives for the whole session (of
    this worker): the tests of one worker switch backends file by file, and a new database per
    switch would cost a migration each time."""
    return request.getfixturevalue(f"{request.param}_database")


@pytest.fixture(scope="session")
def sqlite_database(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('sqlite') / 'svc.sqlite3'}"
    _migrate(url, tmp_path_factory.mktemp("migrate"))
    SHARED_DATABASES.add(_rendered(url))
    return url


@pytest.fixture(scope="session")
def postgresql_database(tmp_path_factory):
    test_database = os.environ["SVC_TEST_DATABASE_URL"]
    with postgresql_schema(test_database, f"svc_test_{os.getpid()}") as url:
        _migrate(url, tmp_path_factory.mktemp("migrate"))
        SHARED_DATABASES.add(_rendered(url))
        yield url


def _migrate(url: str, instance_path) -> None:
    app = create_app({"SVC_DATABASE_URL": url, "SVC_INSTANCE_PATH": str(instance_path)})
    with app.app_context():
        migrate.upgrade()
        db.engine.dispose()


@pytest.fixture
def make_app(database_url, tmp_path):
    """Build an app on the test database; overrides by setting name. Tables are emptied before
    and after: before too, because a full run once found a user of an earlier test's service
    processes in them (which test left it is not known)."""
    _empty_tables(database_url)
    apps = []

    def build(**overrides):
        app = create_app(_test_config(database_url, tmp_path / f"instance{len(apps)}", overrides))
        apps.append(app)
        return app

    yield build
    for app in apps:
        _close(app, database_url)
    _empty_tables(database_url)


@pytest.fixture(scope="module")
def module_app(database_url, tmp_path_factory):
    """One app for a file's tests on a backend, for tests that share what they build once and
    change nothing (tests/test_security.py: each is refused, and checks that nothing changed).
    Its tables are emptied before and after; a test that takes `app` empties them too, so
    those run after the module's shared ones (file order)."""
    _empty_tables(database_url)
    app = create_app(_test_config(database_url, tmp_path_factory.mktemp("instance"), {}))
    yield app
    _close(app, database_url)
    _empty_tables(database_url)


def _test_config(database_url: str, instance_path: Path, overrides: dict) -> dict:
    return {
        "SVC_DATABASE_URL": database_url,
        "SVC_INSTANCE_PATH": str(instance_path),
        "SVC_SECRET_KEY": "test-secret-key-" + uuid.uuid4().hex,
        "SVC_RATE_LIMIT_AUTH": "off",
        "SVC_RATE_LIMIT_INGEST": "off",
        "TESTING": True,
        **overrides,
    }


def _close(app, database_url: str) -> None:
    with app.app_context():
        if app.config["SVC_DATABASE_URL"] == database_url:
            rate_limits.forget_all()  # on SQLite they live in a file of their own
        db.session.remove()
        db.engine.dispose()


# One engine per test database for emptying it (twice a test): a new one each time cost a
# connection and, on PostgreSQL, the dialect's first queries.
_EMPTYING_ENGINES = {}


def _empty_tables(url: str) -> None:
    if url not in _EMPTYING_ENGINES:
        _EMPTYING_ENGINES[url] = create_engine(url)
    with _EMPTYING_ENGINES[url].begin() as connection:
        for table in reversed(db.metadata.sorted_tables):
            connection.execute(table.delete())


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


@pytest.fixture
def mount_tmpfs(tmp_path):
    """`mount_tmpfs("256k")` mounts a real file system of that size and returns its folder: the
    only way to get a genuinely full or read-only disk. Needs root, as CI and the dev boxes run."""
    if os.geteuid() != 0:
        pytest.fail("mounting a small tmpfs needs root")
    mounted = []

    def mount(size: str) -> Path:
        mount_point = tmp_path / f"disk{len(mounted)}"
        mount_point.mkdir()
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount_point)], check=True
        )
        mounted.append(mount_point)
        return mount_point

    yield mount
    for mount_point in mounted:
        subprocess.run(["umount", "-l", str(mount_point)], check=True)


@pytest.fixture(scope="session")
def certificate_authority(tmp_path_factory):
    """A throw-away CA (trustme) and the path of its PEM, for SVC_WEBHOOK_CA_BUNDLE."""
    import trustme

    ca = trustme.CA()
    path = tmp_path_factory.mktemp("ca") / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return ca, str(path)


@pytest.fixture
def receiver(certificate_authority):
    from harness.receiver import Receiver

    server = Receiver(certificate_authority[0]).start()
    yield server
    server.stop()


@pytest.fixture
def smtp_server(certificate_authority):
    """A real SMTP server on loopback: STARTTLS (the test CA), AUTH, every message kept."""
    from harness.smtp import SmtpServer

    server = SmtpServer(certificate_authority[0]).start()
    yield server
    server.close()


@pytest.fixture
def mail_settings(smtp_server, certificate_authority) -> dict:
    """The settings that make an app (or `make run`) mail through `smtp_server`."""
    return {
        "SVC_SMTP_URL": smtp_server.url,
        "SVC_SMTP_CA_BUNDLE": certificate_authority[1],
        "SVC_PUBLIC_URL": "https://bugs.example.com",
    }


@pytest.fixture
def mail_app(make_app, mail_settings):
    """An app that mails through `smtp_server`."""
    return make_app(**mail_settings, SVC_MAIL_TIMEOUT=5.0)


@pytest.fixture
def live_server(app):
    """The test app on a real HTTP server in a thread; its base URL."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.port}"
    server.shutdown()
    thread.join(timeout=5)


# --- a real browser ------------------------------------------------------------------------


@pytest.fixture(scope="session")
def playwright():
    """Playwright for this worker's browsers (its own browser download is never used)."""
    from playwright.sync_api import expect, sync_playwright

    # An assertion waits up to 15 s, not Playwright's 5: on a busy 2-core host a page's answer
    # took longer than 5 s at times. A broken page still fails, only later.
    expect.set_options(timeout=15_000)
    with sync_playwright() as started:
        yield started


@pytest.fixture(scope="session")
def browser(playwright):
    """Debian's Chromium headless shell."""
    yield from _launched(playwright, HEADLESS_SHELL)


@pytest.fixture(scope="session")
def full_browser(playwright):
    """Debian's full Chromium, for what its headless shell cannot do: capture the tab."""
    yield from _launched(playwright, CHROMIUM)


def _launched(playwright, executable: str):
    if not Path(executable).exists():
        pytest.fail(f"{executable} is missing: `make test` installs it when run as root")
    chromium = launch_chromium(playwright, executable)
    yield chromium
    chromium.close()


# --- the real service, as `make run` starts it -----------------------------------------------


@pytest.fixture
def service_env(database_url, tmp_path) -> dict:
    return {
        "SVC_WORKERS": "2",
        "SVC_DATABASE_URL": database_url,
        "SVC_INSTANCE_PATH": str(tmp_path / "instance"),
        "SVC_UPLOAD_DIR": str(tmp_path / "uploads"),
    }


@pytest.fixture
def services():
    """Start services with `start(env)`; all are killed at the end of the test."""
    started = []

    def start(env):
        base_url, service = start_service(env)
        started.append(service)
        return base_url, service

    yield start
    for service in started:
        kill_service(service)


@pytest.fixture
def webhook_env(service_env, certificate_authority) -> dict:
    return {
        **service_env,
        "SVC_WEBHOOK_ALLOW_PRIVATE": "true",
        "SVC_WEBHOOK_CA_BUNDLE": certificate_authority[1],
        "SVC_WEBHOOK_RETRY_DELAYS": "3,3,3",
    }


@pytest.fixture(scope="session")
def seaweed(tmp_path_factory):
    """A real S3-compatible server (SeaweedFS) for this worker's session."""
    from harness.s3 import SeaweedServer

    server = SeaweedServer(tmp_path_factory.mktemp("seaweed")).start()
    yield server
    server.stop()


@pytest.fixture
def s3_settings(seaweed, monkeypatch) -> dict:
    """The settings of an app whose object store is a new bucket of `seaweed` (under a prefix,
    as an installation sharing a bucket would be); boto3 finds the credentials where it always
    looks, the AWS variables."""
    for name, value in seaweed.environment.items():
        if name.startswith("AWS_"):
            monkeypatch.setenv(name, value)
    return {
        "SVC_STORAGE_URL": f"s3://{seaweed.bucket()}/svc",
        "SVC_S3_ENDPOINT_URL": seaweed.endpoint,
    }


@pytest.fixture(params=["folder", "s3"])
def store_settings(request, tmp_path) -> dict:
    """Each kind of object store in turn: a folder, then a bucket of a real S3 server."""
    if request.param == "folder":
        return {"SVC_STORAGE_URL": f"file://{tmp_path / 'objects'}"}
    return request.getfixturevalue("s3_settings")
