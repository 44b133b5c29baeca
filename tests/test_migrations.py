"""The migrations build exactly the schema the models describe, on each test database."""

import logging

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from svc.extensions import db
from svc.scheduler import JOBSTORE_TABLE


def include_object(obj, name, type_, reflected, compare_to):
    return not (type_ == "table" and name == JOBSTORE_TABLE)


def test_models_and_migrations_agree(app):
    with app.app_context(), db.engine.connect() as connection:
        context = MigrationContext.configure(
            connection, opts={"compare_type": True, "include_object": include_object}
        )
        differences = compare_metadata(context, db.metadata)
    assert differences == []


def test_running_migrations_leaves_the_application_loggers_alone(app):
    # The app fixture migrated after svc's modules made their loggers; Alembic's logging
    # setup used to disable every logger it did not name, silencing svc's error log.
    assert not logging.getLogger("svc.errors").disabled
    assert logging.getLogger("svc.errors").isEnabledFor(logging.ERROR)
