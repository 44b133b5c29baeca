"""The reporter's language: each report's locale, beside what it captured (docs/api.md §8.1)

Revision ID: 8d2f6a4c1e93
Revises: 5a1c9e7d3b20
Create Date: 2026-11-26 16:15:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '8d2f6a4c1e93'
down_revision = '5a1c9e7d3b20'
branch_labels = None
depends_on = None


def upgrade():
    # A constant default: both databases add the column without rewriting the table.
    op.add_column('report_details', sa.Column('locale', sa.String(length=35), server_default='en', nullable=False))


def downgrade():
    with op.batch_alter_table('report_details', schema=None) as batch_op:
        batch_op.drop_column('locale')
