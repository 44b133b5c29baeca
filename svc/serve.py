"""`python -m svc.serve`: what `make run` runs, and the container's entry point (docs/deployment.md
"With Docker or Podman"): wait for a server database to answer, apply the migrations (unless
the database is at their head already), then run the Procfile's processes for SVC_ROLE
(svc.supervise) and stay in front of them: SIGTERM, SIGINT or SIGHUP to this process (or its
parent's death) stops them all.

`python -m svc.serve --ready` asks the running service's /readyz (the image's HEALTHCHECK),
at the port SVC_BIND names.
"""

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import NoReturn

from svc.config import MIGRATIONS_DIR, ConfigError, database_url, load_settings

ROOT = Path(__file__).resolve().parent.parent
# SVC_ROLE (docs/deployment.md): the Procfile's entry of that name, or both for `all`.
PROCESSES = {"all": [], "web": ["web"], "scheduler": ["scheduler"]}
DATABASE_WAIT_SECONDS = 60


class DatabaseAbsent(Exception):
    """A server database that did not answer in time."""


class DatabaseNotUtf8(Exception):
    """A PostgreSQL database whose text is not UTF-8 (SQL_ASCII, made by an initdb without a
    locale): its driver hands text back as bytes, and every process of svc would fail at its
    first query with a traceback, restarted for ever."""


def wait_for_database(url: str | None, seconds: float = DATABASE_WAIT_SECONDS) -> None:
    """Until a server database answers. Compose starts svc beside its database, and a compose
    tool that cannot wait for the database's health check (podman-compose on podman before 4.6)
    starts both at once: svc waits up to a minute rather than failing its migrations."""
    if not url or url.startswith("sqlite"):
        return
    from sqlalchemy import make_url

    url = make_url(url)
    dialect = url.get_dialect()()
    # The driver's own connection: SQLAlchemy's first connection reads the server's version
    # as text, and fails with a TypeError on a database whose text comes back as bytes.
    arguments, keywords = dialect.create_connect_args(url)
    driver = dialect.import_dbapi()
    deadline, said = time.monotonic() + seconds, False
    while True:
        try:
            connection = driver.connect(*arguments, **keywords)
            break
        except driver.OperationalError as error:
            # Said before the deadline is looked at: a first attempt slower than the whole
            # wait (a loaded host) still tells the operator what it waited for.
            if not said:
                print(f"serve: waiting for the database at {url.host}", flush=True)
                said = True
            if time.monotonic() > deadline:
                raise DatabaseAbsent(
                    f"the database at {url.host} did not answer in {seconds:.0f} s: {error}"
                ) from None
            time.sleep(1)
    try:
        encoding = connection.info.parameter_status("server_encoding")
    finally:
        connection.close()
    if encoding != "UTF8":
        raise DatabaseNotUtf8(
            f"the database {url.database} at {url.host} stores text as {encoding}; svc needs "
            "UTF8: create it with CREATE DATABASE ... ENCODING 'UTF8' TEMPLATE template0 (or "
            "initdb --encoding=UTF8), then move the data over"
        )


def serve(settings: dict) -> NoReturn:
    """Migrate, then become the supervisor (svc.supervise, by exec: same process, none of the
    app's modules kept) of the Procfile's processes for SVC_ROLE. Whoever stops svc reaches
    it: SIGTERM, SIGINT and SIGHUP (a closed terminal) stop every process; where this process's
    parent dies (make killed by a supervisor), it gets SIGTERM too (kept across the exec).
    Until then SIGTERM ends it at once: as a container's first process it would otherwise be
    ignored."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    _stop_with_parent()
    # What svc creates (the instance folder, the SQLite files, uploads, backups) is its user's
    # alone: every process below inherits the mask.
    os.umask(0o077)
    os.chdir(ROOT)  # a relative SQLite path names a file here, as in every process of svc
    wait_for_database(settings["SVC_DATABASE_URL"])
    if not at_head(settings):
        subprocess.run([sys.executable, "-m", "flask", "--app", "svc", "db", "upgrade"],
                       check=True)  # fmt: skip
    sys.stdout.flush()
    sys.stderr.flush()
    # -S: nothing of site-packages, which the supervisor never uses (a megabyte of memory).
    command = [sys.executable, "-S", "-m", "svc.supervise", *PROCESSES[settings["SVC_ROLE"]]]
    os.execv(sys.executable, command)


def _stop_with_parent() -> None:
    """SIGTERM to this process when its parent dies (Linux's PR_SET_PDEATHSIG): `make run`
    killed outright must not leave the service running, re-parented to init."""
    if sys.platform != "linux":
        return
    import ctypes

    pr_set_pdeathsig = 1
    libc = ctypes.CDLL(None, use_errno=True)
    # Not checked against os.getppid() == 1: under systemd, or a container's init (tini), that
    # is the parent itself, alive.
    libc.prctl(pr_set_pdeathsig, signal.SIGTERM)


def at_head(settings: dict) -> bool:
    """Whether the database is at the migrations' head already, as Alembic reads both. A
    restart then skips `flask db upgrade`, which loaded the whole app at every start to find
    nothing to do (docs/performance.md, "Where a run's CPU goes"); anything else (a new SQLite
    file, an older revision) migrates."""
    from alembic.migration import MigrationContext
    from alembic.script import ScriptDirectory
    from flask import Flask
    from sqlalchemy import create_engine, make_url
    from sqlalchemy.pool import NullPool

    # The instance folder as create_app finds it (Flask's default when the setting is unset).
    instance_path = Flask("svc", instance_path=settings["SVC_INSTANCE_PATH"]).instance_path
    url = make_url(database_url(settings, instance_path))
    if url.get_backend_name() == "sqlite" and not os.path.exists(url.database or ""):
        return False  # connecting would make an empty file; the migrations make it
    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as connection:
            current = MigrationContext.configure(connection).get_current_heads()
    finally:
        engine.dispose()
    return set(current) == set(ScriptDirectory(MIGRATIONS_DIR).get_heads())


def ready(settings: dict) -> int:
    """0 when /readyz answers 200 within four seconds, else 1."""
    port = settings["SVC_BIND"].rsplit(":", 1)[-1]
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=4) as answer:
            return 0 if answer.status == 200 else 1
    except OSError:
        return 1


def main() -> int:
    try:
        settings = load_settings()
    except ConfigError as error:
        print(f"Error: {error}", file=sys.stderr)
        return 2
    if sys.argv[1:] == ["--ready"]:
        return ready(settings)
    try:
        return serve(settings)
    except (DatabaseAbsent, DatabaseNotUtf8) as error:
        print(f"Error: {error}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as failed:
        return failed.returncode  # the migrations said why; no traceback of ours beside it


if __name__ == "__main__":
    sys.exit(main())
