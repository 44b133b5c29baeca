"""The overview's median read from an index alone (issue 73)

Revision ID: c4e8a2f6b1d9
Revises: a3c5e7b9d1f4
Create Date: 2026-11-28 12:10:00.000000

The median time to resolve reads every report resolved in the window: with created_at in the
index of the resolved, from the index alone, not from each report's row.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'c4e8a2f6b1d9'
down_revision = 'a3c5e7b9d1f4'
branch_labels = None
depends_on = None

RESOLVED = sa.text('resolved_at IS NOT NULL')


def _index(columns):
    op.drop_index('ix_reports_project_resolved', table_name='reports')
    op.create_index(
        'ix_reports_project_resolved', 'reports', columns, unique=False,
        sqlite_where=RESOLVED, postgresql_where=RESOLVED,
    )


def upgrade():
    _index(['project_id', 'resolved_at', 'created_at'])


def downgrade():
    _index(['project_id', 'resolved_at'])
