"""search rows hold their report's filing time (SQLite; issue 73)

Revision ID: e5a7c9b1d3f4
Revises: d2e4f6a8b0c1
Create Date: 2026-12-07 18:00:00.000000

`report_search_rows.created_at` is its report's own filing time, as `reports` holds it (it never
changes). A search reading its matches newest first (svc.services.reporting.search,
newest_matches) sorted its page by each match's filing time, looked up among the reports: a
seek in their id index and one in the table, two more random pages for each of the thousand
matches it reads at ten million. It now reads the match's search row alone, which it already
reads for the LIKE (docs/performance.md, "Fewer trigrams, and no report read, for a search",
with the migration's time). PostgreSQL has no such table.
"""
from alembic import op


# revision identifiers, used by Alembic.
revision = 'e5a7c9b1d3f4'
down_revision = 'd2e4f6a8b0c1'
branch_labels = None
depends_on = None


def upgrade():
    if op.get_bind().dialect.name != 'sqlite':
        return
    op.execute("ALTER TABLE report_search_rows ADD COLUMN created_at DATETIME")
    op.execute(
        "UPDATE report_search_rows SET created_at = reports.created_at FROM reports"
        " WHERE reports.id = report_search_rows.report_id"
    )


def downgrade():
    if op.get_bind().dialect.name != 'sqlite':
        return
    op.execute("ALTER TABLE report_search_rows DROP COLUMN created_at")
