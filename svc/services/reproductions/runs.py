"""Who may run a report's steps, the queue of runs, one run at a time per host, the verdict,
and what the report gets (docs/api.md §20).

A run is asked for by a member (`request`) or, with the project's `auto`, by the fan-out for a
new report with steps (`queue_new_reports`, at most AUTO_PER_HOUR a project). The scheduler's
job (`run_next`) takes the oldest queued run with a conditional UPDATE (two schedulers never
take one run), holds one of the host's slots (a lock file: SVC_REPRO_RUNS_PER_HOST runs at once
on a host, whichever process runs them), runs it (svc.services.reproductions.browser) and
records the verdict. A run is never retried: one whose runner died is failed when its lease
ends.
"""

import contextlib
import fcntl
import logging
import re
import tempfile
import uuid
from datetime import timedelta
from pathlib import Path

from flask import current_app
from sqlalchemy import func, select

from svc import outbox, storage
from svc.errors import Conflict
from svc.extensions import db
from svc.models import Project, Report, ReportDetail, Reproduction, Screenshot, User
from svc.models.activity import REPRODUCED as REPRODUCED_ACTIVITY
from svc.models.base import utcnow
from svc.models.reproductions import (
    DONE,
    FAILED,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    QUEUED,
    REPRODUCED,
    RUNNING,
)
from svc.services.grouping import evidence, signatures
from svc.services.reporting import activity, reports, repro
from svc.services.reproductions import browser
from svc.webhooks import delivery, payloads

log = logging.getLogger(__name__)
# `auto` runs at most this many of a project's new reports an hour (contract v6 §25).
AUTO_PER_HOUR = 30
# How long a taken run may be under way before it counts as abandoned: the longest limit a
# project may set, the runner's grace, and a margin.
LEASE = timedelta(seconds=300 + browser.GRACE_SECONDS + 60)
# A step's title starts with its number ("3. click button#pay").
_STEP_NUMBER = re.compile(r"^(\d+)\. ")


def unavailable() -> str | None:
    """Why this service cannot run reports, in words (on /admin/health and the report page)."""
    return browser.unavailable(current_app.config)


def request(user: User, reference: str) -> Reproduction:
    """Queue a run of the report's steps (a member's); 409 without a staging origin or a
    browser."""
    report = reports.workable_for(user, reference)
    if not report.project.repro_in_force["origin"]:
        raise Conflict(
            "Set the project's staging origin first (settings.repro.origin): "
            "reports' steps are run there, and nowhere else"
        )
    if why := unavailable():
        raise Conflict(f"Reproductions are unavailable on this service: {why}")
    run = Reproduction(
        id=uuid.uuid4(),
        report_id=report.id,
        project_id=report.project_id,
        requested_by_id=user.id,
        status=QUEUED,
        created_at=utcnow(),
    )
    run.requested_by = user
    db.session.add(run)
    db.session.commit()
    return run


def list_for(user: User, reference: str) -> list[Reproduction]:
    """A report's runs, newest first (anyone of its project)."""
    report = reports.get_for(user, reference)
    return list(
        db.session.scalars(
            select(Reproduction)
            .where(Reproduction.report_id == report.id)
            .order_by(Reproduction.created_at.desc(), Reproduction.id)
        )
    )


def last_of(report_id: uuid.UUID) -> Reproduction | None:
    """The report's last finished run (its full form's `lastReproduction`)."""
    return db.session.scalar(
        select(Reproduction).where(Reproduction.report_id == report_id, Reproduction.is_last)
    )


# --- auto ---------------------------------------------------------------------------------------


