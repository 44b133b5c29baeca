"""search rows hold the searched text and the report's project (SQLite)

Revision ID: b4f81d2c6e07
Revises: 7c1e4a9d2b35
Create Date: 2026-11-23 12:30:00

`report_search_rows` keeps, beside each report's FTS rowid, its project, title and description,
so that the total of a search is counted from the FTS rows alone: before, each match was
mapped to its report id, then found through the UUID index of `reports` and read there for the
LIKE. The FTS table itself stays contentless. PostgreSQL has no such table: nothing to do.
"""
from alembic import op


# revision identifiers, used by Alembic.
revision = 'b4f81d2c6e07'
down_revision = '7c1e4a9d2b35'
branch_labels = None
depends_on = None

TRIGGERS = ("reports_search_insert", "reports_search_update", "reports_search_delete")
INSERT_TRIGGER = """CREATE TRIGGER reports_search_insert AFTER INSERT ON reports BEGIN
    INSERT INTO report_search_rows ({columns}) VALUES ({values});
    INSERT INTO reports_fts (rowid, title, description)
        VALUES (last_insert_rowid(), new.title, new.description);
END"""
UPDATE_TRIGGER = """CREATE TRIGGER reports_search_update AFTER UPDATE OF title, description ON reports
BEGIN
    INSERT INTO reports_fts (reports_fts, rowid, title, description)
        SELECT 'delete', rowid, old.title, old.description
        FROM report_search_rows WHERE report_id = old.id;
    INSERT INTO reports_fts (rowid, title, description)
        SELECT rowid, new.title, new.description
        FROM report_search_rows WHERE report_id = new.id;
    {also}
END"""
DELETE_TRIGGER = """CREATE TRIGGER reports_search_delete AFTER DELETE ON reports BEGIN
    INSERT INTO reports_fts (reports_fts, rowid, title, description)
        SELECT 'delete', rowid, old.title, old.description
        FROM report_search_rows WHERE report_id = old.id;
    DELETE FROM report_search_rows WHERE report_id = old.id;
END"""
WITH_TEXT = """(
    rowid INTEGER PRIMARY KEY,
    report_id CHAR(32) NOT NULL UNIQUE,
    project_id CHAR(32) NOT NULL,
    title VARCHAR(200) NOT NULL,
    description TEXT NOT NULL
)"""
WITHOUT_TEXT = """(
    rowid INTEGER PRIMARY KEY,
    report_id CHAR(32) NOT NULL UNIQUE
)"""


def _rebuild(definition: str, copied: str, triggers: list[str]) -> None:
    """Replace report_search_rows, keeping its rowids (they are the FTS rowids). The triggers go
    first: SQLite will not rename a table while a trigger names one that is missing."""
    for trigger in TRIGGERS:
        op.execute(f"DROP TRIGGER {trigger}")
    op.execute(f"CREATE TABLE report_search_rows_new {definition}")
    op.execute(f"INSERT INTO report_search_rows_new {copied}")
    op.execute("DROP TABLE report_search_rows")
    op.execute("ALTER TABLE report_search_rows_new RENAME TO report_search_rows")
    for trigger in triggers:
        op.execute(trigger)


def upgrade():
    if op.get_bind().dialect.name != 'sqlite':
        return
    _rebuild(
        WITH_TEXT,
        "(rowid, report_id, project_id, title, description)"
        " SELECT s.rowid, s.report_id, r.project_id, r.title, r.description"
        " FROM report_search_rows s JOIN reports r ON r.id = s.report_id ORDER BY s.rowid",
        [
            INSERT_TRIGGER.format(
                columns="report_id, project_id, title, description",
                values="new.id, new.project_id, new.title, new.description",
            ),
            UPDATE_TRIGGER.format(
                also="UPDATE report_search_rows SET title = new.title,"
                " description = new.description WHERE report_id = new.id;"
            ),
            DELETE_TRIGGER,
        ],
    )


def downgrade():
    if op.get_bind().dialect.name != 'sqlite':
        return
    _rebuild(
        WITHOUT_TEXT,
        "(rowid, report_id) SELECT rowid, report_id FROM report_search_rows ORDER BY rowid",
        [
            INSERT_TRIGGER.format(columns="report_id", values="new.id"),
            UPDATE_TRIGGER.format(also=""),
            DELETE_TRIGGER,
        ],
    )
