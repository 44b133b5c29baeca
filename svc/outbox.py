"""The one claim and record of an outbox's due rows: webhook deliveries (svc.webhooks.delivery),
mails (svc.mail.outbox) and calls to trackers (svc.services.trackers.tracker_calls). Each
writes its rows, chooses which due ones to read and makes the attempt; these two functions take
a row and record what came of it, with the same guards for all three. Jobs run once and never
retried (a reproduction, an export job) are claimed by `claim_queued`.

- A claim is a conditional UPDATE of one row: still pending, still at the attempt count that
  was read, still due now. Two scheduler processes (or a scheduler that took over a lease) can
  read the same row; one UPDATE wins, and the attempt is made once. The claimed row's next
  attempt moves to the end of its lease (the attempt's time, and the scheduler's lease), so
  that a process killed mid-attempt leaves a row that is due again when its lease ends.
- An outcome is recorded only while the row is still that attempt's: pending, the same attempt
  count (a redelivery starts the count again; an attempt that outlived its lease was claimed
  again by another).
- When again, if at all: svc.retry.next_attempt, from the outbox's delays.

Every function takes `now`, so that tests set the clock rather than wait.
"""

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from sqlalchemy import Select, select, update

from svc import database
from svc.config import setting
from svc.extensions import db
from svc.models.base import QUEUED, RUNNING
from svc.models.webhooks import FAILED, PENDING, SUCCEEDED
from svc.retry import next_attempt


def claim_due(
    model,
    due: Select,
    *,
    now: datetime,
    attempt_seconds: float,
    limit: int,
    admit: Callable[[tuple], bool] = lambda row: True,
) -> list[tuple]:
    """Claim up to `limit` of the rows `due` selects as (id, attempts, *more), in its order,
    skipping those `admit` refuses (it sees each row before its claim, and may count it):
    [(id, the number of the attempt now to be made, *more)]."""
    # A claim outlives its attempt's time limit by the scheduler's lease: by then a scheduler
    # that died mid-attempt has been taken over, and the one holding the lease never claims
    # again an attempt still under way in it (the callers' `running`).
    lease_until = now + timedelta(seconds=attempt_seconds + setting("SVC_SCHEDULER_LEASE_SECONDS"))
    # The read takes no write lock: on SQLite a writer's BEGIN IMMEDIATE would queue behind every
    # request's, and hold them up in turn, every second. It reads, then claims row by row.
    database.begin_read_only(db.session())
    candidates = db.session.execute(due).all()
    db.session.commit()
    claimed = []
    for row_id, attempts, *more in candidates:
        if len(claimed) == limit or not admit((row_id, attempts, *more)):
            continue
        taken = db.session.execute(
            update(model)
            .where(
                model.id == row_id,
                model.status == PENDING,
                model.attempts == attempts,
                model.next_attempt_at <= now,
            )
            .values(attempts=attempts + 1, next_attempt_at=lease_until)
            .execution_options(synchronize_session=False)
        ).rowcount
        if taken:
            claimed.append((row_id, attempts + 1, *more))
    db.session.commit()
    return claimed


def settled(
    now: datetime,
    attempt_number: int,
    delays: Sequence[float],
    *,
    succeeded: bool,
    final: bool = False,
    at_least: float = 0,
    done: str = SUCCEEDED,
) -> dict:
    """The status an attempt leaves its row in, and when it is due again: `done`; pending
    until the next delay (at least `at_least`, a 429's Retry-After); or failed, its retries
    spent or `final` (what no retry can mend)."""
    if succeeded:
        return {"status": done, "next_attempt_at": None}
    again = next_attempt(now, attempt_number, delays, final, at_least)
    if again is not None:
        return {"next_attempt_at": again}
    return {"status": FAILED, "next_attempt_at": None}


def record_outcome(model, row_id, attempt_number: int, values: dict) -> bool:
    """Write `values` on the row if it is still this attempt's (pending, the same attempt
    count), and commit. Whether it was."""
    written = db.session.execute(
        update(model)
        .where(
            model.id == row_id,
            model.attempts == attempt_number,
            model.status == PENDING,
        )
        .values(**values)
        .execution_options(synchronize_session=False)
    ).rowcount
    db.session.commit()
    return bool(written)


# --- jobs: rows run once, never retried (reproductions, export jobs) ----------------------------


def claim_queued(model, *, now: datetime, lease: timedelta):
    """The oldest queued row of a job table (svc.models.Reproduction, ExportJob: `status`,
    `created_at`, `started_at`, `lease_until`), taken by this process with a conditional
    UPDATE, so that of two schedulers one takes it: its id, or None when none waits."""
    candidates = db.session.scalars(
        select(model.id).where(model.status == QUEUED).order_by(model.created_at).limit(5)
    ).all()
    db.session.commit()
    for row_id in candidates:
        taken = db.session.execute(
            update(model)
            .where(model.id == row_id, model.status == QUEUED)
            .values(status=RUNNING, started_at=now, lease_until=now + lease)
            .execution_options(synchronize_session=False)
        ).rowcount
        db.session.commit()
        if taken:
            return row_id
    return None
