"""The one scheduler process: APScheduler, with its job store in the service's own database.

APScheduler 3 supports exactly one scheduler per job store, so web workers never start one:
`make run` starts this process beside gunicorn (see Procfile) and stops it with it. Job
functions are module-level (the job store refers to them by name) and run in an app context.
"""

import logging
import signal
from datetime import UTC, datetime

from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.blocking import BlockingScheduler
from flask import Flask

from svc.services import screenshots

log = logging.getLogger(__name__)
JOBSTORE_TABLE = "apscheduler_jobs"
SWEEP_INTERVAL_HOURS = 1

_app: Flask | None = None


def sweep_uploads() -> None:
    with _app.app_context():
        removed = screenshots.sweep()
    log.info("sweep: removed %d orphaned screenshot(s)", removed)


def build_scheduler(app: Flask) -> BlockingScheduler:
    jobstore = SQLAlchemyJobStore(
        url=app.config["SQLALCHEMY_DATABASE_URI"], tablename=JOBSTORE_TABLE
    )
    scheduler = BlockingScheduler(
        jobstores={"default": jobstore},
        timezone=UTC,
        # APScheduler's default grace time is 1 s: a run whose time passed while the process was
        # down would be dropped. Run it once, late, instead.
        job_defaults={"misfire_grace_time": None, "coalesce": True, "max_instances": 1},
    )
    # Also at every start: a process restarted more often than hourly still sweeps.
    scheduler.add_job(
        sweep_uploads,
        "interval",
        hours=SWEEP_INTERVAL_HOURS,
        id="sweep-uploads",
        replace_existing=True,
        next_run_time=datetime.now(UTC),
    )
    return scheduler


def run(app: Flask) -> None:
    """Run the scheduler in the foreground until SIGTERM or SIGINT."""
    global _app
    _app = app
    scheduler = build_scheduler(app)

    def stop(signum, _frame):
        log.info("scheduler: signal %d, shutting down", signum)
        scheduler.shutdown(wait=True)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    log.info("scheduler: started")
    scheduler.start()
    log.info("scheduler: stopped")
