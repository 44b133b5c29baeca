"""Reproductions (contract v6 §25): runs of a report's steps against the staging origin

Revision ID: e7a1c3d5f9b2
Revises: c4e8b2a6d9f1
Create Date: 2026-11-28 04:00:00.000000

A project's `repro` setting (None: the defaults, nothing run) and one row per run.
"""
from alembic import op
import sqlalchemy as sa



# revision identifiers, used by Alembic.
revision = 'e7a1c3d5f9b2'
down_revision = 'c4e8b2a6d9f1'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('projects') as batch_op:
        batch_op.add_column(sa.Column('repro', sa.JSON(none_as_null=True), nullable=True))
    op.create_table(
        'reproductions',
        sa.Column('id', sa.Uuid(), nullable=False),
        sa.Column('report_id', sa.Uuid(), nullable=False),
        sa.Column('project_id', sa.Uuid(), nullable=False),
        sa.Column('requested_by_id', sa.Uuid(), nullable=True),
        sa.Column('auto', sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column('status', sa.String(length=10), nullable=False),
        sa.Column('verdict', sa.String(length=16), nullable=True),
        sa.Column('is_last', sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column('evidence', sa.JSON(), nullable=False),
        sa.Column('failed_step', sa.JSON(none_as_null=True), nullable=True),
        sa.Column('steps_run', sa.Integer(), server_default='0', nullable=False),
        sa.Column('requests_blocked', sa.Integer(), server_default='0', nullable=False),
        sa.Column('duration_ms', sa.Integer(), nullable=True),
        sa.Column('trace_key', sa.String(length=255), nullable=True),
        sa.Column('screenshot_key', sa.String(length=255), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('started_at', sa.DateTime(), nullable=True),
        sa.Column('finished_at', sa.DateTime(), nullable=True),
        sa.Column('lease_until', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['project_id'], ['projects.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['report_id'], ['reports.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['requested_by_id'], ['users.id'], ondelete='SET NULL'),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('reproductions') as batch_op:
        batch_op.create_index('ix_reproductions_last_verdict', ['is_last', 'verdict', 'report_id'])
        batch_op.create_index('ix_reproductions_project_created', ['project_id', 'created_at'])
        batch_op.create_index('ix_reproductions_report_created', ['report_id', 'created_at'])
        batch_op.create_index('ix_reproductions_status_created', ['status', 'created_at'])


def downgrade():
    op.drop_table('reproductions')
    with op.batch_alter_table('projects') as batch_op:
        batch_op.drop_column('repro')
