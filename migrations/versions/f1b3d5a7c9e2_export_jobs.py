"""Export jobs (issue 73): a large export written by the scheduler into the object store

Revision ID: f1b3d5a7c9e2
Revises: e7a1c3d5f9b2
Create Date: 2026-11-28 05:00:00.000000
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'f1b3d5a7c9e2'
down_revision = 'e7a1c3d5f9b2'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'export_jobs',
        sa.Column('id', sa.Uuid(), nullable=False),
        sa.Column('user_id', sa.Uuid(), nullable=False),
        sa.Column('project_id', sa.Uuid(), nullable=False),
        sa.Column('format', sa.String(length=8), nullable=False),
        sa.Column('filters', sa.JSON(), nullable=False),
        sa.Column('status', sa.String(length=10), nullable=False),
        sa.Column('total', sa.Integer(), nullable=True),
        sa.Column('written', sa.Integer(), server_default='0', nullable=False),
        sa.Column('key', sa.String(length=255), nullable=True),
        sa.Column('size', sa.Integer(), nullable=True),
        sa.Column('error', sa.String(length=500), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('started_at', sa.DateTime(), nullable=True),
        sa.Column('finished_at', sa.DateTime(), nullable=True),
        sa.Column('expires_at', sa.DateTime(), nullable=False),
        sa.Column('lease_until', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['project_id'], ['projects.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('export_jobs') as batch_op:
        batch_op.create_index('ix_export_jobs_expires', ['expires_at'])
        batch_op.create_index('ix_export_jobs_status_created', ['status', 'created_at'])


def downgrade():
    op.drop_table('export_jobs')
