"""Instance markers (issue 73): one-time work of the scheduler's, done

Revision ID: a3c5e7b9d1f4
Revises: f1b3d5a7c9e2
Create Date: 2026-11-28 05:30:00.000000

The sign-reports job searched every report for unsigned ones each hour (0.3 s at 1,000,000);
once none is left, a marker says so and the search is never made again.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'a3c5e7b9d1f4'
down_revision = 'f1b3d5a7c9e2'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'instance_markers',
        sa.Column('name', sa.String(length=64), nullable=False),
        sa.Column('at', sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint('name'),
    )


def downgrade():
    op.drop_table('instance_markers')
