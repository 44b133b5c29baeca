"""Replays: a report's recorded DOM replay (contract section 19)

Revision ID: 4c9a1e7d2b60
Revises: 78e15fd879e8
Create Date: 2026-11-25 23:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '4c9a1e7d2b60'
down_revision = '78e15fd879e8'
branch_labels = None
depends_on = None


def upgrade():
    # The replay is an upload like a screenshot (its row in `screenshots`); the report's captured
    # details name it (not the reports row: a wider one changed SQLite's plan for a list sort).
    with op.batch_alter_table('report_details', schema=None) as batch_op:
        batch_op.add_column(sa.Column('replay_key', sa.String(length=255), nullable=True))


def downgrade():
    # Plain ALTER TABLE ... DROP COLUMN (SQLite 3.35+), as the migrations before it.
    op.drop_column('report_details', 'replay_key')
