"""The migrations build exactly the schema the models describe, on each test database."""

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from svc.extensions import db


def test_models_and_migrations_agree(app):
    with app.app_context(), db.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        differences = compare_metadata(context, db.metadata)
    assert differences == []
