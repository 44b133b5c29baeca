"""Duplicates: each report's signature, written by the fan-out (and for older reports by the
scheduler's sign-reports job)

Revision ID: c3d8e1f5a7b9
Revises: b7e3f9a1c2d4
Create Date: 2026-11-26 13:20:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'c3d8e1f5a7b9'
down_revision = 'b7e3f9a1c2d4'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('report_signatures',
    sa.Column('report_id', sa.Uuid(), nullable=False),
    sa.Column('project_id', sa.Uuid(), nullable=False),
    sa.Column('signature', sa.String(length=64), nullable=False),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_report_signatures_project_id_projects'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['report_id'], ['reports.id'], name=op.f('fk_report_signatures_report_id_reports'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('report_id', name=op.f('pk_report_signatures'))
    )
    with op.batch_alter_table('report_signatures', schema=None) as batch_op:
        batch_op.create_index('ix_report_signatures_signature_project', ['signature', 'project_id'], unique=False)


def downgrade():
    with op.batch_alter_table('report_signatures', schema=None) as batch_op:
        batch_op.drop_index('ix_report_signatures_signature_project')
    op.drop_table('report_signatures')
