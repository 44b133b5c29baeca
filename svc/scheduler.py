"""The one scheduler process: APScheduler, with its job store in the service's own database.

APScheduler 3 supports exactly one scheduler per job store, so web workers never start one:
`make run` starts this process beside gunicorn (see Procfile) and stops it with it. Job
functions are module-level (the job store refers to them by name) and run in an app context.
"""

import contextlib
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
from sqlalchemy.exc import OperationalError

from svc import database, rate_limits
from svc.extensions import db
from svc.mail import outbox
from svc.models import JOBSTORE_TABLE
from svc.services import (
    audit_log,
    fanout,
    integrations,
    notifications,
    password_resets,
    screenshots,
)
from svc.webhooks import delivery

log = logging.getLogger(__name__)
HOURLY_JOBS_INTERVAL_HOURS = 1
DELIVERY_POLL_SECONDS = 1
CHECKPOINT_SECONDS = 1
DELIVERY_THREADS = 8
MAIL_THREADS = 2
TRACKER_THREADS = 2
RESTART_SECONDS = 1

_app: Flask | None = None


class OutboxRunner:
    """The attempts of one outbox (webhook deliveries, mails) on a small thread pool, so that
    one slow receiver does not hold up the others. It claims no more than it has free threads,
    never one whose attempt is still under way (for webhooks, also at most two of one project
    at a time: svc.webhooks.delivery.claim_due); each attempt ends at its deadline."""

    def __init__(self, app: Flask, name: str, claim, attempt, threads: int):
        self._app = app
        self._name = name
        self._claim = claim  # (limit, running=...) -> [(id, attempt number, group)]
        self._attempt = attempt  # (id, attempt number)
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=name)
        self._threads = threads
        self._running: dict = {}  # id -> group, of the attempts under way
        self._lock = threading.Lock()

    def tick(self) -> None:
        with self._lock:
            slots = self._threads - len(self._running)
            running = dict(self._running)
        if not slots:
            return
        with self._app.app_context():
            claimed = self._claim(slots, running=running)
        with self._lock:
            self._running.update((item_id, group) for item_id, _, group in claimed)
        for item_id, attempt_number, _group in claimed:
            self._pool.submit(self._run, item_id, attempt_number)

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

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True)


_webhooks: OutboxRunner | None = None
_mails: OutboxRunner | None = None
_trackers: OutboxRunner | None = None


def deliver_webhooks() -> None:
    _webhooks.tick()


def call_trackers() -> None:
    _trackers.tick()


def send_mails() -> None:
    _mails.tick()


def claim_mails(limit: int, running=()) -> list[tuple]:
    """The mail outbox's claim, after turning the reset links asked for since into mails, so
    that they go in the same tick."""
    password_resets.handle_requests()
    return outbox.claim_due(limit, running=running)


def fan_out() -> None:
    with _app.app_context():
        fanout.run()


def send_notifications() -> None:
    with _app.app_context():
        notifications.send_due()


def forget_notifications() -> None:
    with _app.app_context():
        notifications.forget_mailed()


def sweep_uploads() -> None:
    with _app.app_context():
        removed = screenshots.sweep()
    if removed:
        log.info("sweep: removed %d orphaned screenshot(s)", removed)


def prune_audit_log() -> None:
    with _app.app_context():
        removed = audit_log.prune()
    if removed:
        log.info(
            "audit log: removed %d entr%s past SVC_AUDIT_DAYS",
            removed,
            "y" if removed == 1 else "ies",
        )


def checkpoint_database() -> None:
    with _app.app_context():
        database.checkpoint_sqlite_log()


def refresh_statistics() -> None:
    with _app.app_context():
        database.refresh_planner_statistics()


def forget_rate_limits() -> None:
    with _app.app_context():
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
        (send_mails, "send-mails", DELIVERY_POLL_SECONDS),
        (checkpoint_database, "checkpoint-database", CHECKPOINT_SECONDS),
    ):
        scheduler.add_job(job, "interval", seconds=seconds, id=job_id, replace_existing=True)
    # Hourly, and also at every start: a process restarted more often still runs them.
    for job, job_id in (
        (sweep_uploads, "sweep-uploads"),
        (refresh_statistics, "refresh-statistics"),
        (forget_rate_limits, "forget-rate-limits"),
        (forget_notifications, "forget-notifications"),
        (prune_audit_log, "prune-audit-log"),
    ):
        scheduler.add_job(
            job,
            "interval",
            hours=HOURLY_JOBS_INTERVAL_HOURS,
            id=job_id,
            replace_existing=True,
            next_run_time=datetime.now(UTC),
        )
    return scheduler


def run(app: Flask) -> None:
    """Run the scheduler in the foreground until SIGTERM or SIGINT."""
    global _app, _webhooks, _mails, _trackers
    _app = app
    _webhooks = OutboxRunner(
        app, "webhook", delivery.claim_due, delivery.attempt, threads=DELIVERY_THREADS
    )
    _mails = OutboxRunner(app, "mail", claim_mails, outbox.attempt, threads=MAIL_THREADS)
    _trackers = OutboxRunner(
        app, "tracker", integrations.claim_due, integrations.attempt, threads=TRACKER_THREADS
    )
    current = {}
    stopping = threading.Event()

    def stop(signum, _frame):
        log.info("scheduler: signal %d, shutting down", signum)
        stopping.set()
        if "scheduler" in current:
            with contextlib.suppress(SchedulerNotRunningError):
                current["scheduler"].shutdown(wait=True)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    log.info("scheduler: started")
    while not stopping.is_set():
        try:
            current["scheduler"] = build_scheduler(app)
            current["scheduler"].start()
        except OperationalError as exc:
            # APScheduler's own loop writes the job store; a database that stays locked past
            # the busy timeout (SQLite under a long write) would end the process, and with it
            # `make run`. Start a new loop instead: the jobs live in the database.
            log.warning("scheduler: the job store could not be written (%s); starting again", exc)
            time.sleep(RESTART_SECONDS)
    _webhooks.shutdown()
    _mails.shutdown()
    _trackers.shutdown()
    log.info("scheduler: stopped")
