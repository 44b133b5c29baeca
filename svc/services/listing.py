"""The report list (docs/api.md §8.2): filters, search, sorts and pages, and which reports a
user may see."""

from dataclasses import dataclass

from sqlalchemy import and_, exists, func, not_, or_, select, union_all
from sqlalchemy.orm import selectinload

from svc.config import setting
from svc.extensions import db
from svc.models import (
    SEVERITY_RANK,
    ExternalIssue,
    Project,
    Report,
    ReportDuplicate,
    ReportSignature,
    Reproduction,
    User,
    tracking_id_of,
)
from svc.models.reproductions import NOT_REPRODUCED, REPRODUCED
from svc.services import projects
from svc.services.reporting import search, stats

# What a report's answer shows beside its own row (its signature, its group: docs/api.md §8.9,
# §8.11), loaded with it wherever an answer shows reports.
ANSWER_OPTIONS = (
    selectinload(Report.signature_row),
    selectinload(Report.duplicate_row).selectinload(ReportDuplicate.primary),
    selectinload(Report.duplicate_rows),
)

_SORT_COLUMNS = {
    "created_at": Report.created_at,
    "updated_at": Report.updated_at,
    "severity": Report.severity_rank,
}
# The sorts that an index holds whole (see Report), so that the database can read them in order.
_INDEXED_SORTS = frozenset({"-created_at", "-updated_at", "-severity"})


@dataclass(frozen=True)
class Page:
    """One page of a list, as every paged answer has it (reports, webhook deliveries)."""

    items: list
    total: int
    page: int
    page_size: int
    total_exact: bool = True  # False: there are more than `total` (a search's, past its limit)


class Shown:
    """A row with fields only an answer needs beside it (a delivery's tracking id, an
    account's factors), its own fields read through: nothing is set on the row itself."""

    def __init__(self, row, **extra):
        self._row = row
        self.__dict__.update(extra)

    def __getattr__(self, name):
        return getattr(self._row, name)


def with_tracking_ids(rows: list) -> list[Shown]:
    """`rows` (each with a `report_id`) with their reports' tracking ids: one query; None for a
    report deleted since."""
    ids = {row.report_id for row in rows if row.report_id is not None}
    found = (
        db.session.execute(
            select(Report.id, Project.tracking_prefix, Report.number)
            .join(Project, Project.id == Report.project_id)
            .where(Report.id.in_(ids))
        ).all()
        if ids
        else []
    )
    names = {report_id: tracking_id_of(prefix, number) for report_id, prefix, number in found}
    return [Shown(row, tracking_id=names.get(row.report_id)) for row in rows]


def visible_to(user: User):
    """The condition that a report is in one of the user's projects."""
    return Report.project_id.in_(projects.ids_of(user, None))


def filter_conditions(user: User, query: dict) -> dict[str, object]:
    """The conditions of the list's filters but project and search (docs/api.md §8.2): those
    the projects' report counts cannot answer, by the name of the filter each comes from."""
    conditions = {}
    for name, column in (("status", Report.status), ("category", Report.category)):
        if name in query:
            conditions[name] = _one_of(column, query[name])
    if "severity" in query:
        ranks = [SEVERITY_RANK[severity] for severity in query["severity"]]
        conditions["severity"] = _one_of(Report.severity_rank, ranks)
    assignee = query.get("assignee")
    if assignee == "me":
        conditions["assignee"] = Report.assignee_id == user.id
    elif assignee == "none":
        conditions["assignee"] = Report.assignee_id.is_(None)
    elif assignee is not None:
        conditions["assignee"] = Report.assignee_id == assignee
    if "created_after" in query:
        conditions["created_after"] = Report.created_at >= query["created_after"]
    if "created_before" in query:
        conditions["created_before"] = Report.created_at < query["created_before"]
    if "reporter" in query:
        conditions["reporter"] = func.lower(Report.reporter_identifier).contains(
            query["reporter"].lower(), autoescape=True
        )
    if "has_screenshot" in query:
        pictured = or_(
            Report.screenshot_key.is_not(None), Report.annotated_screenshot_key.is_not(None)
        )
        conditions["has_screenshot"] = pictured if query["has_screenshot"] else not_(pictured)
    if "linked" in query:
        linked = exists().where(ExternalIssue.report_id == Report.id)
        conditions["linked"] = linked if query["linked"] else not_(linked)
    if query.get("duplicates", "include") != "include":
        merged = Report.id.in_(select(ReportDuplicate.report_id))
        conditions["duplicates"] = merged if query["duplicates"] == "only" else not_(merged)
    if "signature" in query:
        signed = select(ReportSignature.report_id).where(
            ReportSignature.signature == query["signature"]
        )
        conditions["signature"] = Report.id.in_(signed)
    if "reproduced" in query:
        verdict = REPRODUCED if query["reproduced"] else NOT_REPRODUCED
        last_runs = select(Reproduction.report_id).where(
            Reproduction.is_last, Reproduction.verdict == verdict
        )
        conditions["reproduced"] = Report.id.in_(last_runs)
    return conditions