def to_run_automatically(new: list[tuple[uuid.UUID, uuid.UUID]]) -> list[tuple]:
    """Of new reports (report id, project id), those `auto` runs: of a project with `auto` and
    an origin, with steps, AUTO_PER_HOUR a project at most. Read by the fan-out before its
    write transaction."""
    if not new:
        return []
    project_ids = {project_id for _, project_id in new}
    automatic = {
        project.id
        for project in db.session.scalars(select(Project).where(Project.id.in_(project_ids)))
        if project.repro_in_force["auto"] and project.repro_in_force["origin"]
    }
    candidates = [(report, project) for report, project in new if project in automatic]
    if not candidates:
        return []
    with_steps = {
        report_id
        for report_id, actions in db.session.execute(
            select(ReportDetail.report_id, ReportDetail.user_actions).where(
                ReportDetail.report_id.in_([report for report, _ in candidates])
            )
        )
        if any(isinstance(a, dict) and a.get("type") in ("click", "input") for a in actions or ())
    }
    counted = dict(
        db.session.execute(
            select(Reproduction.project_id, func.count())
            .where(
                Reproduction.project_id.in_(automatic),
                Reproduction.auto,
                Reproduction.created_at > utcnow() - timedelta(hours=1),
            )
            .group_by(Reproduction.project_id)
        ).all()
    )
    chosen = []
    for report_id, project_id in candidates:
        if report_id in with_steps and counted.get(project_id, 0) < AUTO_PER_HOUR:
            counted[project_id] = counted.get(project_id, 0) + 1
            chosen.append((report_id, project_id))
    return chosen


def queue_automatic(chosen: list[tuple]) -> None:
    """Queue the runs `to_run_automatically` chose, in the caller's transaction."""
    now = utcnow()
    for report_id, project_id in chosen:
        db.session.add(
            Reproduction(
                id=uuid.uuid4(),
                report_id=report_id,
                project_id=project_id,
                auto=True,
                status=QUEUED,
                created_at=now,
            )
        )


# --- the runner ---------------------------------------------------------------------------------


@contextlib.contextmanager
def host_slot():
    """One of the host's SVC_REPRO_RUNS_PER_HOST slots, held by a lock file in the instance
    folder for as long as the run (whichever process of the host runs it); None when all are
    taken."""
    folder = Path(current_app.instance_path)
    for number in range(current_app.config["SVC_REPRO_RUNS_PER_HOST"]):
        handle = open(folder / f"repro-slot-{number}.lock", "a+")  # noqa: SIM115
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        try:
            yield number
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()
        return
    yield None


def fail_abandoned(now=None) -> int:
    """Runs whose runner died (its lease ended): failed, never run again."""
    now = now or utcnow()
    abandoned = list(
        db.session.scalars(
            select(Reproduction).where(
                Reproduction.status == RUNNING, Reproduction.lease_until < now
            )
        )
    )
    for run in abandoned:
        _finish(run, FAILED, [], {"index": 0, "reason": "the runner stopped before the end"})
    db.session.commit()
    return len(abandoned)


def run_next() -> uuid.UUID | None:
    """The scheduler's: run the oldest queued run if this host has a free slot; its id."""
    fail_abandoned()
    if unavailable():
        return None
    with host_slot() as slot:
        if slot is None:
            return None
        run_id = outbox.claim_queued(Reproduction, now=utcnow(), lease=LEASE)
        if run_id is not None:
            _run(run_id)
        return run_id


def _run(run_id: uuid.UUID) -> None:
    run = db.session.get(Reproduction, run_id)
    report = db.session.get(Report, run.report_id)
    settings = report.project.repro_in_force
    origin, limit = settings["origin"], settings["timeout_seconds"]
    if not origin:
        _finish(run, FAILED, [], {"index": 0, "reason": "the project has no staging origin now"})
        db.session.commit()
        return
    spec = repro.playwright_spec(report, sandbox="./sandbox.mjs")
    allowed = [*report.project.allowed_origins, origin]
    expected = signatures.evidence_of(
        report.meta, report.detail.console_logs, report.detail.network_logs, allowed
    )
    origins = evidence.app_origins(origin, allowed)
    db.session.commit()  # nothing is held while the browser runs
    with tempfile.TemporaryDirectory(prefix="svc-repro-") as folder:
        outcome = browser.run(spec, origin, limit, Path(folder), current_app.config)
        verdict, seen, failed_step, steps_run = judge(outcome, expected, origins, limit)
        if verdict == FAILED and not outcome.records:
            log.warning("reproduction %s: the runner said: %s", run_id, outcome.output[-500:])
        # Read again (the session keeps what it read): its report may be deleted since, which
        # took the run with it, or the run failed as abandoned.
        run = db.session.get(Reproduction, run_id, populate_existing=True)
        if run is None or run.status != RUNNING:
            db.session.rollback()
            return
        run.steps_run = steps_run
        run.requests_blocked = sum(1 for record in outcome.records if "blocked" in record)
        run.duration_ms = outcome.duration_ms
        run.trace_key = _keep(report, outcome.trace, "zip", "application/zip")
        run.screenshot_key = _keep(report, outcome.screenshot, "png", "image/png")
        _finish(run, verdict, seen, failed_step)
        db.session.commit()


