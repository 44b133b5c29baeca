"""Settings: parsing, the generated secret key, and the README's table staying complete."""

import os
import re
import time
import uuid
from pathlib import Path

import pytest
from sqlalchemy import create_engine, make_url, text
from sqlalchemy.exc import OperationalError

from harness.client import create_project, csrf, register, sqlite_app
from harness.ports import Reservation
from svc import create_app, serve
from svc.config import SETTINGS, ConfigError, load_settings
from svc.database import (
    SQLITE_MMAP_BYTES,
    SQLITE_WAL_AUTOCHECKPOINT_PAGES,
    begin_read_only,
    checkpoint_sqlite_log,
)
from svc.extensions import db, migrate
from tests.helpers import REPORT, file_report, reports_in_file_alone

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_documents_every_setting():
    documented = set(re.findall(r"^\| `(SVC_[A-Z0-9_]+)` \|", README.read_text(), re.MULTILINE))
    assert documented == {setting.name for setting in SETTINGS}


def test_defaults():
    settings = load_settings(environ={})
    assert settings["SVC_BIND"] == "127.0.0.1:8000"
    assert settings["SVC_WORKERS"] == 2
    assert settings["SVC_ACCESS_TOKEN_MINUTES"] == 15
    assert settings["SVC_WEBHOOK_RETRY_DELAYS"] == (10.0, 60.0, 300.0)
    assert settings["SVC_RATE_LIMIT_AUTH"] == "10/minute"
    assert settings["SVC_DATABASE_URL"] is None


def test_environment_values_are_parsed():
    settings = load_settings(
        environ={
            "SVC_WORKERS": "4",
            "SVC_WEBHOOK_ALLOW_HTTP": "true",
            "SVC_REDACT_NAMES": "X-Session, ticket ,",
        }
    )
    assert settings["SVC_WORKERS"] == 4
    assert settings["SVC_WEBHOOK_ALLOW_HTTP"] is True
    assert settings["SVC_REDACT_NAMES"] == ("x-session", "ticket")


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SVC_WORKERS", "0"),
        ("SVC_WORKERS", "many"),
        ("SVC_COOKIE_SECURE", "maybe"),
        ("SVC_REGISTRATION", "invite"),
        ("SVC_RATE_LIMIT_AUTH", "lots"),
        ("SVC_WEBHOOK_ALLOW_PRIVATE", "perhaps"),
    ],
)
def test_bad_values_fail_at_start_up_with_the_name(name, value):
    with pytest.raises(ConfigError, match=name):
        load_settings(environ={name: value})


