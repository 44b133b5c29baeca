"""Password reset requests, looked up by the scheduler (hardening 3, finding 9)

Revision ID: c4e8a2f61b97
Revises: a7d3e9c2b614
Create Date: 2026-11-25 10:50:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'c4e8a2f61b97'
down_revision = 'a7d3e9c2b614'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('password_reset_requests',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('email', sa.String(length=320), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_password_reset_requests'))
    )
    with op.batch_alter_table('password_reset_requests', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_password_reset_requests_created_at'), ['created_at'], unique=False)


def downgrade():
    with op.batch_alter_table('password_reset_requests', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_password_reset_requests_created_at'))
    op.drop_table('password_reset_requests')
