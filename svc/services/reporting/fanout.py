"""What a report's event sets off, done by the scheduler after the request that filed it
(docs/reliability.md, "The fan-out"; figures in docs/performance.md).

Filing a report writes the report and one ReportEvent in one transaction, and nothing more:
the request holds SQLite's write lock (or the project's row) for as short as it can. Every
second the scheduler takes the waiting events under a lease, reads what their effects need,
then does every effect of the batch and deletes the events in one transaction. So nothing is
lost when a process dies after the 201 (the event waits, committed with the report), and
nothing is done twice: an effect commits with its event's deletion or not at all, and a
scheduler whose lease ran out (paused, then overtaken by another) deletes nothing and rolls
back.

A new side effect of a report event is one more function in EFFECTS.
"""

import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy import delete, or_, select, update

from svc import database
from svc.extensions import db
from svc.models import Project, Report, ReportEvent
from svc.models.base import utcnow
from svc.models.events import REPORT_CREATED
from svc.models.integrations import CREATE
from svc.models.search_index import index_new
from svc.services.grouping import signatures
from svc.services.reporters import reporter_mails
from svc.services.reporting import stats
from svc.services.reproductions import runs
from svc.services.team import notifications
from svc.services.trackers import tracker_calls
from svc.webhooks import delivery

BATCH = 200
# Long beside a batch's few tens of milliseconds: a scheduler that has held its batch longer
# than this is taken to be dead or paused, and another may take the events.
LEASE = timedelta(seconds=60)


@dataclass
class Batch:
    """A batch of claimed events and what their effects read, read before the batch's write
    transaction (which on SQLite holds the write lock every request waits for)."""

    claimed: int  # events taken, those of deleted projects too
    events: list[ReportEvent]  # those of projects still there
    reports: set[uuid.UUID] = field(default_factory=set)  # those not deleted since
    webhooks: dict[uuid.UUID, str | None] = field(default_factory=dict)  # project: its URL now
    audiences: dict[uuid.UUID, list] = field(default_factory=dict)  # project: who hears of it
    # project: [(integration id, its auto-create rule)]
    auto_create: dict[uuid.UUID, list] = field(default_factory=dict)
    # the reporters' receipts: [(report id, project id, to, subject, text, headers)]
    receipts: list[tuple] = field(default_factory=list)
    # the new reports' signature rows (svc.services.grouping.signatures.row_of)
    signatures: list[dict] = field(default_factory=list)
    # the new reports run on staging by `auto`: [(report id, project id)]
    reproductions: list[tuple] = field(default_factory=list)


# Each effect does its part for all of a batch's events of one kind at once (a statement for
# the batch, not one per report).


def count_reports(events: list[ReportEvent], batch: Batch) -> None:
    """The overview's counters; also for a report deleted since (its deletion took it off)."""
    stats.count_all(
        stats.Counted(
            event.project_id, "new", event.severity, event.category, event.created_at, None
        )
        for event in events
    )


def deliver_webhooks(events: list[ReportEvent], batch: Batch) -> None:
    """The webhook deliveries, with the payloads of the moment the reports were filed, where
    the project still has a webhook and the report is still there."""
    made = [
        (event.project_id, event.report_id, event.kind, event.payload, event.created_at)
        for event in events
        if event.payload is not None
        and batch.webhooks.get(event.project_id)
        and event.report_id in batch.reports
    ]
    if made:
        delivery.record_payloads(made)


def notify_members(events: list[ReportEvent], batch: Batch) -> None:
    notifications.reports_created(
        [
            (event.report_id, event.project_id, event.severity)
            for event in events
            if event.report_id in batch.reports
        ],
        batch.audiences,
    )


def create_tracker_issues(events: list[ReportEvent], batch: Batch) -> None:
    """The calls that give a new report its issue where an integration's auto-create rule
    matches it (made by the scheduler's integration runner, with retries)."""
    tracker_calls.record_calls(
        [
            (integration_id, event.report_id, CREATE)
            for event in events
            if event.report_id in batch.reports
            for integration_id, rule in batch.auto_create.get(event.project_id, ())
            if tracker_calls.matches(rule, event.severity, event.category)
        ]
    )


def sign_reports(events: list[ReportEvent], batch: Batch) -> None:
    """Each new report's signature: its group of reports of the same bug (computed while the
    batch was read, from what the widget captured)."""
    signatures.record(batch.signatures)


