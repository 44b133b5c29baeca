"""Duplicates, round 2: which rules made each signature row, so that older rows are made again

Revision ID: a7d4e2c9b1f6
Revises: f3a8c1d6e2b5
Create Date: 2026-11-28 01:00:00.000000

Every existing row was made by the first rules (version 1); the scheduler's sign-reports job
makes them again by the current ones (svc.services.grouping.signatures.VERSION), oldest first,
in batches, and /admin/health counts those left.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'a7d4e2c9b1f6'
down_revision = 'f3a8c1d6e2b5'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('report_signatures') as batch_op:
        batch_op.add_column(
            sa.Column('version', sa.SmallInteger(), nullable=False, server_default='1')
        )
        batch_op.create_index('ix_report_signatures_version_created', ['version', 'created_at'])


def downgrade():
    with op.batch_alter_table('report_signatures') as batch_op:
        batch_op.drop_index('ix_report_signatures_version_created')
        batch_op.drop_column('version')
