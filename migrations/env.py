import logging
from contextlib import contextmanager
from logging.config import fileConfig

from alembic import context
from flask import current_app

from svc.models import declared_by_models

# this is the Alembic Config object, which provides
# access to the values within the .ini file in use.
config = context.config

# Interpret the config file for Python logging, leaving loggers that already exist alone:
# migrations also run inside a live process (tests, `create_app` callers), and Alembic's
# default would silence the application's and werkzeug's loggers there.
fileConfig(config.config_file_name, disable_existing_loggers=False)
logger = logging.getLogger("alembic.env")


def get_engine():
    return current_app.extensions["migrate"].db.engine


def get_engine_url():
    try:
        return get_engine().url.render_as_string(hide_password=False).replace("%", "%%")
    except AttributeError:
        return str(get_engine().url).replace("%", "%%")


# add your model's MetaData object here
# for 'autogenerate' support
# from myapp import mymodel
# target_metadata = mymodel.Base.metadata
config.set_main_option("sqlalchemy.url", get_engine_url())
target_db = current_app.extensions["migrate"].db

# other values from the config, defined by the needs of env.py,
# can be acquired:
# my_important_option = config.get_main_option("my_important_option")
# ... etc.


def get_metadata():
    if hasattr(target_db, "metadatas"):
        return target_db.metadatas[None]
    return target_db.metadata


def run_migrations_offline():
    """Run migrations in 'offline' mode.

    This configures the context with just a URL
    and not an Engine, though an Engine is acceptable
    here as well.  By skipping the Engine creation
    we don't even need a DBAPI to be available.

    Calls to context.execute() here emit the given string to the
    script output.

    """
    url = config.get_main_option("sqlalchemy.url")
    context.configure(url=url, target_metadata=get_metadata(), literal_binds=True)

    with context.begin_transaction():
        context.run_migrations()


def render_item(type_, obj, autogen_context):
    """Render svc's own column types by the SQL type they store, so that migrations do not
    import application code (which may change after the migration was written)."""
    if type_ == "type" and type(obj).__module__.startswith("svc."):
        return "sa." + repr(obj.impl)
    return False


def run_migrations_online():
    """Run migrations in 'online' mode.

    In this scenario we need to create an Engine
    and associate a connection with the context.

    """

    # this callback is used to prevent an auto-migration from being generated
    # when there are no changes to the schema
    # reference: http://alembic.zzzcomputing.com/en/latest/cookbook.html
    def process_revision_directives(context, revision, directives):
        if getattr(config.cmd_opts, "autogenerate", False):
            script = directives[0]
            if script.upgrade_ops.is_empty():
                directives[:] = []
                logger.info("No changes in schema detected.")

    conf_args = current_app.extensions["migrate"].configure_args
    conf_args.setdefault("render_item", render_item)
    conf_args.setdefault("include_object", declared_by_models)
    if conf_args.get("process_revision_directives") is None:
        conf_args["process_revision_directives"] = process_revision_directives

    # svc.operations migrates databases other than the app's (a restore's, copy-to's target).
    connectable = config.attributes.get("engine") or get_engine()

    with connectable.connect() as connection:
        context.configure(connection=connection, target_metadata=get_metadata(), **conf_args)

        with sqlite_foreign_keys_off(connection), context.begin_transaction():
            context.run_migrations()


@contextmanager
def sqlite_foreign_keys_off(connection):
    """Batch mode alters a SQLite table by copying it, dropping it and renaming the copy; with
    foreign keys on, the drop would cascade into every table that references it (dropping
    `projects` would delete all reports). The pragma only works outside a transaction."""
    if connection.dialect.name != "sqlite":
        yield
        return
    driver_connection = connection.connection.driver_connection
    driver_connection.execute("PRAGMA foreign_keys=OFF")
    try:
        yield
    finally:
        driver_connection.execute("PRAGMA foreign_keys=ON")


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
