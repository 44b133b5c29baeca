"""Column types shared by the models."""

import uuid
from datetime import UTC, datetime

from sqlalchemy import DateTime
from sqlalchemy.types import TypeDecorator


def utcnow() -> datetime:
    """The current time, timezone-aware UTC. Stored with microseconds, so that rows created in
    the same millisecond still sort by age; the API shows milliseconds."""
    return datetime.now(UTC)


def same_as_created(context) -> datetime:
    """Column default for updated_at: exactly the row's created_at."""
    return context.get_current_parameters()["created_at"]


def new_id() -> uuid.UUID:
    return uuid.uuid4()


class UTCDateTime(TypeDecorator):
    """Stores naive UTC (SQLite keeps no zone) and always hands back aware UTC datetimes."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value, dialect):
        return None if value is None else value.replace(tzinfo=UTC)


# The states of a job run once by the scheduler (a reproduction, an export job; svc.outbox
# claim_queued): waiting, taken, finished.
QUEUED = "queued"
RUNNING = "running"
DONE = "done"
