"""Database housekeeping that the scheduler runs every hour."""

from sqlalchemy import text

from svc.extensions import db

# Rows sampled per index: an approximate ANALYZE, milliseconds at any table size.
ANALYSIS_LIMIT = 1_000


def refresh_planner_statistics() -> None:
    """SQLite gathers no statistics by itself. Without them its planner cannot tell that walking
    the index on created_at for the first page beats fetching every report of the user's projects
    and sorting them, which at a million reports takes seconds. PostgreSQL's autovacuum keeps its
    statistics itself."""
    if db.engine.dialect.name != "sqlite":
        return
    db.session.execute(text(f"PRAGMA analysis_limit={ANALYSIS_LIMIT}"))
    db.session.execute(text("ANALYZE"))
    db.session.commit()
