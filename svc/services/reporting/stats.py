"""The overview of a team's reports (docs/api.md §8.4): open reports by status, severity and
category, new and resolved per day, the median time to resolve.

Answered from counters kept in the transaction of every change to a report, and for a new
report in the fan-out's, a second or so after its filing (svc.services.reporting.fanout)
(ReportTally:
the number of reports per status, severity and category; ReportDay: created and resolved per
UTC day), so the overview reads a few hundred rows whatever the number of reports
(docs/performance.md, "The overview and the export"). Once the fan-out has run, both equal a
count of the reports as they are: a deleted report leaves its day, a reopened one its day of
resolution.
"""

import statistics
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import cache

from sqlalchemy import bindparam, func, insert, literal_column, select, text
from sqlalchemy.dialects import postgresql, sqlite

from svc.extensions import db
from svc.models import (
    CATEGORIES,
    SEVERITIES,
    Report,
    ReportDay,
    ReportEvent,
    ReportHours,
    ReportTally,
    User,
)
from svc.models.base import UTCDateTime, utcnow
from svc.models.events import REPORT_CREATED
from svc.models.reports import OPEN_STATUSES, HoursBetween, hours_to_resolve
from svc.models.stats import BANDS, band_of
from svc.services import projects


@dataclass(frozen=True)
class Counted:
    """What of a report the counters count."""

    project_id: uuid.UUID
    status: str
    severity: str
    category: str
    created_at: datetime
    resolved_at: datetime | None

    @classmethod
    def of(cls, report: Report) -> "Counted":
        return cls(
            report.project_id,
            report.status,
            report.severity,
            report.category,
            report.created_at,
            report.resolved_at,
        )


# --- keeping the counters ------------------------------------------------------------------------


def count(counted: Counted, sign: int) -> None:
    """Add (1) or take away (-1) a report as `counted` describes it."""
    count_all([counted], sign)


def count_all(reports: Iterable[Counted], sign: int = 1) -> None:
    """Add (or take away) many reports: one upsert per counter touched, not per report (the
    fan-out counts a batch of new reports at once)."""
    tallies, days, hours = Counter(), defaultdict(Counter), Counter()
    for counted in reports:
        key = (counted.project_id, counted.status, counted.severity, counted.category)
        tallies[key] += sign
        days[counted.project_id, counted.created_at.date()]["created"] += sign
        if counted.resolved_at is not None:
            days[counted.project_id, counted.resolved_at.date()]["resolved"] += sign
            hours[counted.project_id, counted.created_at, counted.resolved_at] += sign
    if not tallies:
        return
    dialect = db.session.get_bind().dialect.name
    db.session.execute(
        _upsert(dialect, "report_tallies"),
        [
            {"project_id": p, "status": st, "severity": se, "category": ca, "count": n}
            for (p, st, se, ca), n in tallies.items()
        ],
    )
    db.session.execute(
        _upsert(dialect, "report_days"),
        [
            {"project_id": p, "day": day, "created": n["created"], "resolved": n["resolved"]}
            for (p, day), n in days.items()
        ],
    )
    if hours:  # the band computed by the database (models.stats.band_of)
        db.session.execute(
            _upsert(dialect, "report_hours"),
            [
                {"project_id": p, "day": r.date(), "created_at": c, "resolved_at": r, "count": n}
                for (p, c, r), n in hours.items()
            ],
        )


def recount(report: Report, before: Counted) -> None:
    """After a change: move the report's counts, and set or clear when it was resolved."""
    if report.status not in OPEN_STATUSES and before.status in OPEN_STATUSES:
        report.resolved_at = utcnow()
    elif report.status in OPEN_STATUSES:
        report.resolved_at = None
    after = Counted.of(report)
    if after != before:
        count(before, -1)
        count(after, 1)


def _insert(dialect: str):
    return (postgresql if dialect == "postgresql" else sqlite).insert


@cache
def _upsert(dialect: str, table_name: str):
    """INSERT ... ON CONFLICT DO UPDATE adding to the counters; built once per table."""
    table, keys, counters = _COUNTERS[table_name]
    values = {column: bindparam(column) for column in (*keys, *counters)}
    statement = _insert(dialect)(table).values(values | _COMPUTED.get(table_name, {}))
    return statement.on_conflict_do_update(
        index_elements=[table.c[key] for key in keys],
        set_={column: table.c[column] + statement.excluded[column] for column in counters},
    )