def _one_of(column, values: list):
    # One value as "=", so that the planners pick the filter's index as before.
    return column == values[0] if len(values) == 1 else column.in_(values)


def list_for(user: User, query: dict) -> Page:
    conditions = [visible_to(user)]  # those that the projects' report counts answer
    if "project_id" in query:
        conditions.append(Report.project_id == query["project_id"])
    report_conditions = filter_conditions(user, query)
    searched = query.get("search", "").strip()
    dialect = db.session.get_bind().dialect.name
    matching = []
    if searched:
        search.steer_planner(db.session, searched, dialect)
        matching.append(search.condition(searched, dialect))

    filters = conditions + list(report_conditions.values())
    chosen_projects = projects.ids_of(user, query.get("project_id"))
    page_end = query["page"] * query["page_size"]
    sort = query["sort"]
    column = _SORT_COLUMNS[sort.lstrip("-")]
    order = [column.desc() if sort.startswith("-") else column.asc()]
    # Ties: newest first, then id, so that pages are stable. No term twice: the ORDER BY must
    # be exactly the columns of an index (see Report) for the database to walk it.
    if column is not Report.created_at:
        order.append(Report.created_at.desc())
    order.append(Report.id.asc())
    # A search counts its matches up to a limit, or to the end of the page asked for (so a
    # page past the last has its exact total): counting every match of a common word grew
    # with the table (docs/api.md §8.2).
    up_to = max(setting("SVC_SEARCH_COUNT_LIMIT"), page_end) + 1 if matching else None
    skipped = page_end - query["page_size"]  # the reports before the page
    page_ids = None  # the page, where the count read it already or the newest hold it
    if not (report_conditions or matching):
        total = _report_count(chosen_projects)
    elif not matching and report_conditions.keys() <= stats.TALLIED:
        total = db.session.scalar(stats.tallied(chosen_projects, query))
    else:
        total = None
        if not report_conditions:
            total, page_ids = _newest_indexed(
                searched, dialect, chosen_projects, up_to, skipped, query["page_size"],
                newest_first=sort == "-created_at",
            )  # fmt: skip
        if total is None and matching:
            newest, newest_page = _newest_matches(
                filters + matching, chosen_projects, dialect, order, up_to, skipped,
                query["page_size"], newest_first=sort == "-created_at",
            )  # fmt: skip
            if (newest or 0) >= up_to:
                total = up_to  # past the limit: the page is walked off the sort index
            elif newest_page:
                page_ids = newest_page
            else:
                total, page_ids = _matches(
                    filters + matching, order, up_to, skipped, query["page_size"]
                )
        if total is None:
            chosen = select(Report.id).where(*filters, *matching).limit(up_to)
            total = db.session.scalar(select(func.count()).select_from(chosen.subquery()))
    total_exact = up_to is None or total < up_to
    if not total_exact:
        total = up_to - 1
    if page_ids is None and searched and sort in _INDEXED_SORTS:
        matching, page_ids = _search_page(
            filters, searched, dialect, order, total if total_exact else None, skipped,
            query["page_size"],
        )  # fmt: skip
    if page_ids is not None:
        chosen, skipped = Report.id.in_(page_ids), 0
    elif sort == "severity" and not matching:
        chosen = Report.id.in_(_least_severe_first(filters, order[1:], page_end))
    else:
        chosen = and_(*filters, *matching)
    items = db.session.scalars(
        select(Report)
        # Projects in a second query: joined to each report, they led SQLite's planner to fetch
        # every report of the user's projects and sort them, instead of walking the sort index.
        .options(selectinload(Report.project), *ANSWER_OPTIONS)
        .where(chosen)
        .order_by(*order)
        .limit(query["page_size"])
        .offset(skipped)
    ).all()
    return Page(
        items=list(items),
        total=total,
        page=query["page"],
        page_size=query["page_size"],
        total_exact=total_exact,
    )