def index_for_search(events: list[ReportEvent], batch: Batch) -> None:
    """The new reports in SQLite's search index, a batch to a statement; until now a search
    found them as reports whose event waits (svc.services.reporting.search)."""
    index_new(db.session, [e.report_id for e in events if e.report_id in batch.reports])


def run_on_staging(events: list[ReportEvent], batch: Batch) -> None:
    """A run of each new report's steps on the staging origin, where its project has `auto`
    (svc.services.reproductions; the scheduler's runner takes them)."""
    runs.queue_automatic(
        [(report, project) for report, project in batch.reproductions if report in batch.reports]
    )


def mail_reporters(events: list[ReportEvent], batch: Batch) -> None:
    """The receipt to the reporter, where the project mails reporters and the report is
    still there (docs/reporter-updates.md)."""
    for report_id, project_id, to, subject, text, headers in batch.receipts:
        if report_id in batch.reports:
            reporter_mails.queue(project_id, to, subject, text, headers)


EFFECTS: dict[str, tuple[Callable[[list[ReportEvent], Batch], None], ...]] = {
    REPORT_CREATED: (
        count_reports,
        deliver_webhooks,
        notify_members,
        create_tracker_issues,
        mail_reporters,
        sign_reports,
        index_for_search,
        run_on_staging,
    ),
}


def run(limit: int = BATCH) -> int:
    """Fan out waiting events, a batch at a time, until none wait: how many were done."""
    done = 0
    while True:
        batch_done = run_batch(limit)
        done += batch_done
        if batch_done < limit:
            return done


def run_batch(limit: int = BATCH) -> int:
    """Claim up to `limit` events, do their effects and delete them: how many were done (0
    when the lease was lost to another scheduler)."""
    token = uuid.uuid4()
    if not _claim(token, limit):
        return 0
    return _finish(token, _read(token))


def _finish(token: uuid.UUID, batch: Batch) -> int:
    """Every effect of the batch and the events' deletion, in one transaction; none of it if
    another scheduler has taken the events since (this one's lease ran out)."""
    by_kind = defaultdict(list)
    for event in batch.events:
        by_kind[event.kind].append(event)
    for kind, events in by_kind.items():
        for effect in EFFECTS[kind]:
            effect(events, batch)
    deleted = db.session.execute(
        delete(ReportEvent)
        .where(ReportEvent.lease_token == token)
        .execution_options(synchronize_session=False)
    ).rowcount
    if deleted != batch.claimed:
        db.session.rollback()  # overtaken: the events are another scheduler's now
        return 0
    db.session.commit()
    return deleted


def _claim(token: uuid.UUID, limit: int) -> int:
    now = utcnow()
    free = or_(ReportEvent.lease_until.is_(None), ReportEvent.lease_until < now)
    database.begin_read_only(db.session())  # the poll, every second, takes no write lock
    waiting = db.session.scalars(
        select(ReportEvent.id).where(free).order_by(ReportEvent.created_at).limit(limit)
    ).all()
    db.session.commit()
    if not waiting:
        return 0
    claimed = db.session.execute(
        update(ReportEvent)
        .where(ReportEvent.id.in_(waiting), free)
        .values(lease_until=now + LEASE, lease_token=token)
        .execution_options(synchronize_session=False)
    ).rowcount
    db.session.commit()
    return claimed


def _read(token: uuid.UUID) -> Batch:
    """The claimed events and what their effects need, read without the write lock."""
    database.begin_read_only(db.session())
    events = db.session.scalars(
        select(ReportEvent).where(ReportEvent.lease_token == token).order_by(ReportEvent.created_at)
    ).all()
    batch = Batch(len(events), list(events))
    report_ids = [event.report_id for event in events]
    batch.reports = set(db.session.scalars(select(Report.id).where(Report.id.in_(report_ids))))
    project_ids = {event.project_id for event in events}
    batch.webhooks = dict(
        db.session.execute(
            select(Project.id, Project.webhook_url).where(Project.id.in_(project_ids))
        ).all()
    )
    for project_id in batch.webhooks:  # a deleted project's events set off nothing
        batch.audiences[project_id] = notifications.audience(project_id)
    batch.auto_create = tracker_calls.auto_create_targets(batch.webhooks)
    batch.receipts = reporter_mails.receipts(report_ids)
    batch.signatures = signatures.of_reports(batch.reports)
    batch.reproductions = runs.to_run_automatically(
        [(e.report_id, e.project_id) for e in events if e.report_id in batch.reports]
    )
    batch.events = [event for event in events if event.project_id in batch.webhooks]
    db.session.commit()
    return batch
