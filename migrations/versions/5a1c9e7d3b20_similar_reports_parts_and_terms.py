"""Similar reports: each signature row keeps the report's date, the keys of its parts and the
stems of its words (svc.services.signatures)

The rows are remade rather than altered: they are derived from the reports, and the
scheduler's sign-reports job (which runs at start) signs every report that has none.

Revision ID: 5a1c9e7d3b20
Revises: 04fe234c6eea
Create Date: 2026-11-26 15:40:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '5a1c9e7d3b20'
down_revision = '04fe234c6eea'
branch_labels = None
depends_on = None


def _create(columns, indexes):
    op.create_table('report_signatures',
    sa.Column('report_id', sa.Uuid(), nullable=False),
    sa.Column('project_id', sa.Uuid(), nullable=False),
    sa.Column('signature', sa.String(length=64), nullable=False),
    *columns,
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_report_signatures_project_id_projects'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['report_id'], ['reports.id'], name=op.f('fk_report_signatures_report_id_reports'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('report_id', name=op.f('pk_report_signatures'))
    )
    for name, indexed in indexes:
        op.create_index(name, 'report_signatures', indexed, unique=False)


def upgrade():
    op.drop_table('report_signatures')
    _create(
        [
            sa.Column('created_at', sa.DateTime(), nullable=False),
            sa.Column('error_key', sa.String(length=16), nullable=True),
            sa.Column('request_key', sa.String(length=16), nullable=True),
            sa.Column('page_key', sa.String(length=16), nullable=True),
            sa.Column('terms', sa.String(length=1000), nullable=False),
            sa.Column('label', sa.String(length=400), nullable=False),
        ],
        [
            ('ix_report_signatures_signature_project', ['signature', 'project_id', 'created_at']),
            ('ix_report_signatures_project_created', ['project_id', 'created_at']),
            ('ix_report_signatures_error_project', ['error_key', 'project_id', 'created_at']),
            ('ix_report_signatures_request_project', ['request_key', 'project_id', 'created_at']),
        ],
    )


def downgrade():
    op.drop_table('report_signatures')
    _create([], [('ix_report_signatures_signature_project', ['signature', 'project_id'])])