# table name: (table, its key columns, its counter columns)
_COUNTERS = {
    "report_tallies": (
        ReportTally.__table__,
        ("project_id", "status", "severity", "category"),
        ("count",),
    ),
    "report_days": (ReportDay.__table__, ("project_id", "day"), ("created", "resolved")),
    "report_hours": (ReportHours.__table__, ("project_id", "day", "band"), ("count",)),
}
# key columns the database computes from other parameters
_COMPUTED = {
    "report_hours": {
        "band": band_of(
            HoursBetween(
                bindparam("created_at", type_=UTCDateTime()),
                bindparam("resolved_at", type_=UTCDateTime()),
            )
        )
    }
}


# Counting every report afresh: for reports written beside the service (the benchmarks' bulk
# loads), as the migration that brought the counters did for the reports of its day.
_RECOUNT = (
    "DELETE FROM report_tallies",
    "DELETE FROM report_days",
    "DELETE FROM report_hours",
    "INSERT INTO report_tallies (project_id, status, severity, category, count) "
    "SELECT project_id, status, severity, category, count(*) FROM reports "
    "GROUP BY project_id, status, severity, category",
    "INSERT INTO report_days (project_id, day, created, resolved) "
    "SELECT project_id, date(created_at), count(*), 0 FROM reports "
    "GROUP BY project_id, date(created_at)",
    "INSERT INTO report_days (project_id, day, created, resolved) "
    "SELECT project_id, date(resolved_at), 0, count(*) FROM reports "
    "WHERE resolved_at IS NOT NULL GROUP BY project_id, date(resolved_at) "
    "ON CONFLICT (project_id, day) DO UPDATE SET resolved = excluded.resolved",
)


def recount_all(connection) -> None:
    """Rebuild the counters from the reports, on `connection` (in its transaction)."""
    for statement in _RECOUNT:
        connection.execute(text(statement))
    connection.execute(recount_hours())


def recount_hours():
    """An INSERT of every resolved report into the empty ReportHours."""
    day, band = func.date(Report.resolved_at), band_of(hours_to_resolve())
    return insert(ReportHours).from_select(
        ["project_id", "day", "band", "count"],
        select(Report.project_id, day, band, func.count())
        .where(Report.resolved_at.is_not(None))
        .group_by(Report.project_id, day, band),
    )


# --- reading them --------------------------------------------------------------------------------

# The list's filters that the counters count by: a list filtered by these alone (and its
# projects) has its total read from them (docs/api.md §8.2; docs/performance.md, "Totals, the
# median and a search's count").
TALLIED = frozenset({"status", "severity", "category"})


def tallied(chosen, query: dict):
    """A SELECT of how many reports of the `chosen` projects (a SELECT of ids) the query's
    TALLIED filters take: the counters, plus the new reports the fan-out has not counted yet
    (their created events wait). One statement, so one snapshot: the fan-out counts a report
    and deletes its event in one transaction, and a count never sees one without the other."""
    counters = select(func.coalesce(func.sum(ReportTally.count), 0)).where(
        ReportTally.project_id.in_(chosen)
    )
    waiting = (
        select(func.count())
        .select_from(ReportEvent)
        .where(ReportEvent.kind == REPORT_CREATED, ReportEvent.project_id.in_(chosen))
    )
    for name in TALLIED & query.keys():
        counters = counters.where(getattr(ReportTally, name).in_(query[name]))
        if name != "status":
            waiting = waiting.where(getattr(ReportEvent, name).in_(query[name]))
    if "new" not in query.get("status", ("new",)):
        return counters  # the fan-out counts every new report as new
    return select(counters.scalar_subquery() + waiting.scalar_subquery())


def newest_days(chosen, within: int = 62) -> list[tuple[date, int]]:
    """The newest UTC days (at most `within` back) on which the `chosen` projects filed
    reports, newest first, each with how many they filed on it and since, by the daily
    counters (read by their key, project and day)."""
    since = utcnow().date() - timedelta(days=within)
    held, days = 0, []
    for day, created in db.session.execute(
        select(ReportDay.day, func.sum(ReportDay.created))
        .where(ReportDay.project_id.in_(chosen), ReportDay.day >= since)
        .group_by(ReportDay.day)
        .order_by(ReportDay.day.desc())
    ):
        held += created
        days.append((day, held))
    return days


def first_day_holding(days: list[tuple[date, int]], reports: int) -> date | None:
    """The first of the fewest newest `days` (newest_days) that hold at least `reports`
    reports; None where they hold fewer."""
    return next((day for day, held in days if held >= reports), None)


