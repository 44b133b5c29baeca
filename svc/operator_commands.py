"""Operator commands: `flask --app svc <command>`."""

import contextlib
import os

import click
from flask import Flask, current_app
from flask.cli import with_appcontext
from marshmallow import ValidationError

from svc.errors import APIError
from svc.operations.tables import OperationFailed
from svc.schemas.users import PASSWORD as PASSWORD_RULE
from svc.schemas.users import RegisterIn
from svc.services.identity import password_resets, second_factors, users
from svc.services.instance import admin
from svc.services.reporting import screenshots


def register_commands(app: Flask) -> None:
    app.cli.add_command(create_user)
    app.cli.add_command(set_password)
    app.cli.add_command(make_admin)
    app.cli.add_command(reset_factors)
    app.cli.add_command(sweep)
    app.cli.add_command(run_scheduler)
    app.cli.add_command(backup_command)
    app.cli.add_command(restore_command)
    app.cli.add_command(copy_to_command)
    app.cli.add_command(storage_commands)


@click.command("create-user")
@click.option("--name", required=True, help="Display name.")
@click.option("--email", required=True, help="Sign-in e-mail address.")
@click.password_option(help="Password (asked for when not given).")
@with_appcontext
def create_user(name: str, email: str, password: str) -> None:
    """Create an account, also when registration is closed (SVC_REGISTRATION=closed)."""
    try:
        data = RegisterIn().load({"name": name, "email": email, "password": password})
        user = users.create_user(data["name"], data["email"], data["password"], by_operator=True)
    except ValidationError as exc:
        raise click.ClickException(f"invalid input: {exc.messages}") from None
    except APIError as exc:
        raise click.ClickException(exc.detail) from None
    click.echo(f"created user {user.email} ({user.id})")


@click.command("set-password")
@click.argument("email")
@click.password_option(help="The new password (asked for when not given).")
@with_appcontext
def set_password(email: str, password: str) -> None:
    """Set an account's password; its sessions end and its tokens are revoked."""
    try:
        PASSWORD_RULE(password)
        user = admin.by_email(email)
    except ValidationError as exc:
        raise click.ClickException(f"invalid input: {exc.messages}") from None
    except APIError as exc:
        raise click.ClickException(exc.detail) from None
    password_resets.set_password(user, password, by_operator=True)
    click.echo(f"password of {user.email} set; its sessions ended and its tokens revoked")


@click.command("make-admin")
@click.argument("email")
@with_appcontext
def make_admin(email: str) -> None:
    """Make an account an administrator of this svc (and active, if it was deactivated)."""
    try:
        user = admin.make_admin(email)
    except APIError as exc:
        raise click.ClickException(exc.detail) from None
    click.echo(f"{user.email} is an administrator")


@click.command("reset-factors")
@click.argument("email")
@with_appcontext
def reset_factors(email: str) -> None:
    """Remove an account's second factors and recovery codes (a lost phone, or an install
    restored without its secret key): its next password sign-in needs none."""
    try:
        user = admin.by_email(email)
    except APIError as exc:
        raise click.ClickException(exc.detail) from None
    second_factors.reset_factors(None, user.id)
    click.echo(f"second factors of {user.email} removed")


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

    scheduler.main(current_app._get_current_object())


@click.command("backup")
@click.argument("destination", type=click.Path(path_type=str))
@with_appcontext
def backup_command(destination: str) -> None:
    """Write a backup archive of this installation to DESTINATION (a file, or a folder to put
    svc-backup-<time>.tar.gz in), while the service runs."""
    from svc.operations import backup

    made = _operation(backup.backup, destination)
    manifest = made.manifest
    click.echo(f"wrote {made.path}")
    click.echo(
        f"  {_rows(manifest['tables'], 'reports')} reports, {len(manifest['objects'])} "
        f"objects (screenshots), {len(manifest['tables'])} tables, revision {manifest['revision']}"
    )
    for key in made.missing_objects:
        click.echo(f"  left out {key}: deleted since the snapshot", err=True)


@click.command("restore")
@click.argument("archive", type=click.Path(path_type=str))
@with_appcontext
def restore_command(archive: str) -> None:
    """Restore ARCHIVE (made by `backup`) into this installation, which must be empty. Stop
    the service first."""
    try:
        # Checked here, not by click: click's check comes after the app (and its new instance
        # folder) was made, and its refusal would leave that folder behind.
        if not os.path.isfile(archive):
            raise OperationFailed(f"{archive}: no such file")
        from svc.operations import backup

        restored = backup.restore(archive)
    except OperationFailed as exc:
        _take_back_new_paths()
        raise click.ClickException(str(exc)) from None
    manifest = restored.manifest
    click.echo(
        f"restored {_rows(manifest['tables'], 'reports')} reports and "
        f"{len(manifest['objects'])} objects (screenshots) from {manifest['created_at']}"
    )
    if restored.migrated_from:
        click.echo(f"  migrated from revision {restored.migrated_from} to this version's")


@click.command("copy-to")
@click.argument("url")
@with_appcontext
def copy_to_command(url: str) -> None:
    """Copy this SQLite installation, every table, into the empty PostgreSQL database at URL
    (postgresql+psycopg://user:password@host/database), then check every table."""
    from svc.operations import moving

    copied = _operation(moving.copy_to, url)
    for name, table in copied.items():
        click.echo(f"  {name:<24} {table['rows']:>10} rows  checksum {table['checksum'][:12]}")
    click.echo("copied; every table's count and checksum agree. To switch, stop svc, then set")
    click.echo(f"  SVC_DATABASE_URL={url}")
    click.echo("and start it again.")


@click.group("storage")
def storage_commands() -> None:
    """The object store of every file (docs/storage.md)."""


@storage_commands.command("copy-to")
@click.argument("url")
@with_appcontext
def storage_copy_to_command(url: str) -> None:
    """Copy every object the database references into the store at URL (s3://bucket[/prefix]
    or file:///path), checking each copy's size and SHA-256; run again, it copies what is
    missing. Nothing is deleted from the store in force."""
    from svc.operations import objects

    copied = _operation(objects.copy_to, url)
    click.echo(f"  {copied.copied} copied, {copied.present} there already, all checked")
    for key in copied.missing:
        click.echo(f"  left out {key}: not in the store in force", err=True)
    click.echo("To switch, stop svc, then set")
    click.echo(f"  SVC_STORAGE_URL={url}")
    click.echo("and start it again.")


def _operation(function, *args):
    try:
        return function(*args)
    except OperationFailed as exc:
        raise click.ClickException(str(exc)) from None


def _take_back_new_paths() -> None:
    """A refused restore leaves the installation as it was: what this process's start made
    (a new instance folder, its secret key) goes again. Restore opens no database before the
    archive passed, so no empty SQLite file is left either."""
    for path in reversed(current_app.extensions["svc.new_paths"]):
        with contextlib.suppress(OSError):
            os.rmdir(path) if os.path.isdir(path) else os.unlink(path)


def _rows(summary: dict, table: str) -> int:
    return summary.get(table, {}).get("rows", 0)
