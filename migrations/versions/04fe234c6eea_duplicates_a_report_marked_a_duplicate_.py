"""Duplicates: a report marked a duplicate of another of its project (docs/api.md §8.11)

Revision ID: 04fe234c6eea
Revises: c3d8e1f5a7b9
Create Date: 2026-11-26 15:13:56.170705

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '04fe234c6eea'
down_revision = 'c3d8e1f5a7b9'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('report_duplicates',
    sa.Column('report_id', sa.Uuid(), nullable=False),
    sa.Column('primary_id', sa.Uuid(), nullable=False),
    sa.Column('reporter_key', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['primary_id'], ['reports.id'], name=op.f('fk_report_duplicates_primary_id_reports'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['report_id'], ['reports.id'], name=op.f('fk_report_duplicates_report_id_reports'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('report_id', name=op.f('pk_report_duplicates'))
    )
    with op.batch_alter_table('report_duplicates', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_report_duplicates_primary_id'), ['primary_id'], unique=False)


def downgrade():
    with op.batch_alter_table('report_duplicates', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_report_duplicates_primary_id'))
    op.drop_table('report_duplicates')
