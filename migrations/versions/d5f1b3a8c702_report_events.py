"""Report events: the ingest's one outbox row, fanned out by the scheduler

Revision ID: d5f1b3a8c702
Revises: c4e8a2f61b97
Create Date: 2026-11-25 11:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'd5f1b3a8c702'
down_revision = 'c4e8a2f61b97'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('report_events',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('report_id', sa.Uuid(), nullable=False),
    sa.Column('project_id', sa.Uuid(), nullable=False),
    sa.Column('severity', sa.String(length=16), nullable=False),
    sa.Column('category', sa.String(length=16), nullable=False),
    sa.Column('payload', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('lease_until', sa.DateTime(), nullable=True),
    sa.Column('lease_token', sa.Uuid(), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_report_events'))
    )
    with op.batch_alter_table('report_events', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_report_events_created_at'), ['created_at'], unique=False)


def downgrade():
    with op.batch_alter_table('report_events', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_report_events_created_at'))
    op.drop_table('report_events')