def overview(user: User, project_id: uuid.UUID | None, days: int) -> dict:
    if project_id is not None:
        projects.access(user, project_id)  # 404 for a project the user is not in
    chosen = projects.ids_of(user, project_id)
    first_day = utcnow().date() - timedelta(days=days - 1)
    return {
        "open": _open(chosen),
        "per_day": _per_day(chosen, first_day, days),
        "median_hours_to_resolve": _median_hours(chosen, first_day),
    }


def _open(chosen) -> dict:
    by = {
        "by_status": dict.fromkeys(OPEN_STATUSES, 0),
        "by_severity": dict.fromkeys(SEVERITIES, 0),
        "by_category": dict.fromkeys(CATEGORIES, 0),
    }
    rows = db.session.execute(
        select(
            ReportTally.status,
            ReportTally.severity,
            ReportTally.category,
            func.sum(ReportTally.count),
        )
        .where(ReportTally.project_id.in_(chosen), ReportTally.status.in_(OPEN_STATUSES))
        .group_by(ReportTally.status, ReportTally.severity, ReportTally.category)
    )
    for status, severity, category, number in rows:
        by["by_status"][status] += number
        by["by_severity"][severity] += number
        by["by_category"][category] += number
    return by


def _per_day(chosen, first_day: date, days: int) -> list[dict]:
    counted = {
        day: (created, resolved)
        for day, created, resolved in db.session.execute(
            select(ReportDay.day, func.sum(ReportDay.created), func.sum(ReportDay.resolved))
            .where(ReportDay.project_id.in_(chosen), ReportDay.day >= first_day)
            .group_by(ReportDay.day)
        )
    }
    result = []
    for offset in range(days):
        day = first_day + timedelta(days=offset)
        created, resolved = counted.get(day, (0, 0))
        result.append({"date": day.isoformat(), "created": created, "resolved": resolved})
    return result


def _median_hours(chosen, first_day: date) -> float | None:
    """Over the reports resolved in the window (and resolved still): from filed to resolved.
    ReportHours says how many of them each band of hours holds; the middle one or two are
    taken from their band's reports, sorted by the database, and the window's others are not
    sorted (160,000 for 30 days at 10,000,000 reports; docs/performance.md, "The median in a
    band")."""
    bands = dict(
        db.session.execute(
            select(ReportHours.band, func.sum(ReportHours.count))
            .where(ReportHours.project_id.in_(chosen), ReportHours.day >= first_day)
            .group_by(ReportHours.band)
        ).all()
    )
    total = sum(bands.values())
    if not total:
        return None
    middle = ((total - 1) // 2, total // 2)
    below, first, last = 0, None, None
    for band in sorted(bands):
        if first is None and below + bands[band] > middle[0]:
            first, before = band, below
        if below + bands[band] > middle[1]:
            last = band
            break
        below += bands[band]
    if last is None:  # counts taken away before they were added: a moment's disorder
        return _median_of_all(chosen, first_day)
    hours, resolved = hours_to_resolve(), _resolved_since(chosen, first_day)
    if first > 0:
        resolved.append(hours >= literal_column(str(BANDS[first - 1])))
    if last < len(BANDS):
        resolved.append(hours < literal_column(str(BANDS[last])))
    found = db.session.scalars(select(hours).where(*resolved).order_by(hours)).all()
    if len(found) != sum(n for band, n in bands.items() if first <= band <= last):
        return _median_of_all(chosen, first_day)  # a change committed between the two reads
    return round(statistics.mean(found[rank - before] for rank in middle), 2)


def _resolved_since(chosen, first_day: date) -> list:
    since = datetime.combine(first_day, datetime.min.time(), tzinfo=utcnow().tzinfo)
    return [Report.project_id.in_(chosen), Report.resolved_at >= since]


def _median_of_all(chosen, first_day: date) -> float | None:
    """The median from every report resolved in the window, sorted by the database."""
    resolved = _resolved_since(chosen, first_day)
    count = db.session.scalar(select(func.count()).select_from(Report).where(*resolved))
    if not count:
        return None
    hours = hours_to_resolve()
    middle = db.session.scalars(
        select(hours).where(*resolved).order_by(hours)
        .offset((count - 1) // 2).limit(2 - count % 2)
    ).all()  # fmt: skip
    return round(statistics.mean(middle), 2)
