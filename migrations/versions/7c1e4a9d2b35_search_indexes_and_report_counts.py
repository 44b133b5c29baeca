"""search indexes, list indexes and per-project report counts

Revision ID: 7c1e4a9d2b35
Revises: 2623b13629f0
Create Date: 2026-11-22 10:30:00

SQLite: a contentless FTS5 table with the trigram tokenizer over title and description, kept in
sync by triggers. Its rowids come from `report_search_rows`, whose INTEGER PRIMARY KEY survives
VACUUM and table rebuilds (the implicit rowid of `reports`, keyed by a UUID, would not).
PostgreSQL: pg_trgm GIN indexes, which ILIKE '%term%' uses as it is.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '7c1e4a9d2b35'
down_revision = '2623b13629f0'
branch_labels = None
depends_on = None

SQLITE_UPGRADE = [
    """CREATE TABLE report_search_rows (
        rowid INTEGER PRIMARY KEY,
        report_id CHAR(32) NOT NULL UNIQUE
    )""",
    # detail=none keeps no positions: the index is about the size of the text instead of five
    # times it, and inserts take half the time. A search asks for each trigram of a term on
    # its own (no phrase), and the LIKE that follows keeps the results exact.
    """CREATE VIRTUAL TABLE reports_fts USING fts5(
        title, description, content='', tokenize='trigram', detail=none
    )""",
    """CREATE TRIGGER reports_search_insert AFTER INSERT ON reports BEGIN
        INSERT INTO report_search_rows (report_id) VALUES (new.id);
        INSERT INTO reports_fts (rowid, title, description)
            VALUES (last_insert_rowid(), new.title, new.description);
    END""",
    """CREATE TRIGGER reports_search_update AFTER UPDATE OF title, description ON reports BEGIN
        INSERT INTO reports_fts (reports_fts, rowid, title, description)
            SELECT 'delete', rowid, old.title, old.description
            FROM report_search_rows WHERE report_id = old.id;
        INSERT INTO reports_fts (rowid, title, description)
            SELECT rowid, new.title, new.description
            FROM report_search_rows WHERE report_id = new.id;
    END""",
    """CREATE TRIGGER reports_search_delete AFTER DELETE ON reports BEGIN
        INSERT INTO reports_fts (reports_fts, rowid, title, description)
            SELECT 'delete', rowid, old.title, old.description
            FROM report_search_rows WHERE report_id = old.id;
        DELETE FROM report_search_rows WHERE report_id = old.id;
    END""",
    # Reports stored before this migration.
    "INSERT INTO report_search_rows (report_id) SELECT id FROM reports ORDER BY created_at",
    """INSERT INTO reports_fts (rowid, title, description)
        SELECT s.rowid, r.title, r.description
        FROM report_search_rows s JOIN reports r ON r.id = s.report_id""",
]
SQLITE_DOWNGRADE = [
    "DROP TRIGGER reports_search_delete",
    "DROP TRIGGER reports_search_update",
    "DROP TRIGGER reports_search_insert",
    "DROP TABLE reports_fts",
    "DROP TABLE report_search_rows",
]
POSTGRESQL_INDEXES = [
    "CREATE INDEX ix_reports_title_trgm ON reports USING gin (title {ops})",
    "CREATE INDEX ix_reports_description_trgm ON reports USING gin (description {ops})",
]
POSTGRESQL_DOWNGRADE = [
    "DROP INDEX ix_reports_description_trgm",
    "DROP INDEX ix_reports_title_trgm",
]

LIST_INDEXES = {
    'ix_reports_project_status_severity_created': [
        'project_id', 'status', 'severity_rank', 'created_at'
    ],
    'ix_reports_created': [sa.text('created_at DESC'), 'id'],
    'ix_reports_updated': [sa.text('updated_at DESC'), sa.text('created_at DESC'), 'id'],
    'ix_reports_severity_created': [
        sa.text('severity_rank DESC'), sa.text('created_at DESC'), 'id'
    ],
}


def _run(statements):
    for statement in statements:
        op.execute(statement)


def _create_trigram_indexes():
    op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    # The extension may live in another schema than ours (it is installed once per database),
    # so its operator class is named with its schema.
    schema = op.get_bind().scalar(sa.text(
        "SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_trgm'"
    ))
    _run(statement.format(ops=f"{schema}.gin_trgm_ops") for statement in POSTGRESQL_INDEXES)


def upgrade():
    with op.batch_alter_table('projects', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column('report_count', sa.Integer(), server_default='0', nullable=False)
        )
    op.execute(
        "UPDATE projects SET report_count ="
        " (SELECT count(*) FROM reports WHERE reports.project_id = projects.id)"
    )
    with op.batch_alter_table('reports', schema=None) as batch_op:
        for name, columns in LIST_INDEXES.items():
            batch_op.create_index(name, columns, unique=False)

    dialect = op.get_bind().dialect.name
    if dialect == 'sqlite':
        _run(SQLITE_UPGRADE)
    elif dialect == 'postgresql':
        _create_trigram_indexes()


def downgrade():
    dialect = op.get_bind().dialect.name
    if dialect == 'sqlite':
        _run(SQLITE_DOWNGRADE)
    elif dialect == 'postgresql':
        _run(POSTGRESQL_DOWNGRADE)

    with op.batch_alter_table('reports', schema=None) as batch_op:
        for name in reversed(list(LIST_INDEXES)):
            batch_op.drop_index(name)
    with op.batch_alter_table('projects', schema=None) as batch_op:
        batch_op.drop_column('report_count')
