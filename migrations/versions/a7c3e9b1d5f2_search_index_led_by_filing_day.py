"""PostgreSQL's search index led by the filing day: a count in the newest reports (issue 73)

Revision ID: a7c3e9b1d5f2
Revises: f1a3c5e7b9d2
Create Date: 2026-12-02 13:00:00.000000

`ix_reports_search_text_trgm` becomes a GIN index of the filing day (UTC) and the search text,
`(date_trunc('day', created_at), search_text gin_trgm_ops)`, which needs btree_gin (a trusted
extension of PostgreSQL's contrib, as pg_trgm is). A search then counts its first matches
among the newest days' reports alone (svc.services.reporting.search, window_pays): a range
of days is a range of the index's entries, and the trigrams' posting lists are skipped to their
reports, where a count over the whole table built a bitmap of every report holding the word.
The day, not the time: no other index can answer a bound on it, so the planner cannot take the
index of filing times and read every report of the window instead. Searches without such a
bound read the index as before.

The index is built again, and writes to `reports` wait while it builds: 59.5 minutes at
10,000,000 reports on the 2-core machine of docs/performance.md (other work beside it; 37 for
the index it replaces, alone), 285 s at 1,000,000. SQLite is left alone: its FTS5 table serves
it.
"""
from alembic import op
import sqlalchemy as sa

# revision identifiers, used by Alembic.
revision = 'a7c3e9b1d5f2'
down_revision = 'f1a3c5e7b9d2'
branch_labels = None
depends_on = None

INDEX = "ix_reports_search_text_trgm"


def _trigram_schema() -> str:
    # pg_trgm may live in another schema than ours (it is installed once per database).
    return op.get_bind().scalar(sa.text(
        "SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_trgm'"
    ))


def _build(columns: str) -> None:
    op.execute(f"DROP INDEX {INDEX}")
    op.execute(f"CREATE INDEX {INDEX} ON reports USING gin ({columns})")


def upgrade():
    if op.get_bind().dialect.name != 'postgresql':
        return
    # Beside pg_trgm, not in the first schema of the search path: that may be one of several
    # installations' (or a benchmark's), and dropping it would drop the extension.
    # btree_gin's operator classes are the types' defaults, so they need no schema's name.
    schema = _trigram_schema()
    op.execute(f"CREATE EXTENSION IF NOT EXISTS btree_gin SCHEMA {schema}")
    _build(f"(date_trunc('day', created_at)), search_text {schema}.gin_trgm_ops")


def downgrade():
    if op.get_bind().dialect.name != 'postgresql':
        return
    _build(f"search_text {_trigram_schema()}.gin_trgm_ops")
