"""The webhook claim reads project by project (issue 73)

Revision ID: d2e4f6a8b0c1
Revises: c8d2f4a6b1e3
Create Date: 2026-12-04 02:00:00.000000

The claim took the earliest due deliveries of each project with a window over every due one:
its cost grew with a backlog (170 ms a claim at 100,000 due on SQLite). Led by the project, the
index of pending deliveries gives each project's earliest due ones by a seek
(svc.webhooks.delivery._due_candidates). It replaces the index by status and due time, which
nothing else read.
"""
from alembic import op


# revision identifiers, used by Alembic.
revision = 'd2e4f6a8b0c1'
down_revision = 'c8d2f4a6b1e3'
branch_labels = None
depends_on = None


def upgrade():
    op.drop_index('ix_webhook_deliveries_due', table_name='webhook_deliveries')
    op.create_index(
        'ix_webhook_deliveries_project_due', 'webhook_deliveries',
        ['status', 'project_id', 'next_attempt_at', 'id'], unique=False,
    )


def downgrade():
    op.drop_index('ix_webhook_deliveries_project_due', table_name='webhook_deliveries')
    op.create_index(
        'ix_webhook_deliveries_due', 'webhook_deliveries', ['status', 'next_attempt_at'],
        unique=False,
    )
