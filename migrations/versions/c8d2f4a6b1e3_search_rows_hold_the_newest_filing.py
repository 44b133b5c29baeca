"""search rows hold the newest filing time up to each (SQLite; issue 73)

Revision ID: c8d2f4a6b1e3
Revises: a7c3e9b1d5f2
Create Date: 2026-12-02 21:00:00.000000

`report_search_rows.filed_by` is the newest filing time of the row's report and of every report
indexed before it (a row's rowid is the order it was indexed in, close to the filing order but
not tied to it: the fan-out indexes batches as they come). Reading FTS5's matches newest rowid
first, a search then knows that every report indexed before the oldest it read was filed no
later than that row's `filed_by`, and so whether the newest-first page it found among them is
the list's (svc.services.reporting.search, newest_matches). PostgreSQL has no such table.
"""
from alembic import op


# revision identifiers, used by Alembic.
revision = 'c8d2f4a6b1e3'
down_revision = 'a7c3e9b1d5f2'
branch_labels = None
depends_on = None


def upgrade():
    if op.get_bind().dialect.name != 'sqlite':
        return
    op.execute("ALTER TABLE report_search_rows ADD COLUMN filed_by DATETIME")
    # The running maximum in one pass over the rows in their order.
    op.execute(
        "UPDATE report_search_rows SET filed_by = running.filed_by FROM ("
        " SELECT s.rowid AS row_id, max(r.created_at) OVER (ORDER BY s.rowid) AS filed_by"
        " FROM report_search_rows s JOIN reports r ON r.id = s.report_id"
        ") AS running WHERE report_search_rows.rowid = running.row_id"
    )


def downgrade():
    if op.get_bind().dialect.name != 'sqlite':
        return
    op.execute("ALTER TABLE report_search_rows DROP COLUMN filed_by")
