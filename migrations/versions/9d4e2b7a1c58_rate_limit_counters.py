"""Rate-limit counters in the database

Revision ID: 9d4e2b7a1c58
Revises: 3f6a9c1d7e20
Create Date: 2026-11-24 09:30:00

Every worker and instance counts in the same rows, so a limit holds for the whole installation
(contract section 9, v3). See svc.rate_limits.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '9d4e2b7a1c58'
down_revision = '3f6a9c1d7e20'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'rate_limit_counters',
        sa.Column('bucket', sa.String(length=255), nullable=False),
        sa.Column('hits', sa.Integer(), nullable=False),
        sa.Column('expires_at', sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint('bucket', name=op.f('pk_rate_limit_counters')),
    )
    with op.batch_alter_table('rate_limit_counters') as batch_op:
        batch_op.create_index(
            batch_op.f('ix_rate_limit_counters_expires_at'), ['expires_at'], unique=False
        )


def downgrade():
    op.drop_table('rate_limit_counters')
