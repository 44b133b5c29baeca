"""Operator commands: `flask --app svc <command>`."""

import logging

import click
from flask import Flask, current_app
from flask.cli import with_appcontext
from marshmallow import ValidationError

from svc.errors import APIError
from svc.schemas.users import RegisterIn
from svc.services import screenshots, users


def register_commands(app: Flask) -> None:
    app.cli.add_command(create_user)
    app.cli.add_command(sweep)
    app.cli.add_command(run_scheduler)


@click.command("create-user")
@click.option("--name", required=True, help="Display name.")
@click.option("--email", required=True, help="Sign-in e-mail address.")
@click.password_option(help="Password (asked for when not given).")
@with_appcontext
def create_user(name: str, email: str, password: str) -> None:
    """Create an account, also when registration is closed (SVC_REGISTRATION=closed)."""
    try:
        data = RegisterIn().load({"name": name, "email": email, "password": password})
        user = users.create_user(data["name"], data["email"], data["password"])
    except ValidationError as exc:
        raise click.ClickException(f"invalid input: {exc.messages}") from None
    except APIError as exc:
        raise click.ClickException(exc.detail) from None
    click.echo(f"created user {user.email} ({user.id})")


@click.command("sweep")
@with_appcontext
def sweep() -> None:
    """Remove screenshots no report took within a day, and expired Idempotency-Keys."""
    removed = screenshots.sweep()
    click.echo(f"removed {removed} orphaned screenshot(s)")


@click.command("scheduler")
@with_appcontext
def run_scheduler() -> None:
    """Run the background scheduler (one per installation; `make run` starts it)."""
    from svc import scheduler  # only this process needs APScheduler loaded

    logging.basicConfig(level=logging.INFO, format="[%(asctime)s] [scheduler] %(message)s")
    scheduler.run(current_app._get_current_object())
