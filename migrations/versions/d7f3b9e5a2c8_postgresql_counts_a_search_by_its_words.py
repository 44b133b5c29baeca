"""PostgreSQL counts a common word's search in a word index (issue 73)

Revision ID: d7f3b9e5a2c8
Revises: c4e8a2f6b1d9
Create Date: 2026-12-01 20:30:00.000000

`ix_reports_search_words`, a GIN index of to_tsvector('simple', search_text): the words of each
report's searched text. A report that holds every term of a search as a whole word holds it as a
part of its text too, so a count of those shows that a search matches more than the count's
limit for a fraction of the trigram index's cost (svc.services.reporting.search.words_condition).
SQLite is left alone: its FTS5 table serves it.

Built with the table locked for writes (reports wait): about 2 minutes at 1,000,000 reports on
the 2-core machine of docs/performance.md. A large install can build it first without the lock,
`CREATE INDEX CONCURRENTLY ix_reports_search_words ON reports USING gin
(to_tsvector('simple'::regconfig, search_text))`, and the migration then finds it made.
"""
from alembic import op


# revision identifiers, used by Alembic.
revision = 'd7f3b9e5a2c8'
down_revision = 'c4e8a2f6b1d9'
branch_labels = None
depends_on = None


def upgrade():
    if op.get_bind().dialect.name != 'postgresql':
        return
    op.execute(
        "CREATE INDEX IF NOT EXISTS ix_reports_search_words ON reports"
        " USING gin (to_tsvector('simple'::regconfig, search_text))"
    )


def downgrade():
    if op.get_bind().dialect.name != 'postgresql':
        return
    op.execute("DROP INDEX ix_reports_search_words")
