"""Hardening 4: the project a mail to a reporter is about (their daily limits count it), and
the objects of the store still to delete

Revision ID: a4d9c2e7f1b3
Revises: 9e563cac3454
Create Date: 2026-11-26 10:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'a4d9c2e7f1b3'
down_revision = '9e563cac3454'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('object_deletions',
    sa.Column('key', sa.String(length=255), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('key', name=op.f('pk_object_deletions'))
    )
    with op.batch_alter_table('mail_outbox', schema=None) as batch_op:
        batch_op.add_column(sa.Column('reporter_project_id', sa.Uuid(), nullable=True))
        batch_op.create_index('ix_mail_outbox_to_address_created_at', ['to_address', 'created_at'], unique=False)


def downgrade():
    with op.batch_alter_table('mail_outbox', schema=None) as batch_op:
        batch_op.drop_index('ix_mail_outbox_to_address_created_at')
        batch_op.drop_column('reporter_project_id')
    op.drop_table('object_deletions')
