"""Notifications by mail (docs/api.md §4): who hears of what, and when many things at once
become one summary.

A change writes a Notification row per person to tell, in its own transaction (a new report,
an assignment); the scheduler's `send_due` turns them into mails in the outbox. Each person
chooses per project which new reports they hear of (`all`, `high_and_critical`, `assigned`:
only reports assigned to them, `none`: nothing from the project); without a choice, owners hear
of high and critical reports and everyone else of what is assigned to them.

More than BURST_LIMIT mails within BURST_WINDOW would flood an inbox: what is pending when the
limit would be passed goes out as one summary, as soon as the window has room for one more mail
(so a burst gives at most BURST_LIMIT single mails and one summary per window).
Every mail carries a one-click unsubscribe link (RFC 8058) for its project, a summary one for
every project. What the mails say: svc.services.team.notification_mails.
"""

import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta

from itsdangerous import BadSignature
from sqlalchemy import bindparam, delete, func, insert, select, update

from svc import database
from svc.errors import not_found
from svc.extensions import db
from svc.mail import outbox
from svc.models import OWNER, Membership, Notification, Project, Report, User
from svc.models.base import utcnow
from svc.models.notifications import (
    ALL,
    ASSIGNED,
    HIGH_AND_CRITICAL,
    MENTIONED,
    NEW_REPORT,
    NONE,
    ONLY_ASSIGNED,
    REOPENED,
)
from svc.services.team import notification_mails

BURST_LIMIT = 5
BURST_WINDOW = timedelta(minutes=5)
# Mailed notifications are kept only as long as the burst limit looks back, and a day more.
KEEP_MAILED = timedelta(days=1)
LOUD_SEVERITIES = frozenset({"high", "critical"})
INVALID_LINK = "This unsubscribe link is invalid"


def choice_in_force(role: str, chosen: str | None) -> str:
    """What someone chose, else the default of their role."""
    return chosen or (HIGH_AND_CRITICAL if role == OWNER else ONLY_ASSIGNED)


def choice_of(membership: Membership) -> str:
    return choice_in_force(membership.role, membership.notify_new_reports)


# --- preferences ---------------------------------------------------------------------------------


def preferences(user: User) -> list[dict]:
    """The user's choice for each of their projects, by project name."""
    memberships = db.session.scalars(
        select(Membership)
        .join(Membership.project)
        .where(Membership.user_id == user.id)
        .order_by(func.lower(Project.name), Project.id)
    )
    return [
        {
            "project_id": membership.project_id,
            "project_name": membership.project.name,
            "new_reports": choice_of(membership),
        }
        for membership in memberships
    ]


def set_preferences(user: User, choices: list[dict]) -> list[dict]:
    """Set the choice of each project named; 404 for a project the user is not in (nothing is
    changed then)."""
    for choice in choices:
        membership = db.session.get(Membership, (choice["project_id"], user.id))
        if membership is None:
            db.session.rollback()
            raise not_found(f"Project {choice['project_id']} not found")
        membership.notify_new_reports = choice["new_reports"]
    db.session.commit()
    return preferences(user)


# --- what happened -------------------------------------------------------------------------------


# Statements of the ingest path, built once (as svc.services.reporting.reports does, for the same
# reason:
# building and flushing through the ORM cost more than the queries; docs/performance.md).
_members, _users = Membership.__table__, User.__table__
_TO_TELL = (
    select(_members.c.user_id, _members.c.role, _members.c.notify_new_reports)
    .join(_users, _users.c.id == _members.c.user_id)
    .where(_members.c.project_id == bindparam("project_id"), _users.c.active.is_(True))
)
_INSERT_NOTIFICATION = insert(Notification.__table__)


def audience(project_id: uuid.UUID) -> list[tuple[uuid.UUID, str]]:
    """Who in the project hears of new reports at all, and their choice in force: (user id,
    choice) of its active members."""
    return [
        (user_id, choice_in_force(role, chosen))
        for user_id, role, chosen in db.session.execute(_TO_TELL, {"project_id": project_id})
    ]


