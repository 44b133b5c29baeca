"""Deliveries found by their report

Revision ID: 5b8e1f3c9a47
Revises: 9d4e2b7a1c58
Create Date: 2026-11-24 11:00:00

Deleting a report cancels its pending deliveries and clears every payload that holds it
(contract section 8, v3): an index on report_id, so that it does not read the whole log.
"""
from alembic import op


# revision identifiers, used by Alembic.
revision = '5b8e1f3c9a47'
down_revision = '9d4e2b7a1c58'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('webhook_deliveries') as batch_op:
        batch_op.create_index('ix_webhook_deliveries_report_id', ['report_id'], unique=False)


def downgrade():
    with op.batch_alter_table('webhook_deliveries') as batch_op:
        batch_op.drop_index('ix_webhook_deliveries_report_id')
