from sqlalchemy import Float, String
from sqlalchemy.orm import Mapped, mapped_column

from svc.extensions import db


class RateLimitCounter(db.Model):
    """One fixed window of one rate limit (svc.rate_limits): every worker and instance counts
    in the same row, so a limit holds for the whole installation. On PostgreSQL; a SQLite
    installation keeps the same table in a file of its own beside the database, and leaves
    this one empty."""

    __tablename__ = "rate_limit_counters"

    bucket: Mapped[str] = mapped_column(String(255), primary_key=True)
    hits: Mapped[int]
    # Seconds since the epoch: compared with the time of the worker that counts.
    expires_at: Mapped[float] = mapped_column(Float, index=True)
