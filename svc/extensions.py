"""Flask extensions, created unbound and bound to the app in `create_app`.

Imports nothing of svc. How the service uses its database (SQLite's pragmas, transactions):
svc.database.
"""

import ipaddress

import click
from flask import current_app
from flask.cli import ScriptInfo
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_sqlalchemy import SQLAlchemy
from sqlalchemy import MetaData
from sqlalchemy.orm import DeclarativeBase


class Base(DeclarativeBase):
    # Named constraints: Alembic's batch mode (SQLite) can only alter constraints that have names.
    metadata = MetaData(
        naming_convention={
            "ix": "ix_%(column_0_label)s",
            "uq": "uq_%(table_name)s_%(column_0_name)s",
            "ck": "ck_%(table_name)s_%(constraint_name)s",
            "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
            "pk": "pk_%(table_name)s",
        }
    )


# Objects stay loaded after a commit: a response that reads a report just created would otherwise
# select its whole row again, and the guard's commit (svc.auth.guard) would unload the caller.
db = SQLAlchemy(model_class=Base, session_options={"expire_on_commit": False})


class LazyMigrate:
    """Flask-Migrate, bound to the app where migrations are run (`flask db`, a backup's or a
    restore's snapshot), never at start: it brings alembic, mako and pygments (8 MB) into
    every process, and gunicorn's workers and the scheduler never migrate."""

    def __init__(self, **options):
        self.options = options

    def init_app(self, app, database: SQLAlchemy, directory: str) -> None:
        app.extensions["svc.migrations"] = (database, directory)
        app.cli.add_command(_MigrationCommands(self))

    def bound(self, app):
        """Flask-Migrate's state of `app` (what migrations/env.py reads), bound on first use."""
        if "migrate" not in app.extensions:
            from flask_migrate import Migrate

            database, directory = app.extensions["svc.migrations"]
            Migrate(app, database, directory=directory, **self.options)
        return app.extensions["migrate"]

    def upgrade(self, revision: str = "head") -> None:
        """`flask db upgrade` in the current app's context."""
        from flask_migrate import upgrade

        self.bound(current_app._get_current_object())
        upgrade(revision=revision)

    def downgrade(self, revision: str) -> None:
        from flask_migrate import downgrade

        self.bound(current_app._get_current_object())
        downgrade(revision=revision)


class _MigrationCommands(click.Command):
    """`flask db ...`: stands in the command list for Flask-Migrate's group, which is loaded
    and takes over when the command runs."""

    def __init__(self, lazy: LazyMigrate):
        super().__init__("db", help="Perform database migrations.")
        self.lazy = lazy

    def make_context(self, info_name, args, parent=None, **extra):
        from flask_migrate.cli import db as commands

        self.lazy.bound(parent.ensure_object(ScriptInfo).load_app())
        return commands.make_context(info_name, args, parent=parent, **extra)


# render_as_batch: SQLite cannot ALTER most things; batch mode rebuilds the table instead.
migrate = LazyMigrate(render_as_batch=True, compare_type=True)


def client_network() -> str:
    """Whom a per-address limit counts: the client's IPv4 address, or its IPv6 /64 (one host
    is commonly given a whole /64, 2^64 addresses to rotate through)."""
    address = get_remote_address()
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if parsed.version == 4:
        return address
    if parsed.ipv4_mapped is not None:
        return str(parsed.ipv4_mapped)
    return str(ipaddress.ip_network(f"{parsed}/64", strict=False))


limiter = Limiter(key_func=client_network, headers_enabled=True)
