"""The overview's median in a band: report_hours, the hours in the index (issue 73)

Revision ID: e5b7c9d1f3a6
Revises: c4e8a2f6b1d9
Create Date: 2026-12-01 23:50:00.000000

report_hours counts the resolved reports by project, day of resolution and band of hours to
resolve, so that the median sorts one band's reports, not the window's; the index of the
resolved holds each one's hours, so that SQLite does not compute them for every report of the
window. The counts are made from the reports already stored, as the service's recount makes
them (svc.services.reporting.stats.recount_hours).
"""
from alembic import op
import sqlalchemy as sa

from svc.models.reports import HoursBetween
from svc.services.reporting import stats

# revision identifiers, used by Alembic.
revision = 'e5b7c9d1f3a6'
down_revision = 'c4e8a2f6b1d9'
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
    op.create_table('report_hours',
    sa.Column('project_id', sa.Uuid(), nullable=False),
    sa.Column('day', sa.Date(), nullable=False),
    sa.Column('band', sa.SmallInteger(), autoincrement=False, nullable=False),
    sa.Column('count', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_report_hours_project_id_projects'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('project_id', 'day', 'band', name=op.f('pk_report_hours'))
    )
    op.execute(stats.recount_hours())
    hours = HoursBetween(sa.column('created_at'), sa.column('resolved_at'))
    _index(['project_id', 'resolved_at', 'created_at', hours])


def downgrade():
    _index(['project_id', 'resolved_at', 'created_at'])
    op.drop_table('report_hours')
