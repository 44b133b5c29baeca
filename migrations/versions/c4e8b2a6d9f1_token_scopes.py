"""Personal access tokens' scopes (contract v6 §24): a token for a coding agent that may only read

Revision ID: c4e8b2a6d9f1
Revises: a7d4e2c9b1f6
Create Date: 2026-11-28 01:30:00.000000

Existing tokens keep no scope, which means everything their user may do, as before.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'c4e8b2a6d9f1'
down_revision = 'a7d4e2c9b1f6'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('personal_access_tokens') as batch_op:
        batch_op.add_column(sa.Column('scopes', sa.String(length=100), nullable=True))


def downgrade():
    with op.batch_alter_table('personal_access_tokens') as batch_op:
        batch_op.drop_column('scopes')