@pytest.mark.any_database
def test_a_mistyped_setting_is_one_line_from_the_command_line(tmp_path):
    """A mistyped SVC_ROLE was a 33-line traceback from `make run`."""
    import os
    import subprocess
    import sys

    flask = str(Path(sys.executable).with_name("flask"))
    env = {**os.environ, "SVC_ROLE": "wbe", "SVC_INSTANCE_PATH": str(tmp_path)}
    done = subprocess.run([flask, "--app", "svc", "db", "upgrade"], env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode != 0
    assert done.stderr.strip() == "Error: SVC_ROLE='wbe': expected one of all, web, scheduler"


def test_secret_key_is_generated_once_and_kept(tmp_path, database_url):
    config = {"SVC_INSTANCE_PATH": str(tmp_path), "SVC_DATABASE_URL": database_url}
    first = create_app(config).config["SECRET_KEY"]
    second = create_app(config).config["SECRET_KEY"]
    assert first == second and len(first) >= 40
    key_file = tmp_path / "secret_key"
    assert key_file.read_text().strip() == first
    assert key_file.stat().st_mode & 0o077 == 0
    assert create_app({**config, "SVC_SECRET_KEY": "from-env"}).config["SECRET_KEY"] == "from-env"


def test_default_database_lives_in_the_instance_folder(tmp_path):
    app = create_app({"SVC_INSTANCE_PATH": str(tmp_path)})
    assert app.config["SQLALCHEMY_DATABASE_URI"] == f"sqlite:///{tmp_path}/svc.sqlite3"
    assert app.config["SVC_UPLOAD_DIR"] == str(tmp_path / "uploads")


def test_every_sqlite_connection_is_tuned(tmp_path):
    app = sqlite_app(tmp_path)
    with app.app_context():
        connection = db.engine.raw_connection()
        try:
            pragmas = {
                name: connection.cursor().execute(f"PRAGMA {name}").fetchone()[0]
                for name in (
                    "journal_mode",
                    "synchronous",
                    "busy_timeout",
                    "foreign_keys",
                    "temp_store",
                    "mmap_size",
                    "cache_size",
                    "wal_autocheckpoint",
                )
            }
        finally:
            connection.close()
        db.engine.dispose()
    assert pragmas == {
        "journal_mode": "wal",
        "synchronous": 1,  # NORMAL
        "busy_timeout": 10_000,
        "foreign_keys": 1,
        "temp_store": 2,  # MEMORY
        "mmap_size": SQLITE_MMAP_BYTES,
        "cache_size": -64 * 1024,
        "wal_autocheckpoint": SQLITE_WAL_AUTOCHECKPOINT_PAGES,
    }


def test_the_sqlite_rules_reach_the_apps_engine_only(tmp_path):
    """svc.database attaches its listeners to the app's engine in init_app, not to SQLAlchemy's
    classes: another engine in the same process (a benchmark's, a test's) keeps the defaults."""
    app = sqlite_app(tmp_path)
    with app.app_context():
        with db.engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        db.engine.dispose()
    other = create_engine(f"sqlite:///{tmp_path / 'other.sqlite3'}")
    with other.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "delete"
        assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() != 10_000
    other.dispose()


def test_requests_leave_sqlite_log_to_the_checkpoint_job(tmp_path):
    """Filing reports does not copy SQLite's write-ahead log back into the database file (its
    default would, in the commit that takes the log past 1,000 pages); the scheduler's job
    copies all of it."""
    app = sqlite_app(tmp_path)
    with app.app_context():
        migrate.upgrade()
        db.engine.dispose()  # the last connection to close checkpoints: the tables are in the file
    client = app.test_client()
    register(client)
    api_key = create_project(client)["apiKey"]
    description = REPORT["description"] * 100
    for n in range(100):
        assert (
            file_report(client, api_key, title=f"Report {n}", description=description).status_code
            == 201
        )
    database, copy = tmp_path / "svc.sqlite3", tmp_path / "copy.sqlite3"
    assert reports_in_file_alone(database, copy) == 0
    with app.app_context():
        log_frames, copied = checkpoint_sqlite_log()
        db.engine.dispose()
    assert log_frames > 1_000
    assert copied == log_frames
    assert reports_in_file_alone(database, copy) == 100


def test_a_read_only_transaction_cannot_write_and_leaves_the_connection_writable(tmp_path):
    """On SQLite a write in a read-only transaction would fail only when another worker wrote
    meanwhile (rare, under load); query_only makes every such write fail, here included."""
    app = sqlite_app(tmp_path)
    with app.app_context():
        db.session.execute(text("CREATE TABLE notes (body TEXT)"))
        db.session.commit()
        begin_read_only(db.session())
        with pytest.raises(OperationalError, match="readonly"):
            db.session.execute(text("INSERT INTO notes VALUES ('read-only')"))
        db.session.rollback()
        # The pool hands the same connection out again, to one that writes without a
        # transaction of ours (the scheduler's ANALYZE), then to one that writes in one.
        connection = db.engine.raw_connection()
        try:
            connection.cursor().execute("INSERT INTO notes VALUES ('raw')")
        finally:
            connection.close()
        db.session.execute(text("INSERT INTO notes VALUES ('in a transaction')"))
        db.session.commit()
        stored = db.session.scalars(text("SELECT body FROM notes")).all()
        db.engine.dispose()
    assert stored == ["raw", "in a transaction"]


def test_the_readme_names_the_oldest_python_make_run_accepts_without_a_warning():
    makefile = (README.parent / "Makefile").read_text()
    (tested,) = re.findall(r"^PYTHON_TESTED \?= ([\d.]+)$", makefile, re.MULTILINE)
    assert f"oldest Python svc is tested on is **{tested}**" in README.read_text()


def test_public_links_name_the_address_users_came_to(app):
    """One builder of public links. Without SVC_PUBLIC_URL a report filed to
    https://bugs.example.org answered statusUrl http://127.0.0.1:8000/status/..., which the
    widget showed the reporter."""
    from svc.config import public_url
    from svc.models import Report
    from svc.services.reporters import status_links

    owner = app.test_client()
    register(owner)
    project = create_project(owner)
    updates = {"settings": {"reporter_updates": {"enabled": True}}}
    owner.patch(f"/api/v1/projects/{project['id']}", json=updates, headers=csrf(owner))
    filed = app.test_client().post(
        "/api/v1/reports", json=REPORT, headers={"X-API-Key": project["apiKey"]},
        base_url="https://bugs.example.org",
    )  # fmt: skip
    assert filed.status_code == 201, filed.get_json()
    assert filed.get_json()["statusUrl"].startswith("https://bugs.example.org/status/")
    # Outside a request (the scheduler's mails, mail off): the address make run binds.
    with app.app_context():
        report = db.session.get(Report, uuid.UUID(filed.get_json()["id"]))
        assert status_links.status_url(report).startswith(
            f"http://{app.config['SVC_BIND']}/status/"
        )
        assert public_url("/x") == f"http://{app.config['SVC_BIND']}/x"
    with app.test_request_context("/", base_url="https://bugs.example.org"):
        assert public_url("/x") == "https://bugs.example.org/x"
        app.config["SVC_PUBLIC_URL"] = "https://svc.example.com/"
        try:
            assert public_url("/x") == "https://svc.example.com/x"
        finally:
            app.config["SVC_PUBLIC_URL"] = None


def test_serve_waits_for_a_database_that_does_not_answer_then_says_so(capsys):
    """The container's entry point waits for a PostgreSQL started beside it (compose), saying
    so once, and names the host, never the password, when it gives up."""
    with Reservation() as nothing_listens:
        closed = f"postgresql+psycopg://svc:hunter22@127.0.0.1:{nothing_listens.port}/svc"
        started = time.monotonic()
        absent = r"127\.0\.0\.1 did not answer in 2 s"
        with pytest.raises(serve.DatabaseAbsent, match=absent) as raised:
            serve.wait_for_database(closed, seconds=2)
    assert time.monotonic() - started >= 2
    assert "hunter22" not in str(raised.value)
    assert capsys.readouterr().out == "serve: waiting for the database at 127.0.0.1\n"


def test_serve_refuses_a_postgresql_database_whose_text_is_not_utf8(database_url):
    """initdb without a locale makes SQL_ASCII databases, whose text psycopg hands back as bytes:
    svc would fail at its first query with a traceback. It says what to do instead. (SQLite
    stores UTF-8 whatever: there is nothing to refuse, and nothing is asked of it.)"""
    if database_url.startswith("sqlite"):
        assert serve.wait_for_database(database_url, seconds=0) is None
        return
    server = make_url(database_url).set(query={})
    ascii_name = f"svc_ascii_{os.getpid()}"
    engine = create_engine(server, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.exec_driver_sql(f"DROP DATABASE IF EXISTS {ascii_name}")
        connection.exec_driver_sql(
            f"CREATE DATABASE {ascii_name} ENCODING 'SQL_ASCII' TEMPLATE template0 "
            "LC_COLLATE 'C' LC_CTYPE 'C'"
        )
    try:
        ascii_url = server.set(database=ascii_name).render_as_string(hide_password=False)
        with pytest.raises(serve.DatabaseNotUtf8, match="stores text as SQL_ASCII; svc needs UTF8"):
            serve.wait_for_database(ascii_url, seconds=0)
    finally:
        with engine.connect() as connection:
            connection.exec_driver_sql(f"DROP DATABASE {ascii_name}")
        engine.dispose()


def test_serve_goes_on_at_once_when_the_database_answers(database_url, capsys):
    serve.wait_for_database(database_url, seconds=0)  # one try: it raises if that one fails
    assert capsys.readouterr().out == ""


def test_compose_yamls_change_me_passwords_are_refused_unless_allowed():
    """compose.yaml's `change-me` left as it is stops svc at start."""
    url = "postgresql+psycopg://svc:change-me@postgres:5432/svc"
    with pytest.raises(ConfigError, match="still 'change-me'"):
        load_settings({"SVC_DATABASE_URL": url})
    with pytest.raises(ConfigError, match="AWS_SECRET_ACCESS_KEY"):
        load_settings({"AWS_SECRET_ACCESS_KEY": "change-me"})
    allowed = load_settings({"SVC_DATABASE_URL": url, "SVC_ALLOW_DEFAULT_PASSWORDS": "1"})
    assert allowed["SVC_DATABASE_URL"] == url
    assert load_settings({"SVC_DATABASE_URL": url.replace("change-me", "s3cr3t!")})
