"""The scheduler process: APScheduler, with its job store in the service's own database.

APScheduler 3 supports exactly one scheduler per job store, so web workers never start one, and
of any number of scheduler processes (one per host, say) one is active: the holder of the lease
(svc.services.instance.leadership); the others stand by and take over when it stops renewing it.
`make run` starts this process beside gunicorn (see Procfile; SVC_ROLE picks one of the two). Job
functions are module-level (the job store refers to them by name), run in an app context, and
each first checks that this process still holds the lease.
"""

import contextlib
import functools
import gc
import logging
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers import SchedulerNotRunningError
from apscheduler.schedulers.blocking import BlockingScheduler
from flask import Flask
from sqlalchemy import inspect, select
from sqlalchemy.exc import OperationalError

from svc import database, rate_limits
from svc.auth import oidc
from svc.extensions import db
from svc.mail import outbox
from svc.models import JOBSTORE_TABLE
from svc.services.grouping import signatures
from svc.services.identity import password_resets
from svc.services.instance import audit_log, leadership
from svc.services.reporters import reporter_mails
from svc.services.reporting import export_jobs, fanout, retention, screenshots
from svc.services.reproductions import runs
from svc.services.team import notifications
from svc.services.trackers import tracker_calls
from svc.webhooks import delivery

log = logging.getLogger(__name__)
HOURLY_JOBS_INTERVAL_HOURS = 1
DELIVERY_POLL_SECONDS = 1
# How long an outbox's tick goes on claiming as attempts end: half the poll interval, so that a
# tick that started late still ends before its next poll, which APScheduler would otherwise skip
# with a warning (one instance of a job at a time).
OUTBOX_TICK_SECONDS = 0.5 * DELIVERY_POLL_SECONDS
CLAIM_GAP_SECONDS = 0.05
CHECKPOINT_SECONDS = 1
# A store that was down when objects were to go is asked again this often.
DELETION_RETRY_SECONDS = 60
BACKGROUND_POLL_SECONDS = 2
DELIVERY_THREADS = 8
MAIL_THREADS = 2
TRACKER_THREADS = 2
RESTART_SECONDS = 1
LEASE_POLL_SECONDS = 1  # how often a standby looks at the lease

_app: Flask | None = None
_lease: leadership.Lease | None = None


def fenced(job):
    """Run `job` in the app's context, and only while this process holds the lease: one that
    was paused (SIGSTOP, a frozen VM) while another took over does nothing when it wakes."""

    @functools.wraps(job)
    def run_if_active() -> None:
        lease = _lease
        if lease is None:
            return
        with _app.app_context():
            if not leadership.holds(lease):
                log.warning("scheduler: the lease is another's now; %s not run", job.__name__)
                return
            job()

    return run_if_active


