"""A report's filing (docs/api.md §8.1), the widget's hot path: idempotency, redaction,
numbering, its screenshots and one event, in one transaction; what the report sets off
(counters, the webhook, notifications) the scheduler does from that event
(svc.services.reporting.fanout).
Core statements where the ORM would cost more than the database's own work
(docs/performance.md). Working the reports afterwards: svc.services.reporting.reports."""

import hashlib
import json
import uuid
from datetime import timedelta

from sqlalchemy import bindparam, insert, or_, select
from sqlalchemy import update as update_rows
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm.attributes import set_committed_value

from svc import storage
from svc.config import setting
from svc.errors import Invalid, ProjectChanged, field_error
from svc.extensions import db
from svc.models import (
    SEVERITY_RANK,
    IdempotencyKey,
    Project,
    Report,
    ReportDetail,
    ReportEvent,
    Screenshot,
)
from svc.models.base import utcnow
from svc.models.events import REPORT_CREATED
from svc.services import widget
from svc.services.listing import Shown
from svc.services.reporters import reporter_mails, status_links
from svc.services.reporting import redaction
from svc.webhooks import payloads

IDEMPOTENCY_WINDOW = timedelta(hours=24)
IDEMPOTENCY_HEADER = "Idempotency-Key"
# A report's uploads: (its field, where the report keeps the key, whether it is the replay).
_UPLOAD_FIELDS = (
    ("screenshot_url", lambda report: report.screenshot_key, False),
    ("annotated_screenshot_url", lambda report: report.annotated_screenshot_key, False),
    ("replay_key", lambda report: report.detail.replay_key, True),
)


def fingerprint(data: dict) -> str:
    """The same report fields in any key order give the same fingerprint."""
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _earlier_answer(project: Project, key: str, body_hash: str) -> Report | None:
    """The report a previous request with this Idempotency-Key created, if still remembered."""
    remembered = db.session.get(IdempotencyKey, (project.id, key))
    if remembered is None:
        return None
    if remembered.created_at <= utcnow() - IDEMPOTENCY_WINDOW:
        db.session.delete(remembered)  # expired: the key starts afresh
        db.session.flush()
        return None
    if remembered.body_hash != body_hash:
        raise field_error(
            IDEMPOTENCY_HEADER, "This key was already used with a different request body."
        )
    return db.session.get(Report, remembered.report_id)


# Statements of the create path, built once. Core statements on the tables: the ORM's unit of
# work and bulk-update machinery cost more than the database's own work here (docs/performance.md).
_projects, _reports, _report_details = Project.__table__, Report.__table__, ReportDetail.__table__
# One conditional increment in the report's own transaction: it locks the project's row until
# commit (PostgreSQL) or runs under the write lock (SQLite), and rolls back with the report.
# It matches only the project as the request read it (its `version`, which it keeps): the
# project may be as the process remembered it (svc.auth.api_keys).
_AS_SEEN = (_projects.c.id == bindparam("project_id")) & (_projects.c.version == bindparam("seen"))
_NEXT_NUMBER = (
    update_rows(_projects)
    .where(_AS_SEEN)
    .values(
        last_report_number=_projects.c.last_report_number + 1,
        report_count=_projects.c.report_count + 1,
        version=_projects.c.version,
    )
    .returning(_projects.c.last_report_number)
)
_STILL_AS_SEEN = select(_projects.c.id).where(_AS_SEEN)
# The report, its detail and its event: on SQLite the numbering and three INSERTs; on
# PostgreSQL one statement, the numbering and the INSERTs in its WITH, each INSERT taking its
# row only when the one before it wrote (a round trip instead of four; the foreign keys are
# checked at the statement's end, when the report is there). There each table's values are
# the parameters `<table>_<column>`.
_events = ReportEvent.__table__
_WRITTEN = (_reports, _report_details, _events)
_INSERTS = tuple(insert(table) for table in _WRITTEN)


def _insert_after(table, source, **computed):
    """INSERT of one row for each row of `source` (none, or one): its values the parameters
    `<table>_<column>`, or the `computed` ones."""
    values = [
        computed.get(column.key, bindparam(f"{table.name}_{column.key}", type_=column.type))
        for column in table.c
    ]
    return insert(table).from_select(
        [column.key for column in table.c], select(*values).select_from(source)
    )


