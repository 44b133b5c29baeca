"""svc/outbox.py, the one claim and record that webhook deliveries, mails and calls to trackers
share: each guard on its own, on a real table (the mail outbox's), with the clock given. Then
the scheduler's runner of an outbox (svc.scheduler.OutboxRunner): when it claims."""

import threading
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from svc import outbox, scheduler
from svc.extensions import db
from svc.models import OutgoingMail
from svc.retry import next_attempt

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


@pytest.fixture
def mail(app):
    """One pending mail, due at NOW, never attempted; its id."""
    with app.app_context():
        row = OutgoingMail(to_address="a@example.com", subject="s", text_body="t", html_body="",
                           status="pending", attempts=0, next_attempt_at=NOW)  # fmt: skip
        db.session.add(row)
        db.session.commit()
        return row.id


def due(now=NOW):
    return select(OutgoingMail.id, OutgoingMail.attempts).where(
        OutgoingMail.status == "pending", OutgoingMail.next_attempt_at <= now
    )


def claim(now=NOW, selected=None, **options) -> list[tuple]:
    options = {"attempt_seconds": 10, "limit": 5, **options}
    return outbox.claim_due(OutgoingMail, selected if selected is not None else due(now), now=now,
                            **options)  # fmt: skip


def row(mail_id) -> OutgoingMail:
    db.session.expire_all()
    return db.session.get(OutgoingMail, mail_id)


def test_a_claim_takes_the_next_attempt_and_a_lease(app, mail):
    """The lease: the attempt's time limit (10 s here), and the scheduler's lease, by which
    a scheduler that went silent has been taken over."""
    lease = timedelta(seconds=10 + app.config["SVC_SCHEDULER_LEASE_SECONDS"])
    with app.app_context():
        assert claim() == [(mail, 1)]
        claimed = row(mail)
        assert claimed.attempts == 1
        assert claimed.next_attempt_at == NOW + lease
        assert claim(now=NOW + lease - timedelta(seconds=1)) == []  # under its lease: not due
        after_lease = NOW + lease
        assert claim(now=after_lease) == [(mail, 2)]  # its sender died: due again


def test_a_claim_takes_no_row_that_is_not_pending(app, mail):
    with app.app_context():
        everything = select(OutgoingMail.id, OutgoingMail.attempts)
        db.session.execute(update(OutgoingMail).values(status="sent"))
        db.session.commit()
        assert claim(selected=everything) == []


def test_a_claim_takes_no_row_that_is_not_due_now(app, mail):
    """The mail outbox's claim did not check this: a row read as due, then moved on by
    another process's claim (its lease), was taken again."""
    with app.app_context():
        everything = select(OutgoingMail.id, OutgoingMail.attempts)
        assert claim(now=NOW - timedelta(seconds=1), selected=everything) == []
        assert row(mail).attempts == 0


def test_a_claim_takes_no_row_another_process_claimed_since_it_was_read(app, mail):
    with app.app_context():

        def meanwhile(_row) -> bool:
            db.session.execute(update(OutgoingMail).values(attempts=OutgoingMail.attempts + 1))
            return True

        assert claim(admit=meanwhile) == []


def test_a_claim_skips_what_admit_refuses_and_stops_at_the_limit(app, mail):
    with app.app_context():
        assert claim(admit=lambda _row: False) == []
        assert claim(limit=0) == []
        assert claim(limit=1) == [(mail, 1)]


def test_an_outcome_is_recorded_only_for_the_attempt_that_holds_the_row(app, mail):
    with app.app_context():
        [(_, attempt)] = claim()
        # A redelivery (the count starts again) or a second claim after the lease moved it on.
        db.session.execute(update(OutgoingMail).values(attempts=attempt + 1))
        db.session.commit()
        assert outbox.record_outcome(OutgoingMail, mail, attempt, {"status": "sent"}) is False
        assert row(mail).status == "pending"
        # Settled by another meanwhile: no longer pending.
        db.session.execute(update(OutgoingMail).values(status="failed"))
        db.session.commit()
        assert outbox.record_outcome(OutgoingMail, mail, attempt + 1, {"status": "sent"}) is False
        assert row(mail).status == "failed"


