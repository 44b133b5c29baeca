"""Hardening 5: a tracker integration's webhook secret encrypted at rest, as its token is;
each tracker delivery's body hash, applied once

Revision ID: b7e3f9a1c2d4
Revises: a4d9c2e7f1b3
Create Date: 2026-11-26 13:00:00.000000

"""
from alembic import op
import sqlalchemy as sa

from svc import secrets


# revision identifiers, used by Alembic.
revision = 'b7e3f9a1c2d4'
down_revision = 'a4d9c2e7f1b3'
branch_labels = None
depends_on = None

integrations = sa.table(
    'integrations',
    sa.column('id', sa.Uuid()),
    sa.column('webhook_secret', sa.String(64)),
    sa.column('webhook_secret_encrypted', sa.Text()),
)


def upgrade():
    with op.batch_alter_table('integrations', schema=None) as batch_op:
        batch_op.add_column(sa.Column('webhook_secret_encrypted', sa.Text(), nullable=True))
    connection = op.get_bind()
    # With the app's keys (flask db upgrade runs in its context), as svc.secrets encrypts tokens.
    for row_id, secret in connection.execute(
        sa.select(integrations.c.id, integrations.c.webhook_secret)
    ).all():
        connection.execute(
            integrations.update()
            .where(integrations.c.id == row_id)
            .values(webhook_secret_encrypted=secrets.encrypt(secret))
        )
    with op.batch_alter_table('integrations', schema=None) as batch_op:
        batch_op.alter_column('webhook_secret_encrypted', existing_type=sa.Text(), nullable=False)
        batch_op.drop_column('webhook_secret')
    with op.batch_alter_table('tracker_events', schema=None) as batch_op:
        batch_op.add_column(sa.Column('body_sha256', sa.String(length=64), nullable=True))
        batch_op.create_unique_constraint(
            'uq_tracker_events_integration_body', ['integration_id', 'body_sha256']
        )


def downgrade():
    with op.batch_alter_table('tracker_events', schema=None) as batch_op:
        batch_op.drop_constraint('uq_tracker_events_integration_body', type_='unique')
        batch_op.drop_column('body_sha256')
    with op.batch_alter_table('integrations', schema=None) as batch_op:
        batch_op.add_column(sa.Column('webhook_secret', sa.String(length=64), nullable=True))
    connection = op.get_bind()
    for row_id, value in connection.execute(
        sa.select(integrations.c.id, integrations.c.webhook_secret_encrypted)
    ).all():
        connection.execute(
            integrations.update()
            .where(integrations.c.id == row_id)
            .values(webhook_secret=secrets.decrypt(value))
        )
    with op.batch_alter_table('integrations', schema=None) as batch_op:
        batch_op.alter_column('webhook_secret', existing_type=sa.String(length=64), nullable=False)
        batch_op.drop_column('webhook_secret_encrypted')