_numbered = _NEXT_NUMBER.cte("numbered")
_new_report_row = (
    _insert_after(_reports, _numbered, number=_numbered.c.last_report_number)
    .returning(_reports.c.id)
    .cte("new_report")
)
_NUMBER_AND_WRITE = select(_numbered.c.last_report_number).add_cte(
    _new_report_row,
    _insert_after(_report_details, _new_report_row).cte("new_detail"),
    _insert_after(_events, _new_report_row).cte("new_event"),
)
_SET_PAYLOAD = (
    update_rows(_events)
    .where(_events.c.id == bindparam("event_id"))
    .values(payload=bindparam("made", type_=_events.c.payload.type))
)


def _new_report(project: Project, data: dict) -> Report:
    """The report to store, not yet numbered. It stays out of the session: `_store` writes it."""
    now = utcnow()
    report = Report(
        id=uuid.uuid4(),
        project_id=project.id,
        title=data["title"],
        description=data["description"],
        severity=data["severity"],
        severity_rank=SEVERITY_RANK[data["severity"]],
        category=data["category"],
        status="new",
        reporter_identifier=data["reporter_identifier"],
        screenshot_key=data["screenshot_url"],
        annotated_screenshot_key=data["annotated_screenshot_url"],
        meta=data["metadata"],
        assignee_id=None,
        created_at=now,
        updated_at=now,
        status_link_version=0,
    )
    # What a new report is known to have, set as loaded: its answer then reads no
    # relationship's loader, and `project` sets off no backref to the project's reports.
    set_committed_value(report, "project", project)
    for name in ("duplicate_row", "signature_row", "last_reproduction"):
        set_committed_value(report, name, None)
    for name in ("duplicate_rows", "external_issues"):
        set_committed_value(report, name, [])
    report.detail = ReportDetail(
        report_id=report.id,
        console_logs=data["console_logs"],
        network_logs=data["network_logs"],
        user_actions=data["user_actions"],
        replay_key=data["replay_key"],
        locale=data["locale"],
    )
    return report


def _row(instance) -> dict:
    """A model instance's column values, keyed as its table's INSERT takes them."""
    return {
        attribute.columns[0].key: getattr(instance, attribute.key)
        for attribute in type(instance).__mapper__.column_attrs
    }


def _store(project: Project, report: Report, alone: bool) -> None:
    """Number the report and write it with its event: the part of a creation that runs one at
    a time (the project's row lock, or SQLite's write lock), so everything else is prepared
    before. `alone`: nothing else of the creation writes (see `create`)."""
    seen = {"project_id": report.project_id, "seen": report.project.version}
    event = _event_row(project, report)
    connection = _connection(alone)
    if connection.dialect.name == "postgresql":
        named = dict(seen)
        for table, row in zip(_WRITTEN, _rows(report, event), strict=True):
            named.update((f"{table.name}_{key}", value) for key, value in row.items())
        report.number = _numbered_or_changed(connection.execute(_NUMBER_AND_WRITE, named))
        made = _payload(project, report)
        if made is not None:
            connection.execute(_SET_PAYLOAD, {"event_id": event["id"], "made": made})
    else:
        report.number = _numbered_or_changed(connection.execute(_NEXT_NUMBER, seen))
        event["payload"] = _payload(project, report)
        for statement, row in zip(_INSERTS, _rows(report, event), strict=True):
            connection.execute(statement, row)


def _connection(alone: bool):
    """The session's connection, for Core statements: Session.execute adds the ORM's machinery
    to each (2 % of a creation's instructions, docs/performance.md). On PostgreSQL a creation
    that is its one statement commits by itself: the statement is atomic, and BEGIN and COMMIT
    were two round trips of the four it made."""
    session = db.session()
    if alone and not session.in_transaction() and session.get_bind().dialect.name == "postgresql":
        return session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})
    return session.connection()


def _rows(report: Report, event: dict) -> tuple[dict, dict, dict]:
    """The rows of `_WRITTEN`, in its order."""
    return _row(report), _row(report.detail), event


def _payload(project: Project, report: Report) -> dict | None:
    """The webhook's payload, made now so that it says what was filed; it names the tracking
    number, so it is made once the report has one."""
    if not project.webhook_url:
        return None
    return payloads.event_payload(payloads.CREATED, report, report.created_at)


