"""PostgreSQL searches a lower-cased copy of title and description

Revision ID: e2b7c4a1f9d3
Revises: b4f81d2c6e07
Create Date: 2026-11-23 15:30:00

`reports.search_text` is lower(title || E'\\n' || description), a stored generated column with
one pg_trgm GIN index, searched with `LIKE lower('%term%')`. That is what `ILIKE` on title and
description answered (in a UTF-8 database ILIKE is lower(text) LIKE lower(pattern), and a term
holds no white space, so no match spans the line break), without lowering each candidate's text
at every search. The two trigram indexes on title and description go. SQLite is left alone: its
FTS5 table serves it.

Adding the column rewrites `reports` under an exclusive lock: about 4 minutes, and as long again
for the index, at 1,000,000 reports on the 2-core machine of docs/performance.md.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'e2b7c4a1f9d3'
down_revision = 'b4f81d2c6e07'
branch_labels = None
depends_on = None

OLD_INDEXES = {
    "ix_reports_title_trgm": "title",
    "ix_reports_description_trgm": "description",
}
ADD_COLUMN = (
    "ALTER TABLE reports ADD COLUMN search_text TEXT"
    " GENERATED ALWAYS AS (lower(title || E'\\n' || description)) STORED"
)


def _trigram_ops() -> str:
    # pg_trgm may live in another schema than ours (it is installed once per database).
    schema = op.get_bind().scalar(sa.text(
        "SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_trgm'"
    ))
    return f"{schema}.gin_trgm_ops"


def upgrade():
    if op.get_bind().dialect.name != 'postgresql':
        return
    # The old indexes go first, so that the rewrite does not rebuild them.
    for name in OLD_INDEXES:
        op.execute(f"DROP INDEX {name}")
    op.execute(ADD_COLUMN)
    op.execute(
        f"CREATE INDEX ix_reports_search_text_trgm ON reports USING gin (search_text {_trigram_ops()})"
    )


def downgrade():
    if op.get_bind().dialect.name != 'postgresql':
        return
    op.execute("DROP INDEX ix_reports_search_text_trgm")
    op.execute("ALTER TABLE reports DROP COLUMN search_text")
    ops = _trigram_ops()
    for name, column in OLD_INDEXES.items():
        op.execute(f"CREATE INDEX {name} ON reports USING gin ({column} {ops})")