def reports_created(
    reports: list[tuple[uuid.UUID, uuid.UUID, str]],
    audiences: dict[uuid.UUID, list[tuple[uuid.UUID, str]]],
) -> None:
    """Tell, of each new report (id, project id, severity), everyone of its project's
    `audience` whose choice takes it (the fan-out, in its transaction, in one statement)."""
    now = utcnow()
    rows = [
        {
            "id": uuid.uuid4(),
            "user_id": user_id,
            "project_id": project_id,
            "report_id": report_id,
            "kind": NEW_REPORT,
            "created_at": now,
        }
        for report_id, project_id, severity in reports
        for user_id, choice in audiences[project_id]
        if choice == ALL or (severity in LOUD_SEVERITIES and choice == HIGH_AND_CRITICAL)
    ]
    if rows:
        db.session.execute(_INSERT_NOTIFICATION, rows)


def report_assigned(report: Report, assignee_id: uuid.UUID | None, actor: User) -> None:
    """Tell the new assignee, unless they assigned it to themself or hear nothing of the
    project."""
    if assignee_id is None or assignee_id == actor.id:
        return
    membership = db.session.get(Membership, (report.project_id, assignee_id))
    if membership is not None and choice_of(membership) != NONE:
        _tell(assignee_id, report, ASSIGNED, actor.name)


def report_mentioned(report: Report, user_ids: set[uuid.UUID], actor: User) -> None:
    """Tell those a comment mentions, unless they hear nothing of the project."""
    for user_id in user_ids:
        membership = db.session.get(Membership, (report.project_id, user_id))
        if membership is not None and choice_of(membership) != NONE:
            _tell(user_id, report, MENTIONED, actor.name)


def report_reopened(report: Report) -> None:
    """Tell the assignee that the reporter reopened the report, unless they hear nothing of
    the project."""
    if report.assignee_id is None:
        return
    membership = db.session.get(Membership, (report.project_id, report.assignee_id))
    if membership is not None and choice_of(membership) != NONE:
        _tell(report.assignee_id, report, REOPENED)


def _tell(user_id: uuid.UUID, report: Report, kind: str, actor_name: str | None = None) -> None:
    db.session.add(
        Notification(
            id=uuid.uuid4(),
            user_id=user_id,
            project_id=report.project_id,
            report_id=report.id,
            kind=kind,
            actor_name=actor_name,
            created_at=utcnow(),
        )
    )


# --- mails ---------------------------------------------------------------------------------------


def send_due(now: datetime | None = None) -> int:
    """Turn pending notifications into mails in the outbox (the scheduler's job); the number of
    mails queued."""
    now = now or utcnow()
    database.begin_read_only(db.session())  # the poll, every second, takes no write lock
    waiting = db.session.scalars(
        select(Notification.user_id).where(Notification.mailed_at.is_(None)).distinct()
    ).all()
    db.session.commit()
    return sum(_send_for(user_id, now) for user_id in waiting)


def _send_for(user_id: uuid.UUID, now: datetime) -> int:
    """The user's pending notifications as mails, if the burst window has room. What to send
    is worked out in a transaction that only reads; the one that writes only queues the mails
    and marks what they tell of, and nothing if any of it was marked meanwhile (by a scheduler
    that lost its lease). On SQLite the write holds the lock every report's filing waits for:
    with a summary of hundreds of reports made inside it, it held it for tens of milliseconds
    a second under load (docs/performance.md)."""
    database.begin_read_only(db.session())
    user = db.session.get(User, user_id)
    pending = list(
        db.session.scalars(
            select(Notification)
            .where(Notification.user_id == user_id, Notification.mailed_at.is_(None))
            .order_by(Notification.created_at, Notification.id)
        )
    )
    member_of = set(
        db.session.scalars(select(Membership.project_id).where(Membership.user_id == user_id))
    )
    # Removed from a project (or left it) while a notification waited: it goes unsent.
    marks = [(None, [item for item in pending if item.project_id not in member_of])]
    pending = [item for item in pending if item.project_id in member_of]
    mails = []
    if user.active:
        mails = _mails_for(user, pending, now)
    else:  # deactivated since: nothing goes to them
        marks.append((None, pending))
    db.session.commit()
    marks += [(outbox.queue(user.email, *mail), items) for mail, items in mails]
    if not _marked(marks, now):
        db.session.rollback()
        return 0
    db.session.commit()
    return len(mails)