class OutboxRunner:
    """The attempts of one outbox (webhook deliveries, mails, calls to trackers) on a small
    thread pool, so that one slow receiver does not hold up the others. It claims (svc.outbox,
    through each outbox's claim_due) no more than it has free threads, never one whose attempt
    is still under way (for webhooks, also at most two of one project at a time:
    svc.webhooks.delivery.claim_due); each attempt ends at its deadline."""

    def __init__(self, app: Flask, name: str, claim, attempt, threads: int):
        self._app = app
        self._name = name
        self._claim = claim  # (limit, running=...) -> [(id, attempt number, group)]
        self._attempt = attempt  # (id, attempt number)
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=name)
        self._threads = threads
        self._running: dict = {}  # id -> group, of the attempts under way
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # an attempt ended, or rows were made
        self._changes = 0

    def tick(self, seconds: float = 0.0, active=lambda: True) -> None:
        """Claim what the free threads can take; then, for up to `seconds`, claim again each
        time an attempt ends or new rows are made (wake), while `active()`. Claimed once a
        poll, a burst of one project's deliveries (two at a time) went out two a second, and
        a new one waited for the next poll (docs/performance.md, "A project's webhooks, two a
        second")."""
        deadline = time.monotonic() + seconds
        while True:
            with self._lock:
                slots = self._threads - len(self._running)
                running = dict(self._running)
                seen = self._changes
            claimed_at = time.monotonic()
            claimed = self._claim(slots, running=running) if slots else []  # in the job's context
            with self._lock:
                self._running.update((item_id, group) for item_id, _, group in claimed)
            for item_id, attempt_number, _group in claimed:
                self._pool.submit(self._run, item_id, attempt_number)
            with self._lock:
                changed = self._changed.wait_for(
                    lambda seen=seen: self._changes != seen, timeout=deadline - time.monotonic()
                )
            if not changed or not active():
                return
            # A claim reads every due row (a webhook's ranks each project's): one at most every
            # CLAIM_GAP_SECONDS, what ended meanwhile claimed for together.
            time.sleep(max(0.0, min(claimed_at + CLAIM_GAP_SECONDS, deadline) - time.monotonic()))

    def wake(self) -> None:
        """Something to claim may be there (an attempt ended, or the fan-out made rows): a
        waiting tick claims now."""
        with self._lock:
            self._changes += 1
            self._changed.notify_all()

    def _run(self, item_id, attempt_number) -> None:
        try:
            with self._app.app_context():
                self._attempt(item_id, attempt_number)
        except Exception:
            log.exception(
                "%s %s attempt %d failed unexpectedly", self._name, item_id, attempt_number
            )
        finally:
            with self._lock:
                del self._running[item_id]
            self.wake()

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True)


