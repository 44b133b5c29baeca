"""A report's signature read from an index: export jobs at ten million (issue 73)

Revision ID: f1a3c5e7b9d2
Revises: e5b7c9d1f3a6
Create Date: 2026-12-02 05:00:00.000000

An export joins its signature to every report. Read from the rows of report_signatures (terms,
label: about 550 bytes each), a job of a project read most of that table's pages; the index of
(report_id, signature) is a seventh of its size and stays in memory.
"""
from alembic import op

# revision identifiers, used by Alembic.
revision = 'f1a3c5e7b9d2'
down_revision = 'e5b7c9d1f3a6'
branch_labels = None
depends_on = None


def upgrade():
    op.create_index(
        'ix_report_signatures_report_signature', 'report_signatures',
        ['report_id', 'signature'], unique=False,
    )


def downgrade():
    op.drop_index('ix_report_signatures_report_signature', table_name='report_signatures')
