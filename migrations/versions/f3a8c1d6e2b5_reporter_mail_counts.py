"""Hardening 6: reporter mails counted for their daily limits apart from the mails themselves

Revision ID: f3a8c1d6e2b5
Revises: 6c2e9f1a4b87
Create Date: 2026-11-27 22:00:00.000000

Erasing a reporter's data deletes their mails; the limits were counted from those rows, so an
erase reset them. Counts start empty at the upgrade: the mails of the day before it are not
counted (a keyed hash needs the app's secret key, which a migration does not read).
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'f3a8c1d6e2b5'
down_revision = '6c2e9f1a4b87'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('reporter_mail_counts',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('address_key', sa.String(length=64), nullable=False),
    sa.Column('project_id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_reporter_mail_counts'))
    )
    op.create_index('ix_reporter_mail_counts_key_created_at', 'reporter_mail_counts',
                    ['address_key', 'created_at'], unique=False)


def downgrade():
    op.drop_index('ix_reporter_mail_counts_key_created_at', table_name='reporter_mail_counts')
    op.drop_table('reporter_mail_counts')