def _mails_for(user: User, pending: list[Notification], now: datetime) -> list:
    """The mails that tell `user` of `pending` now, each (subject, text, headers) with the
    notifications it tells of; none while they wait for room in the burst window."""
    room = BURST_LIMIT - _mails_within(user.id, now)
    if not pending or room <= 0:
        return []
    reports = _reports_of(pending)
    # What came while the window was full waited for a summary: it stays one, also when the
    # window has room for each by now.
    held = _mails_within(user.id, pending[0].created_at) >= BURST_LIMIT
    if len(pending) <= room and not held:
        return [
            (notification_mails.single(user, item, reports[item.report_id]), [item])
            for item in pending
        ]
    return [(notification_mails.summary(user, pending, reports), pending)]


# A summary after a burst names hundreds of reports: they are read and marked so many to a
# statement (one statement each was three quarters of the job under load).
_AT_ONCE = 500


def _chunks(ids: list[uuid.UUID]) -> Iterator[list[uuid.UUID]]:
    for start in range(0, len(ids), _AT_ONCE):
        yield ids[start : start + _AT_ONCE]


def _reports_of(items: list[Notification]) -> dict[uuid.UUID, Report]:
    found = {}
    for chunk in _chunks(list({item.report_id for item in items})):
        query = select(Report).where(Report.id.in_(chunk))
        found.update((report.id, report) for report in db.session.scalars(query))
    return found


def _marked(marks: list[tuple[uuid.UUID | None, list[Notification]]], now: datetime) -> bool:
    """Mark each (mail id, notifications) mailed, by that mail (None: by none); False when
    any of them was marked already."""
    for mail_id, items in marks:
        for chunk in _chunks([item.id for item in items]):
            changed = db.session.execute(
                update(Notification)
                .where(Notification.id.in_(chunk), Notification.mailed_at.is_(None))
                .values(mailed_at=now, mail_id=mail_id)
                .execution_options(synchronize_session=False)
            ).rowcount
            if changed != len(chunk):
                return False
    return True


def _mails_within(user_id: uuid.UUID, until: datetime) -> int:
    """How many mails the user was sent in the BURST_WINDOW that ends at `until`."""
    return db.session.scalar(
        select(func.count(func.distinct(Notification.mail_id))).where(
            Notification.user_id == user_id,
            Notification.mailed_at > until - BURST_WINDOW,
            Notification.mailed_at <= until,
            Notification.mail_id.is_not(None),
        )
    )


def forget_mailed(now: datetime | None = None) -> int:
    """Drop notifications mailed long enough ago to count for nothing (an hourly job)."""
    cutoff = (now or utcnow()) - KEEP_MAILED
    removed = db.session.execute(
        delete(Notification).where(Notification.mailed_at < cutoff)
    ).rowcount
    db.session.commit()
    return removed


# --- unsubscribing -------------------------------------------------------------------------------


def unsubscribe(token: str) -> dict:
    """Set the choice to `none` for the token's project (or every project of the user)."""
    try:
        user_id, project_id = notification_mails.unsubscribe_target(token)
        user = db.session.get(User, uuid.UUID(user_id))
        project_uuid = uuid.UUID(project_id) if project_id else None
    except (BadSignature, ValueError, TypeError):
        raise not_found(INVALID_LINK) from None
    if user is None:
        raise not_found(INVALID_LINK)
    statement = select(Membership).where(Membership.user_id == user.id)
    if project_uuid is not None:
        statement = statement.where(Membership.project_id == project_uuid)
    memberships = list(db.session.scalars(statement))
    for membership in memberships:
        membership.notify_new_reports = NONE
    db.session.commit()
    return {
        "email": user.email,
        "project_name": memberships[0].project.name if project_uuid and memberships else None,
    }