def _newest_indexed(searched, dialect, chosen, up_to, skipped, page_size, newest_first):
    """SQLite: how many reports of the chosen projects match, up to `up_to` of the indexed,
    and for a `newest_first` list its page's ids, from one read of the matches, the newest
    indexed first (search.newest_matches), sorted for the page in the same query. Where more
    than `up_to` match, the page found among those read is the list's only if it ends after
    the newest filing of every report not read (search.filed_before); else None, and the page
    is walked off the sort index. (None, None) where the search index does not serve the
    search."""
    matches = search.newest_matches(searched, dialect, chosen, up_to)
    if matches is None:
        return None, None
    matches = matches.subquery()
    if not newest_first:
        return db.session.scalar(select(func.count()).select_from(matches)), None
    counted = select(
        matches,
        func.count().over().label("total"),
        func.count(matches.c.rowid).over().label("indexed"),
        func.min(matches.c.rowid).over().label("oldest"),
    ).subquery()
    page = db.session.execute(
        select(counted)
        .order_by(counted.c.created_at.desc(), counted.c.id.asc())
        .limit(page_size)
        .offset(skipped)
    ).all()
    if not page:  # past the last page: counted alone
        return db.session.scalar(select(func.count()).select_from(matches)), None
    total, read = page[0].total, page[0].indexed
    if read >= up_to:
        unread = db.session.scalar(search.filed_before(page[0].oldest))
        if len(page) < page_size or (unread is not None and page[-1].created_at <= unread):
            return total, None
    return total, [row.id for row in page]


def _newest_matches(conditions, chosen, dialect, order, up_to, skipped, page_size, newest_first):
    """How many of the newest SVC_SEARCH_COUNT_WINDOW reports of the chosen projects match (from
    the first of the newest days that hold them, by the daily counters), no further than
    up_to, where search.window_pays has a search look there before it reads every report: up_to
    of them are a lower bound of its total. And for a `newest_first` list, the list's page where
    they hold it whole (every report before them is older); too few for it: a window as much
    wider as the rate found asks (search.wider_window), while one pays. (None, None) where none
    pays; the page None where none holds it."""
    if not search.counts_in_windows(dialect):
        return None, None
    window, reports = setting("SVC_SEARCH_COUNT_WINDOW"), _report_count(chosen)
    days = stats.newest_days(chosen) if search.window_pays(window, reports) else []
    while search.window_pays(window, reports):
        first_day = stats.first_day_holding(days, window)
        if first_day is None:
            break
        since = [*conditions, search.filed_since(first_day)]
        found, page = _matches(since, order, up_to, skipped, page_size)
        held = newest_first and len(page or ()) == page_size
        if (found or 0) >= up_to or held or not newest_first:
            return found, page if held else None
        window = search.wider_window(window, found or 0, skipped + page_size)
    return None, None


