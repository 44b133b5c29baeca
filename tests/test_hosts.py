"""More than one machine (docs/deployment.md): one active scheduler among several, under a
lease in the database, taken over when its holder dies, fenced when its holder was paused; and
the health an administrator reads."""

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
import requests
from sqlalchemy import delete, inspect, text, update

from harness.client import create_project, csrf, png_bytes, register
from harness.service import ROOT, set_up_project, wait_until
from svc import database
from svc.extensions import db
from svc.models import JOBSTORE_TABLE, SchedulerLease
from svc.models.base import utcnow
from svc.models.webhooks import WebhookDelivery
from svc.scheduler import DELIVERY_THREADS
from svc.services.instance import leadership
from tests.helpers import REPORT, run_in_processes, wait_until_settled

LEASE_SECONDS = 3
FLASK = str(Path(sys.executable).with_name("flask"))


@pytest.fixture(autouse=True)
def no_lease_held(app):
    """Each test starts with no scheduler holding the lease: a scheduler of an earlier test on
    this database may have left it held (seen once in a full run: held when the first test of
    this file began; which test left it is not known)."""
    with app.app_context():
        db.session.execute(delete(SchedulerLease))
        db.session.commit()


def test_one_holder_at_a_time_and_a_takeover_fences_the_old_one(app):
    with app.app_context():
        first = leadership.try_acquire("host-a", 15)
        assert first and leadership.try_acquire("host-b", 15) is None
        assert leadership.renew(first, 15) and leadership.holds(first)
        # host-a is paused past its lease; host-b takes over with the next epoch.
        db.session.execute(update(SchedulerLease).values(expires_at=utcnow() - timedelta(1)))
        db.session.commit()
        second = leadership.try_acquire("host-b", 15)
        assert second and second.epoch == first.epoch + 1
        assert not leadership.holds(first) and not leadership.renew(first, 15)
        assert leadership.current()["holder"] == "host-b"
        # A clean stop hands over at once.
        leadership.release(second)
        assert leadership.current()["holder"] is None
        assert leadership.try_acquire("host-a", 15).epoch == second.epoch + 1


def test_of_processes_racing_for_the_lease_one_wins(app):
    printed = run_in_processes(
        app,
        """
        from svc.services.instance import leadership
        with app.app_context():
            print(leadership.try_acquire(leadership.new_holder(), 30) is not None)
        """,
        count=4,
    )
    assert sorted(line.strip() for line in printed) == ["False", "False", "False", "True"]


class Scheduler:
    """`flask --app svc scheduler` in a process of its own, its output in a file."""

    def __init__(self, env: dict, log: Path):
        self.log = log
        with open(log, "wb") as output:
            self.process = subprocess.Popen(
                [FLASK, "--app", "svc", "scheduler"],
                cwd=ROOT,
                env={**os.environ, **env},
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    @property
    def output(self) -> str:
        return self.log.read_text()

    def signal(self, number: int) -> None:
        os.killpg(self.process.pid, number)

    def pause(self, app) -> None:
        """SIGSTOP, at a moment it holds no write lock on SQLite: a writer paused inside its
        transaction keeps every other writer out (SQLite has one writer, docs/deployment.md),
        which is not the fencing under test. Seen in CI on a loaded machine."""
        for _ in range(200):
            self.signal(signal.SIGSTOP)
            if not writing(app):
                return
            self.signal(signal.SIGCONT)
            time.sleep(0.02)
        raise AssertionError("the scheduler held SQLite's write lock at every try")

    def holds_the_lease(self, app) -> bool:
        with app.app_context():
            holder = leadership.current()["holder"]
        return bool(holder) and holder.split(":")[1] == str(self.process.pid)


def writing(app) -> bool:
    """Whether another connection holds SQLite's write lock now (never on PostgreSQL, where a
    paused transaction holds only its rows)."""
    with app.app_context():
        if db.engine.dialect.name != "sqlite":
            return False
        path = db.engine.url.database
    connection = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        connection.execute("BEGIN IMMEDIATE")
        connection.execute("ROLLBACK")
        return False
    except sqlite3.OperationalError:
        return True
    finally:
        connection.close()


@pytest.fixture
def schedulers(app, certificate_authority, tmp_path):
    env = {
        "SVC_DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"],
        "SVC_INSTANCE_PATH": app.instance_path,
        "SVC_SECRET_KEY": "test",
        "SVC_WEBHOOK_ALLOW_PRIVATE": "true",
        "SVC_WEBHOOK_CA_BUNDLE": certificate_authority[1],
        "SVC_WEBHOOK_TIMEOUT": "2",
        "SVC_WEBHOOK_RETRY_DELAYS": "1,1,1",
        "SVC_SCHEDULER_LEASE_SECONDS": str(LEASE_SECONDS),
    }
    started = []

    def start() -> Scheduler:
        started.append(Scheduler(env, tmp_path / f"scheduler{len(started)}.log"))
        return started[-1]

    yield start
    for scheduler in started:
        if scheduler.process.poll() is None:
            scheduler.signal(signal.SIGCONT)
            scheduler.signal(signal.SIGKILL)
            scheduler.process.wait()


