"""The migrations build exactly the schema the models describe, on each test database."""

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
