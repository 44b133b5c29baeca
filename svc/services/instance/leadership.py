"""One active scheduler among any number (docs/deployment.md, "Schedulers"): a lease row in the
database, taken when it has expired, renewed every few seconds by its holder, and fenced by an
epoch that goes up with every new holder.

Why a row, not a PostgreSQL advisory lock: it works the same on SQLite, it survives a pooled
connection being replaced (an advisory lock belongs to one connection: a reconnect after a
database restart would silently drop it while the old holder went on), its holder and times
can be shown (`GET /admin/health`), and a paused process cannot go on acting on it: every job
asks `holds()` first, which a takeover has made false. The hosts' clocks are compared through
the row, so they must agree to well under a lease (NTP)."""

import os
import socket
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, or_, select, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from svc import database
from svc.extensions import db
from svc.models import SchedulerLease
from svc.models.base import utcnow

NAME = "scheduler"
# A standby's row of its own, beside the lease: it says the process is there (/admin/health).
STANDBY = "standby:"


@dataclass(frozen=True)
class Lease:
    holder: str
    epoch: int


def new_holder() -> str:
    """A name for this process: its host and pid, and a random part (a pid is reused)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def try_acquire(holder: str, seconds: float) -> Lease | None:
    """Take the lease if no one holds it or its holder let it expire; None if another holds it.
    A conditional UPDATE: of processes trying at once, one changes the row."""
    now = utcnow()
    row = db.session.get(SchedulerLease, NAME)
    db.session.commit()
    if row is None:
        _ensure_row()
    elif row.expires_at is not None and row.expires_at >= now and row.holder != holder:
        return None  # held by another: a standby's poll only reads
    taken = db.session.execute(
        update(SchedulerLease)
        .where(
            SchedulerLease.name == NAME,
            or_(
                SchedulerLease.expires_at.is_(None),
                SchedulerLease.expires_at < now,
                SchedulerLease.holder == holder,  # this process again, after a restarted loop
            ),
        )
        .values(
            holder=holder,
            epoch=SchedulerLease.epoch + 1,
            since=now,
            renewed_at=now,
            expires_at=now + timedelta(seconds=seconds),
        )
    ).rowcount
    db.session.commit()
    if taken != 1:
        return None
    epoch = db.session.scalar(
        select(SchedulerLease.epoch).where(
            SchedulerLease.name == NAME, SchedulerLease.holder == holder
        )
    )
    db.session.commit()
    return Lease(holder, epoch) if epoch is not None else None


def renew(lease: Lease, seconds: float) -> bool:
    """Extend the lease; False when another process has taken it since (this one must stop).
    A holder that was paused past its expiry but not overtaken goes on: nothing acted for it."""
    now = utcnow()
    renewed = db.session.execute(
        update(SchedulerLease)
        .where(*_held_by(lease))
        .values(renewed_at=now, expires_at=now + timedelta(seconds=seconds))
    ).rowcount
    db.session.commit()
    return renewed == 1


def holds(lease: Lease) -> bool:
    """Whether `lease` is still the one in force: asked before every job, so it reads without
    the write lock."""
    database.begin_read_only(db.session())
    held = db.session.scalar(
        select(SchedulerLease.name).where(*_held_by(lease), SchedulerLease.expires_at > utcnow())
    )
    db.session.commit()
    return held is not None


def release(lease: Lease) -> None:
    """Give the lease up (a clean stop), so that a standby takes over at once."""
    db.session.execute(
        update(SchedulerLease).where(*_held_by(lease)).values(expires_at=None, holder=None)
    )
    db.session.commit()


def _standby_name(holder: str) -> str:
    """The row's name: its pid and random part (a host's name may be longer than a name is)."""
    _, pid, tag = holder.rsplit(":", 2)
    return f"{STANDBY}{pid}:{tag}"


def stand_by(holder: str, seconds: float) -> None:
    """Say that this process stands by, in a row renewed as the lease is (every third of it),
    so that /admin/health can name it; rows of standbys gone quiet are deleted on the way."""
    now = utcnow()
    until = now + timedelta(seconds=seconds)
    make = sqlite_insert if db.engine.dialect.name == "sqlite" else postgresql_insert
    row = make(SchedulerLease).values(
        name=_standby_name(holder), holder=holder, epoch=0, since=now, renewed_at=now,
        expires_at=until,
    )  # fmt: skip
    db.session.execute(
        row.on_conflict_do_update(
            index_elements=["name"], set_={"renewed_at": now, "expires_at": until}
        )
    )
    db.session.execute(
        delete(SchedulerLease).where(
            SchedulerLease.name.startswith(STANDBY), SchedulerLease.expires_at < now
        )
    )
    db.session.commit()


def stop_standing_by(holder: str) -> None:
    db.session.execute(delete(SchedulerLease).where(SchedulerLease.name == _standby_name(holder)))
    db.session.commit()


def standbys() -> list[dict]:
    """The scheduler processes standing by, oldest first."""
    rows = db.session.scalars(
        select(SchedulerLease)
        .where(SchedulerLease.name.startswith(STANDBY), SchedulerLease.expires_at >= utcnow())
        .order_by(SchedulerLease.since)
    )
    return [
        {"holder": row.holder, "since": row.since, "renewed_at": row.renewed_at} for row in rows
    ]


def current() -> dict[str, str | datetime | None]:
    """Who holds the lease, since when, when it was last renewed (None when no one does)."""
    row = db.session.get(SchedulerLease, NAME)
    if row is None or row.holder is None or row.expires_at is None or row.expires_at < utcnow():
        return {"holder": None, "since": None, "renewed_at": None}
    return {"holder": row.holder, "since": row.since, "renewed_at": row.renewed_at}


def _held_by(lease: Lease):
    return (
        SchedulerLease.name == NAME,
        SchedulerLease.holder == lease.holder,
        SchedulerLease.epoch == lease.epoch,
    )


def _ensure_row() -> None:
    make = sqlite_insert if db.engine.dialect.name == "sqlite" else postgresql_insert
    db.session.execute(make(SchedulerLease).values(name=NAME, epoch=0).on_conflict_do_nothing())
    db.session.commit()
