"""Issue trackers: integrations, linked issues, the calls outbox, tracker events

Revision ID: b7e2c9d4a1f3
Revises: d5f1b3a8c702
Create Date: 2026-11-25 12:10:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'b7e2c9d4a1f3'
down_revision = 'd5f1b3a8c702'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('integrations',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('project_id', sa.Uuid(), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('config', sa.JSON(), nullable=False),
    sa.Column('token_encrypted', sa.Text(), nullable=False),
    sa.Column('webhook_secret', sa.String(length=64), nullable=False),
    sa.Column('auto_create', sa.JSON(), nullable=True),
    sa.Column('sync_status', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('last_used_at', sa.DateTime(), nullable=True),
    sa.Column('last_error', sa.String(length=500), nullable=True),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_integrations_project_id_projects'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_integrations'))
    )
    with op.batch_alter_table('integrations', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_integrations_project_id'), ['project_id'], unique=False)

    op.create_table('external_issues',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('report_id', sa.Uuid(), nullable=False),
    sa.Column('integration_id', sa.Uuid(), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('remote_id', sa.String(length=200), nullable=False),
    sa.Column('key', sa.String(length=200), nullable=False),
    sa.Column('url', sa.String(length=1000), nullable=False),
    sa.Column('address', sa.String(length=1000), nullable=False),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('last_error', sa.String(length=500), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['integration_id'], ['integrations.id'], name=op.f('fk_external_issues_integration_id_integrations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['report_id'], ['reports.id'], name=op.f('fk_external_issues_report_id_reports'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_external_issues')),
    sa.UniqueConstraint('integration_id', 'report_id', name=op.f('uq_external_issues_integration_id'))
    )
    with op.batch_alter_table('external_issues', schema=None) as batch_op:
        batch_op.create_index('ix_external_issues_integration_remote', ['integration_id', 'remote_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_external_issues_report_id'), ['report_id'], unique=False)

    op.create_table('integration_calls',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('integration_id', sa.Uuid(), nullable=False),
    sa.Column('report_id', sa.Uuid(), nullable=False),
    sa.Column('action', sa.String(length=16), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('next_attempt_at', sa.DateTime(), nullable=True),
    sa.Column('last_status_code', sa.Integer(), nullable=True),
    sa.Column('last_error', sa.String(length=500), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['integration_id'], ['integrations.id'], name=op.f('fk_integration_calls_integration_id_integrations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_integration_calls'))
    )
    with op.batch_alter_table('integration_calls', schema=None) as batch_op:
        batch_op.create_index('ix_integration_calls_due', ['status', 'next_attempt_at'], unique=False)
        batch_op.create_index('ix_integration_calls_integration_created', ['integration_id', 'created_at'], unique=False)

    op.create_table('tracker_events',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('integration_id', sa.Uuid(), nullable=False),
    sa.Column('delivery_id', sa.String(length=200), nullable=False),
    sa.Column('received_at', sa.DateTime(), nullable=False),
    sa.Column('outcome', sa.String(length=300), nullable=False),
    sa.ForeignKeyConstraint(['integration_id'], ['integrations.id'], name=op.f('fk_tracker_events_integration_id_integrations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_tracker_events')),
    sa.UniqueConstraint('integration_id', 'delivery_id', name=op.f('uq_tracker_events_integration_id'))
    )
    with op.batch_alter_table('tracker_events', schema=None) as batch_op:
        batch_op.create_index('ix_tracker_events_integration_received', ['integration_id', 'received_at'], unique=False)

    with op.batch_alter_table('report_activity', schema=None) as batch_op:
        batch_op.add_column(sa.Column('via', sa.String(length=16), nullable=True))


def downgrade():
    with op.batch_alter_table('report_activity', schema=None) as batch_op:
        batch_op.drop_column('via')
    op.drop_table('tracker_events')
    op.drop_table('integration_calls')
    with op.batch_alter_table('external_issues', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_external_issues_report_id'))
        batch_op.drop_index('ix_external_issues_integration_remote')
    op.drop_table('external_issues')
    with op.batch_alter_table('integrations', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_integrations_project_id'))
    op.drop_table('integrations')