def _matches(conditions: list, order: list, up_to: int, skipped: int, page_size: int):
    """A search's matches read once, no further than `up_to`: how many, and the ids of the page
    asked for among them, in the list's order. Counted first and paged after, a search built
    the same index bitmap twice and read its matches twice (docs/performance.md). No page
    where `up_to` match (it would be of the first read); (None, None) for a page past the
    last: the count is then a query of its own."""
    sorted_by = [term.element for term in order]  # the columns, from their ASC/DESC
    matches = select(Report.id, *sorted_by).where(*conditions).limit(up_to).subquery()
    counted = select(matches, func.count().over().label("total")).subquery()
    rows = db.session.execute(
        select(counted.c.id, counted.c.total)
        .order_by(*_in_order_of(counted, order))
        .limit(page_size)
        .offset(skipped)
    ).all()
    if not rows:
        return None, None
    total = rows[0].total
    # Past up_to the page is of the first matches read, not the first in the list's order.
    return total, [row.id for row in rows] if total < up_to else None


def _search_page(filters, searched, dialect, order, counted, skipped, page_size):
    """How a search reads its page in a sort that an index holds: the search's condition for
    the page's query, and the page's ids where a walk of bounded length found them (else None).
    `counted`: how many match, or None past the count's limit.

    Neither planner can tell how many reports a search matches (SQLite always starts from the
    FTS matches; PostgreSQL guesses from a sample), and the service has just counted them: with
    the count known, walk_sort_index decides between walking the sort index and reading every
    match. Past the limit the count cannot tell, so the walk goes first, for at most
    search.walk_budget entries, and where it has not filled the page by then, every match is
    read and sorted: at worst about twice the cheaper of the two (docs/performance.md, "A walk
    with a budget")."""
    page_end = skipped + page_size
    walk = counted is None or search.walk_sort_index(dialect, counted, page_end, _report_count())
    search.steer_page(db.session, dialect, walk)
    if not walk:
        return [search.condition(searched, dialect)], None
    walking = [search.condition(searched, dialect, lead=False)]
    if counted is not None or not search.bounds_walks(dialect):
        return walking, None
    budget = search.walk_budget(dialect, page_end, _report_count())
    walked = (
        select(Report.id, *(term.element for term in order), and_(*walking).label("hit"))
        .where(*filters)
        .order_by(*order)
        .limit(budget)
        .subquery()
    )
    page_ids = db.session.scalars(
        select(walked.c.id)
        .where(walked.c.hit)
        .order_by(*_in_order_of(walked, order))
        .limit(page_size)
        .offset(skipped)
    ).all()
    if len(page_ids) == page_size:
        return walking, page_ids
    # More match than the page needs (past the limit), so the budget ran out first.
    search.steer_page(db.session, dialect, walk=False)
    return [search.condition(searched, dialect)], None


def _in_order_of(subquery, order: list) -> list:
    """The list's ORDER BY terms on a subquery's columns of the same names."""
    columns = {c.name: c for c in subquery.c}
    return [term.modifier(columns[term.element.name]) for term in order]


def _least_severe_first(filters: list, ties: list, page_end: int):
    """The ids of the first page_end reports least severe first (ties in the order given): the
    first page_end of each severity, in the order the sort index holds them. No index holds
    that order whole (its ties run the other way), and both databases sorted every report of
    the least severe kind to find a page (docs/performance.md)."""
    arms = [
        select(Report.id)
        .where(*filters, Report.severity_rank == rank)
        .order_by(*ties)
        .limit(page_end)
        .subquery()
        for rank in SEVERITY_RANK.values()
    ]
    return union_all(*(select(arm.c.id) for arm in arms))


def _report_count(projects=None) -> int:
    """How many reports the given projects (by default every project) hold, from their counters
    rather than a count over every report."""
    summed = select(func.coalesce(func.sum(Project.report_count), 0))
    if projects is not None:
        summed = summed.where(Project.id.in_(projects))
    return db.session.scalar(summed)
