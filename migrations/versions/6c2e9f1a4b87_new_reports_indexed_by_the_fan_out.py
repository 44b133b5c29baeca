"""New reports indexed for search by the fan-out (SQLite; issue 53)

Revision ID: 6c2e9f1a4b87
Revises: e5b2a7c9d1f4
Create Date: 2026-11-27 12:30:00.000000

The trigger that indexed each report as it was inserted goes: the fan-out indexes new reports
a batch at a time (svc.models.search_index.index_new), and a search takes the reports whose
created event still waits as candidates meanwhile. Reports indexed already stay as they are;
the triggers of edits and deletions stay. PostgreSQL has no such trigger: nothing to do.
"""
from alembic import op


# revision identifiers, used by Alembic.
revision = '6c2e9f1a4b87'
down_revision = 'e5b2a7c9d1f4'
branch_labels = None
depends_on = None

INSERT_TRIGGER = """CREATE TRIGGER reports_search_insert AFTER INSERT ON reports BEGIN
    INSERT INTO report_search_rows (report_id, project_id, title, description)
        VALUES (new.id, new.project_id, new.title, new.description);
    INSERT INTO reports_fts (rowid, title, description)
        VALUES (last_insert_rowid(), new.title, new.description);
END"""


def upgrade():
    if op.get_bind().dialect.name != 'sqlite':
        return
    op.execute("DROP TRIGGER reports_search_insert")


def downgrade():
    if op.get_bind().dialect.name != 'sqlite':
        return
    # What the fan-out had not indexed yet, indexed now: the trigger only sees new rows.
    last = op.get_bind().exec_driver_sql(
        "SELECT coalesce(max(rowid), 0) FROM report_search_rows"
    ).scalar()
    op.execute(
        "INSERT INTO report_search_rows (report_id, project_id, title, description)"
        " SELECT id, project_id, title, description FROM reports"
        " WHERE id NOT IN (SELECT report_id FROM report_search_rows) ORDER BY created_at"
    )
    op.execute(
        "INSERT INTO reports_fts (rowid, title, description)"
        f" SELECT rowid, title, description FROM report_search_rows WHERE rowid > {int(last)}"
    )
    op.execute(INSERT_TRIGGER)
