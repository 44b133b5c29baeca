"""A project's version, which the ingest's remembered projects are checked against (issue 53)

Revision ID: e5b2a7c9d1f4
Revises: 8d2f6a4c1e93
Create Date: 2026-11-27 02:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'e5b2a7c9d1f4'
down_revision = '8d2f6a4c1e93'
branch_labels = None
depends_on = None


def upgrade():
    # A constant default: both databases add the column without rewriting the table.
    op.add_column('projects', sa.Column('version', sa.Integer(), server_default='0', nullable=False))


def downgrade():
    with op.batch_alter_table('projects', schema=None) as batch_op:
        batch_op.drop_column('version')