def queue_reports(client, projects: list[dict], count: int, title: str) -> None:
    for number in range(count):
        project = projects[number % len(projects)]
        filed = client.post(
            "/api/v1/reports",
            json={**REPORT, "title": f"{title} {number}"},
            headers={"X-API-Key": project["apiKey"]},
        )
        assert filed.status_code == 201


def ids_received(receiver) -> Counter:
    return Counter(request.headers["webhook-id"] for request in receiver.received)


@pytest.mark.server
def test_a_restart_keeps_the_statistics_hour_unless_the_reports_have_none(app, schedulers):
    # The planner's statistics read the whole database: seconds at 1,000,000 reports, and every
    # search five times slower meanwhile (docs/performance.md). A scheduler started again keeps
    # the hour the last one set; where the reports have no statistics, it refreshes at once.
    owner = app.test_client()
    register(owner)
    queue_reports(owner, [create_project(owner)], 3, "Report")
    with app.app_context():
        if inspect(db.engine).has_table(JOBSTORE_TABLE):  # an earlier test's scheduler's jobs
            db.session.execute(text(f"DELETE FROM {JOBSTORE_TABLE}"))
            db.session.commit()

    def restart(condition, message: str) -> None:
        # sweep-uploads runs at every start, once every job is in the store.
        swept = max(_next_runs(app).get("sweep-uploads", 0), time.time() + 3000)
        scheduler = schedulers()
        wait_until(lambda: _next_runs(app).get("sweep-uploads", 0) > swept, message="the start")
        wait_until(lambda: condition(_next_runs(app)["refresh-statistics"]), message=message)
        scheduler.signal(signal.SIGTERM)
        scheduler.process.wait(timeout=30)

    an_hour_on = time.time() + 3000
    restart(lambda hour: hour > an_hour_on, "statistics at the first start")
    kept = _next_runs(app)["refresh-statistics"]
    restart(lambda hour: hour == kept, "the hour kept")
    with app.app_context():
        if db.engine.dialect.name == "sqlite":
            # As for an index a migration added since the last refresh.
            db.session.execute(text("DELETE FROM sqlite_stat1 WHERE idx = 'ix_reports_created'"))
        else:
            db.session.execute(
                text("SELECT pg_stat_reset_single_table_counters('reports'::regclass)")
            )
        db.session.commit()
    restart(lambda hour: hour > kept, "statistics where the reports had none")
    with app.app_context():
        assert database.has_planner_statistics()


def _next_runs(app) -> dict[str, float]:
    """The job store's next run of each job, as a Unix time (none before a first start)."""
    with app.app_context():
        if not inspect(db.engine).has_table(JOBSTORE_TABLE):
            return {}
        rows = db.session.execute(text(f"SELECT id, next_run_time FROM {JOBSTORE_TABLE}"))
        runs = dict(rows.all())
        db.session.commit()
    return runs