def judge(outcome: browser.Outcome, expected, origins, limit: int) -> tuple:
    """(verdict, evidence seen, failed step or None, steps run) of a run's records: the
    report's evidence coming again is `reproduced` whatever came after it."""
    records = outcome.records
    console = [record["console"] for record in records if isinstance(record.get("console"), dict)]
    network = [record["request"] for record in records if isinstance(record.get("request"), dict)]
    seen = signatures.recurred(expected, console, network, origins)
    begun = [record["step"] for record in records if "step" in record]
    ended = [record for record in records if "stepEnd" in record]
    steps_run = sum(1 for record in ended if not record.get("error"))
    failed_step = next(
        (
            {"index": _number(record["stepEnd"]), "reason": browser.plain(record["error"])}
            for record in ended
            if record.get("error")
        ),
        None,
    )
    end = next((record for record in records if "end" in record), None)
    if failed_step is None and (outcome.killed or (end and end["end"] == "timedOut")):
        unfinished = begun[len(ended)] if len(begun) > len(ended) else None
        failed_step = {
            "index": _number(unfinished) if unfinished else 0,
            "reason": f"the run passed its limit of {limit} s and was stopped",
        }
    if seen:
        return REPRODUCED, seen, failed_step, steps_run
    if failed_step is not None:
        return FAILED, seen, failed_step, steps_run
    if end is None:
        reason = browser.plain(
            next((record["error"] for record in records if "error" in record), "")
            or "the test runner stopped before the test ran"
        )
        return FAILED, seen, {"index": 0, "reason": reason}, steps_run
    if not (expected.error or expected.request):
        return INCONCLUSIVE, seen, None, steps_run
    return NOT_REPRODUCED, seen, None, steps_run


def _number(title) -> int:
    found = _STEP_NUMBER.match(str(title))
    return int(found[1]) if found else 0


def _keep(report: Report, path: Path | None, extension: str, content_type: str) -> str | None:
    """A file of the run in the object store, as one of the report's uploads (so it goes with
    the report, its project, or retention)."""
    if path is None:
        return None
    data = path.read_bytes()
    stored = storage.save_bytes(storage.current_store(), data, extension, content_type)
    db.session.add(
        Screenshot(
            key=stored.key,
            project_id=report.project_id,
            report_id=report.id,
            content_type=content_type,
            size=stored.size,
            created_at=utcnow(),
        )
    )
    return stored.key


def _finish(run: Reproduction, verdict: str, seen: list[str], failed_step) -> None:
    """The run done, the report's last; its activity entry and webhook, in the caller's
    transaction."""
    report = db.session.get(Report, run.report_id)
    previous = last_of(run.report_id)
    if previous is not None:
        previous.is_last = False
    run.status, run.verdict, run.evidence, run.failed_step = DONE, verdict, seen, failed_step
    run.finished_at = utcnow()
    run.is_last = True
    db.session.flush()
    activity.record(
        report,
        run.requested_by,
        REPRODUCED_ACTIVITY,
        changes={"verdict": {"from": previous.verdict if previous else None, "to": verdict}},
        via=None if run.requested_by else "auto",
    )
    delivery.record(report.project, payloads.REPRODUCED, report, reproduction=run)