class BackgroundRuns:
    """Long jobs (a reproduction's browser, an export of millions of reports) on a thread of
    their own: the job looks every few seconds and starts `run_next` until it finds nothing,
    when none is under way in this process. Each claims its row with a conditional UPDATE; the
    host's slots of reproductions (runs.host_slot) hold across its processes."""

    def __init__(self, app: Flask, name: str, run_next):
        self._app = app
        self._name = name
        self._run_next = run_next
        self._thread: threading.Thread | None = None

    def tick(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            with self._app.app_context():
                while self._run_next() is not None:
                    pass
        except Exception:
            log.exception("%s: failed unexpectedly", self._name)


def _still_active() -> bool:
    """Whether this process holds the lease still (a tick that claims again as attempts end
    looks before each claim, as a fenced job does before it starts)."""
    lease = _lease
    return lease is not None and leadership.holds(lease)


_webhooks: OutboxRunner | None = None
_mails: OutboxRunner | None = None
_trackers: OutboxRunner | None = None
_reproductions: BackgroundRuns | None = None
_exports: BackgroundRuns | None = None


@fenced
def deliver_webhooks() -> None:
    _webhooks.tick(OUTBOX_TICK_SECONDS, _still_active)


@fenced
def call_trackers() -> None:
    _trackers.tick(OUTBOX_TICK_SECONDS, _still_active)


@fenced
def run_reproductions() -> None:
    _reproductions.tick()


@fenced
def write_exports() -> None:
    _exports.tick()


@fenced
def forget_exports() -> None:
    removed = export_jobs.forget_expired()
    if removed:
        log.info("exports: removed %d expired export(s)", removed)


@fenced
def send_mails() -> None:
    _mails.tick(OUTBOX_TICK_SECONDS, _still_active)


@fenced
def make_reset_links() -> None:
    """The reset links asked for since ("Forgot password?"), made into mails: the request
    only records the address, so that it answers in the same time for any (docs/security.md)."""
    password_resets.handle_requests()


@fenced
def fan_out() -> None:
    if fanout.run():
        for runner in (_webhooks, _trackers, _mails):  # what the events made goes now
            runner.wake()


@fenced
def send_notifications() -> None:
    notifications.send_due()


@fenced
def forget_notifications() -> None:
    notifications.forget_mailed()


@fenced
def sweep_uploads() -> None:
    removed = screenshots.sweep()
    if removed:
        log.info("sweep: removed %d orphaned screenshot(s)", removed)


@fenced
def apply_retention() -> None:
    removed = retention.apply_all()
    for project_id, count in removed.items():
        log.info("retention: deleted %d report(s) of project %s", count, project_id)


@fenced
def prune_audit_log() -> None:
    removed = audit_log.prune()
    if removed:
        log.info(
            "audit log: removed %d entr%s past SVC_AUDIT_DAYS",
            removed,
            "y" if removed == 1 else "ies",
        )


@fenced
def delete_objects() -> None:
    screenshots.retry_deletions()


@fenced
def forget_mails() -> None:
    removed = outbox.forget_done()
    if removed:
        log.info("mail log: removed %d mail(s) past SVC_MAIL_LOG_DAYS", removed)
    reporter_mails.forget_counted()


@fenced
def sign_reports() -> None:
    signed = signatures.backfill()
    if signed:
        log.info("signatures: signed %d report(s) filed before signatures were", signed)


@fenced
def checkpoint_database() -> None:
    database.checkpoint_sqlite_log()


@fenced
def refresh_statistics() -> None:
    database.refresh_planner_statistics()


@fenced
def forget_rate_limits() -> None:
    rate_limits.forget_expired()


def build_scheduler(app: Flask) -> BlockingScheduler:
    # The app's own engine, so that the job store's transactions follow svc.database's rules.
    with app.app_context():
        jobstore = SQLAlchemyJobStore(engine=db.engine, tablename=JOBSTORE_TABLE)
    scheduler = BlockingScheduler(
        jobstores={"default": jobstore},
        timezone=UTC,
        # APScheduler's default grace time is 1 s: a run whose time passed while the process was
        # down would be dropped. Run it once, late, instead.
        job_defaults={"misfire_grace_time": None, "coalesce": True, "max_instances": 1},
    )
    # Often: the reports' events are fanned out, the outboxes say what is due, and the jobs
    # only look; SQLite's write-ahead log is copied back here rather than in a request (a
    # no-op on PostgreSQL).
    for job, job_id, seconds in (
        (fan_out, "fan-out", DELIVERY_POLL_SECONDS),
        (deliver_webhooks, "deliver-webhooks", DELIVERY_POLL_SECONDS),
        (call_trackers, "call-trackers", DELIVERY_POLL_SECONDS),
        (send_notifications, "send-notifications", DELIVERY_POLL_SECONDS),
        (make_reset_links, "make-reset-links", DELIVERY_POLL_SECONDS),
        (send_mails, "send-mails", DELIVERY_POLL_SECONDS),
        (checkpoint_database, "checkpoint-database", CHECKPOINT_SECONDS),
        (delete_objects, "delete-objects", DELETION_RETRY_SECONDS),
        (run_reproductions, "run-reproductions", BACKGROUND_POLL_SECONDS),
        (write_exports, "write-exports", BACKGROUND_POLL_SECONDS),
    ):
        scheduler.add_job(job, "interval", seconds=seconds, id=job_id, replace_existing=True)
    # Hourly, and also at every start: a process restarted more often still runs them.
    for job, job_id in (
        (sweep_uploads, "sweep-uploads"),
        (forget_rate_limits, "forget-rate-limits"),
        (forget_notifications, "forget-notifications"),
        (prune_audit_log, "prune-audit-log"),
        (forget_mails, "forget-mails"),
        (forget_exports, "forget-exports"),
        (sign_reports, "sign-reports"),
        (apply_retention, "apply-retention"),
    ):
        scheduler.add_job(
            job,
            "interval",
            hours=HOURLY_JOBS_INTERVAL_HOURS,
            id=job_id,
            replace_existing=True,
            next_run_time=datetime.now(UTC),
        )
    # Hourly on a schedule kept across restarts: at 1,000,000 reports the statistics read the
    # whole file for seconds, and searches took five times as long meanwhile (performance.md).
    # A start runs them only when their hour has come, or where they never ran.
    with app.app_context():
        kept = _next_run_stored(jobstore, "refresh-statistics")
        if kept is not None and not database.has_planner_statistics():
            kept = None
    scheduler.add_job(
        refresh_statistics,
        "interval",
        hours=HOURLY_JOBS_INTERVAL_HOURS,
        id="refresh-statistics",
        replace_existing=True,
        next_run_time=kept or datetime.now(UTC),
    )
    return scheduler


def _next_run_stored(jobstore: SQLAlchemyJobStore, job_id: str) -> datetime | None:
    """When the job store says the job runs next; None on a first start."""
    if not inspect(db.engine).has_table(JOBSTORE_TABLE):
        return None
    database.begin_read_only(db.session())
    jobs = jobstore.jobs_t.c
    stamp = db.session.scalar(select(jobs.next_run_time).where(jobs.id == job_id))
    db.session.commit()
    return None if stamp is None else datetime.fromtimestamp(stamp, UTC)


def _check_configuration(app: Flask) -> None:
    """What only a network call can tell of the settings, said once at start (in a thread: a
    provider that does not answer must not hold the scheduler up)."""
    problem = oidc.configuration_problem(app)
    if problem:
        log.error("configuration error: SVC_OIDC_ISSUER: %s", problem)


def _wait_for_lease(app: Flask, holder: str, stopping: threading.Event):
    """Stand by until this process holds the lease (or is stopped: None)."""
    seconds = app.config["SVC_SCHEDULER_LEASE_SECONDS"]
    active = None  # who this standby last said holds the lease
    said_at = 0.0  # when this standby last renewed its own row
    while not stopping.is_set():
        try:
            with app.app_context():
                lease = leadership.try_acquire(holder, seconds)
                if lease is not None:
                    leadership.stop_standing_by(holder)
                    return lease
                # The row first, then the line: whoever reads the line finds the row.
                if time.monotonic() - said_at >= seconds / 3:
                    leadership.stand_by(holder, seconds)
                    said_at = time.monotonic()
                if (now := leadership.current()["holder"]) != active:
                    # Said once per holder: a standby is seen in the log, not once a second.
                    active = now
                    log.info("scheduler: standing by; %s is active", now or "no one")
        except OperationalError as exc:
            log.warning("scheduler: could not read the lease (%s)", exc)
        stopping.wait(LEASE_POLL_SECONDS)
    with app.app_context(), contextlib.suppress(OperationalError):
        leadership.stop_standing_by(holder)
    return None


def _keep_lease(app: Flask, lease, scheduler, done: threading.Event) -> None:
    """Renew the lease every third of its length until `done`; a renewal refused means another
    process has taken over, and this one's jobs stop."""
    seconds = app.config["SVC_SCHEDULER_LEASE_SECONDS"]
    while not done.wait(seconds / 3):
        try:
            with app.app_context():
                kept = leadership.renew(lease, seconds)
        except OperationalError as exc:
            log.warning("scheduler: could not renew the lease (%s)", exc)
            continue
        if not kept:
            log.warning("scheduler: another process took the lease over; standing by")
            with contextlib.suppress(SchedulerNotRunningError):
                scheduler.shutdown(wait=False)
            return


def main(app: Flask) -> None:
    """The scheduler process's logging, then `run`: `flask --app svc scheduler`, and the
    Procfile's `python -OO -m svc.run_scheduler`."""
    logging.basicConfig(level=logging.INFO, format="[%(asctime)s] [scheduler] %(message)s")
    # APScheduler logs two lines per run of each job, several jobs a second: a job says what it
    # did itself, and APScheduler still logs a job that failed or missed its time (WARNING+).
    logging.getLogger("apscheduler.executors").setLevel(logging.WARNING)
    # "Adding job tentatively" a line a job at every start: svc says "scheduler: active".
    logging.getLogger("apscheduler.scheduler").setLevel(logging.WARNING)
    run(app)


def run(app: Flask) -> None:
    """Run a scheduler in the foreground until SIGTERM or SIGINT: standing by until it holds
    the lease, then running the jobs while it keeps it."""
    global _app, _webhooks, _mails, _trackers, _reproductions, _exports, _lease
    _app = app
    _reproductions = BackgroundRuns(app, "reproduction", runs.run_next)
    _exports = BackgroundRuns(app, "export", export_jobs.run_next)
    _webhooks = OutboxRunner(
        app, "webhook", delivery.claim_due, delivery.attempt, threads=DELIVERY_THREADS
    )
    _mails = OutboxRunner(app, "mail", outbox.claim_due, outbox.attempt, threads=MAIL_THREADS)
    _trackers = OutboxRunner(
        app, "tracker", tracker_calls.claim_due, tracker_calls.attempt, threads=TRACKER_THREADS
    )
    current = {}
    stopping = threading.Event()

    left = threading.Event()  # the main loop is done: nothing more to shut down

    def shut_down() -> None:
        """Until the running scheduler has stopped (one that is not running yet is being
        started: it is stopped once it runs, or the main loop sees `stopping` first)."""
        while not left.is_set():
            try:
                current["scheduler"].shutdown(wait=True)
                return
            except SchedulerNotRunningError:
                time.sleep(0.05)

    def stop(signum, _frame):
        log.info("scheduler: signal %d, shutting down", signum)
        stopping.set()
        # Not in the handler itself: it runs on the main thread, which may be inside the
        # executor's submit, holding the lock that the executor's shutdown takes (a stop that
        # hung for ever, one start in three under load). A thread of its own waits for that.
        if "scheduler" in current and "stopper" not in current:
            current["stopper"] = threading.Thread(target=shut_down, name="shutdown")
            current["stopper"].start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # What the process loaded (the app, its tables, its routes) lives as long as it: frozen, the
    # garbage collections that each batch's parsed logs set off never walk it again (they were
    # a quarter of the scheduler's CPU under load, docs/performance.md).
    gc.freeze()
    holder = leadership.new_holder()
    log.info("scheduler: started as %s", holder)
    threading.Thread(target=_check_configuration, args=(app,), daemon=True).start()
    held = None
    while not stopping.is_set():
        held = _wait_for_lease(app, holder, stopping)
        if held is None:
            break
        log.info("scheduler: active (lease epoch %d)", held.epoch)
        _lease, done = held, threading.Event()
        try:
            current["scheduler"] = build_scheduler(app)
            if stopping.is_set():
                # The signal came while the jobs were being written (a stop a second after a
                # start): the scheduler was not running yet, so `stop` could not shut it down.
                break
            threading.Thread(
                target=_keep_lease, args=(app, held, current["scheduler"], done), daemon=True
            ).start()
            current["scheduler"].start()  # until a signal, or a lost lease, shuts it down
        except OperationalError as exc:
            # APScheduler's own loop writes the job store; a database that stays locked past
            # the busy timeout (SQLite under a long write) would end the process, and with it
            # `make run`. Start a new loop instead: the jobs live in the database.
            log.warning("scheduler: the job store could not be written (%s); starting again", exc)
            time.sleep(RESTART_SECONDS)
        finally:
            done.set()
            _lease = None
    left.set()  # no scheduler runs any more; one being shut down finishes its jobs first:
    if "stopper" in current:
        current["stopper"].join()  # they end before the lease goes
    if held is not None:
        with app.app_context(), contextlib.suppress(OperationalError):
            leadership.release(held)  # a standby takes over now, not a lease later
    _webhooks.shutdown()
    _mails.shutdown()
    _trackers.shutdown()
    log.info("scheduler: stopped")