@pytest.mark.server
def test_a_standby_takes_over_a_killed_scheduler_and_a_paused_one_is_fenced(
    make_app, schedulers, receiver
):
    app = make_app(SVC_WEBHOOK_ALLOW_PRIVATE=True)
    owner = app.test_client()
    register(owner)
    # Many projects: a scheduler has at most two deliveries of one project under way.
    projects = [create_project(owner, f"Shop {number}") for number in range(25)]
    for project in projects:
        settings = {"settings": {"webhook_url": receiver.url}}
        owner.patch(f"/api/v1/projects/{project['id']}", json=settings, headers=csrf(owner))
    queue_reports(owner, projects, 200, "Report")

    first = schedulers()
    wait_until(lambda: first.holds_the_lease(app), message="the first scheduler active")
    standby = schedulers()
    # A standby says so, once, naming the active one.
    with app.app_context():
        active = f"scheduler: standing by; {leadership.current()['holder']} is active"
    wait_until(lambda: active in standby.output, message="the standby's line")
    # ... and /admin/health names it.
    standing = owner.get("/api/v1/admin/health").get_json()["scheduler"]["standbys"]
    assert [row["holder"].split(":")[1] for row in standing] == [str(standby.process.pid)]
    wait_until(lambda: len(receiver.received) >= 40, seconds=60, message="40 deliveries")
    first.signal(signal.SIGKILL)
    killed_at = time.monotonic()
    wait_until(lambda: standby.holds_the_lease(app), seconds=30, message="the takeover")
    takeover = time.monotonic() - killed_at
    assert takeover <= LEASE_SECONDS + 5, takeover
    wait_until(lambda: len(ids_received(receiver)) == 200, seconds=90, message="200 deliveries")
    # ... and those cut off by the kill sent again and recorded (their claims end a lease after
    # their time-out), so that the pause below cuts none of them off a second time.
    wait_until_settled(app, WebhookDelivery, 200)

    health = owner.get("/api/v1/admin/health").get_json()
    assert health["scheduler"]["holder"].split(":")[1] == str(standby.process.pid)
    assert health["storage"] == {"kind": "folder", "ok": True}
    assert health["database"]["ok"] and set(health["outbox"]) == {
        "webhooksPending",
        "mailsPending",
        "trackerCallsPending",
        "eventsPending",
        "notificationsPending",
        "oldestPendingAt",
        "reporterMailsLimited",
        "signaturesOutdated",
        "lastMailError",
        "lastMailErrorAt",
    }

    # The active one is paused (SIGSTOP); a third takes over; the paused one, resumed, sees
    # that its lease is gone and does nothing.
    third = schedulers()
    standby.pause(app)
    wait_until(lambda: third.holds_the_lease(app), seconds=30, message="the second takeover")
    queue_reports(owner, projects, 20, "After the pause")
    standby.signal(signal.SIGCONT)
    wait_until(lambda: len(ids_received(receiver)) == 220, seconds=60, message="220 deliveries")
    wait_until(lambda: "standing by" in standby.output, seconds=LEASE_SECONDS * 2)
    assert third.holds_the_lease(app)

    # Twice only what was under way when the first was killed: one attempt each after it.
    twice = {key: count for key, count in ids_received(receiver).items() if count > 1}
    assert len(twice) <= DELIVERY_THREADS and all(count == 2 for count in twice.values()), twice


@pytest.mark.server
def test_two_hosts_serve_one_installation_on_one_database_and_one_bucket(
    app, service_env, s3_settings, seaweed, services, tmp_path
):
    """Two `make run`s on two ports, each with its instance folder and scheduler, sharing the
    database, the bucket and the secret key, as two machines behind a load balancer would."""
    shared = {**service_env, **s3_settings, **seaweed.credentials, "SVC_SECRET_KEY": "one key"}
    host_a, service_a = services({**shared, "SVC_INSTANCE_PATH": str(tmp_path / "a")})
    host_b, service_b = services({**shared, "SVC_INSTANCE_PATH": str(tmp_path / "b")})
    browser, project = set_up_project(host_a, None)
    image = png_bytes(9, 9)

    uploaded = requests.post(
        f"{host_a}/api/v1/upload/screenshot",
        headers={"X-API-Key": project["apiKey"]},
        files={"file": ("shot.png", image, "image/png")},
    )
    key = uploaded.json()["key"]
    filed = requests.post(
        f"{host_b}/api/v1/reports",
        headers={"X-API-Key": project["apiKey"]},
        json={**REPORT, "screenshot_url": key},
    )
    assert filed.status_code == 201, filed.text
    for host in (host_a, host_b):  # a session started on A is valid on B
        served = browser.get(f"{host}/api/v1/screenshots/{key}")
        assert served.status_code == 200 and served.content == image
        assert requests.get(f"{host}/readyz").status_code == 200

    def one_active() -> dict | None:
        health = browser.get(f"{host_b}/api/v1/admin/health").json()
        return health if health["scheduler"]["holder"] else None

    health = wait_until(one_active, message="one of the two schedulers active")
    assert health["storage"] == {"kind": "s3", "ok": True}
    active = ["scheduler: active" in service.output for service in (service_a, service_b)]
    assert sorted(active) == [False, True]