def _numbered_or_changed(result) -> int:
    number = result.scalar()
    if number is None:  # the project is no longer as the request read it: nothing was written
        raise ProjectChanged()
    return number


def create(
    project: Project, data: dict, idempotency_key: str | None = None
) -> tuple[Report | Shown, bool]:
    """Store a report; (report, True) when created, (earlier report, False) for a repeat of an
    Idempotency-Key."""
    body_hash = None
    if idempotency_key is not None:
        body_hash = fingerprint(data)  # only here: it serialises the whole body
        earlier = _earlier_answer(project, idempotency_key, body_hash)
        if earlier is not None:
            _still_as_seen(project)
            return _offering_status_page(project, earlier), False
    settings = widget.settings_in_force(project)
    details = settings["capture_network_details"]
    if settings["locale"] != "auto":  # the project speaks one language to every reporter
        data = {**data, "locale": settings["locale"]}
    data = redaction.redact_report(data, setting("SVC_REDACT_NAMES"), details)
    report = _new_report(project, data)
    # Nothing else to write: no upload to claim, no key to keep, no webhook payload to set.
    uploads = any(key_of(report) for _field, key_of, _replay in _UPLOAD_FIELDS)
    alone = idempotency_key is None and not uploads and not project.webhook_url
    _store(project, report, alone)
    _attach_screenshots(project, report)
    if idempotency_key is not None:
        db.session.add(
            IdempotencyKey(
                project_id=project.id, key=idempotency_key, body_hash=body_hash, report_id=report.id
            )
        )
    try:
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        if idempotency_key is None:
            raise
        # A concurrent request with the same key won; answer with its report.
        earlier = _earlier_answer(project, idempotency_key, body_hash)
        if earlier is None:
            raise
        return _offering_status_page(project, earlier), False
    return _offering_status_page(project, report), True


def _still_as_seen(project: Project) -> None:
    """An answer that writes nothing checks, as the numbering does, that the project is still
    as the request read it (it may be as the process remembered it)."""
    seen = {"project_id": project.id, "seen": project.version}
    if db.session.execute(_STILL_AS_SEEN, seen).first() is None:
        raise ProjectChanged()


def _offering_status_page(project: Project, report: Report) -> Shown:
    """The widget's answer links the report's status page when the project keeps reporters up
    to date (docs/reporter-updates.md): signed, so nothing is written for it; and says whether
    a receipt will be mailed, so that the widget can say when none will."""
    receipt = reporter_mails.receipt_coming(project, report)
    if project.reporter_updates_in_force["enabled"]:
        return Shown(report, status_url=status_links.status_url(report), receipt=receipt)
    return Shown(report, receipt=receipt)


def _event_row(project: Project, report: Report) -> dict:
    """The one event the fan-out works from; its webhook payload follows (`_payload`)."""
    return {
        "id": uuid.uuid4(),
        "kind": REPORT_CREATED,
        "report_id": report.id,
        "project_id": project.id,
        "severity": report.severity,
        "category": report.category,
        "payload": None,
        "created_at": report.created_at,
        "lease_until": None,
        "lease_token": None,
    }


def _attach_screenshots(project: Project, report: Report) -> None:
    """Give the report its screenshots and replay: each must be an unused upload of the same
    project, of its kind."""
    errors = {}
    for field, key_of, replay in _UPLOAD_FIELDS:
        key = key_of(report)
        if key is None:
            continue
        claimed = db.session.execute(
            update_rows(Screenshot)
            .where(
                Screenshot.key == key,
                Screenshot.project_id == project.id,
                (Screenshot.content_type == storage.REPLAY_TYPE)
                if replay
                else (Screenshot.content_type != storage.REPLAY_TYPE),
                or_(Screenshot.report_id.is_(None), Screenshot.report_id == report.id),
            )
            .values(report_id=report.id)
            .execution_options(synchronize_session=False)
        ).rowcount
        if not claimed:
            errors[field] = [
                f"Not a key returned by this project's {'replay' if replay else 'screenshot'} "
                "upload, "
                "or already used by another report."
            ]
    if errors:
        db.session.rollback()
        raise Invalid(errors)
