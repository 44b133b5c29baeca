"""Widget settings per project

Revision ID: 3f6a9c1d7e20
Revises: e2b7c4a1f9d3
Create Date: 2026-11-23 23:30:00

`projects.widget_settings` holds what an owner changed of the widget's look and captures
(contract section 11); the defaults are filled in when it is read.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '3f6a9c1d7e20'
down_revision = 'e2b7c4a1f9d3'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('projects') as batch_op:
        batch_op.add_column(
            sa.Column('widget_settings', sa.JSON(), server_default='{}', nullable=False)
        )


def downgrade():
    with op.batch_alter_table('projects') as batch_op:
        batch_op.drop_column('widget_settings')