def test_an_outcome_is_recorded_for_its_own_attempt(app, mail):
    with app.app_context():
        [(_, attempt)] = claim()
        assert outbox.record_outcome(OutgoingMail, mail, attempt, {"status": "sent"}) is True
        assert row(mail).status == "sent"


def test_settled_says_done_again_or_failed():
    delays = (5, 60)
    assert outbox.settled(NOW, 1, delays, succeeded=True, done="sent") == {
        "status": "sent",
        "next_attempt_at": None,
    }
    assert outbox.settled(NOW, 1, delays, succeeded=False) == {
        "next_attempt_at": NOW + timedelta(seconds=5)
    }
    assert outbox.settled(NOW, 2, delays, succeeded=False, at_least=120) == {
        "next_attempt_at": NOW + timedelta(seconds=120)
    }
    spent = {"status": "failed", "next_attempt_at": None}
    assert outbox.settled(NOW, 3, delays, succeeded=False) == spent
    assert outbox.settled(NOW, 1, delays, succeeded=False, final=True) == spent


@pytest.mark.parametrize(
    "attempt, final, at_least, expected",
    [
        (1, False, 0, NOW + timedelta(seconds=5)),  # the first delay after the first attempt
        (3, False, 0, NOW + timedelta(seconds=60)),  # the last delay after the third
        (4, False, 0, None),  # retries spent
        (1, True, 0, None),  # what no retry can mend
        (1, False, 30, NOW + timedelta(seconds=30)),  # a 429's Retry-After, longer than 5 s
        (2, False, 1, NOW + timedelta(seconds=20)),  # a Retry-After shorter than the delay
    ],
)
def test_next_attempt_follows_the_delays_and_retry_after(attempt, final, at_least, expected):
    assert next_attempt(NOW, attempt, (5, 20, 60), final, at_least) == expected


class TwoAtATime:
    """An outbox whose claim admits two attempts under way at most, as a project's webhook
    deliveries are (svc.webhooks.delivery.claim_due)."""

    def __init__(self, rows):
        self.due, self.made, self.lock = list(rows), [], threading.Lock()

    def claim(self, limit, running):
        with self.lock:
            taken = min(limit, 2 - len(running))
            claimed, self.due = self.due[:taken], self.due[taken:]
        return [(row, 1, "one project") for row in claimed]

    def attempt(self, row, _number):
        with self.lock:
            self.made.append(row)


@pytest.fixture
def runner(app):
    made = []

    def make(box):
        made.append(scheduler.OutboxRunner(app, "test", box.claim, box.attempt, threads=8))
        return made[-1]

    yield make
    for each in made:
        each.shutdown()


def test_a_tick_claims_again_as_attempts_end(runner):
    """Two under way at a time: one tick makes all ten attempts, where it made two and left
    the rest to the next polls (two a second)."""
    box = TwoAtATime(range(10))
    runner(box).tick(seconds=30, active=lambda: len(box.made) < 10)
    assert sorted(box.made) == list(range(10))


def test_a_wake_has_a_waiting_tick_claim_what_was_just_made(runner):
    """The fan-out wakes the runners once it made rows: a new delivery goes before the next
    poll."""
    box = TwoAtATime([])
    outboxes = runner(box)

    def made_one():
        with box.lock:
            box.due.append("new")
        outboxes.wake()

    threading.Timer(0.2, made_one).start()
    outboxes.tick(seconds=30, active=lambda: not box.made)
    assert box.made == ["new"]


def test_a_tick_claims_nothing_more_once_the_lease_is_gone(runner):
    box = TwoAtATime(range(10))
    outboxes = runner(box)
    outboxes.tick(seconds=30, active=lambda: False)
    outboxes.shutdown()
    assert len(box.made) == 2  # the first claim's, made before the lease was looked at again
