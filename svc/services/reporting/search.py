"""Report search: every white-space separated term must occur, case-insensitively, in the title
or the description; %, _ and \\ are matched literally.

The rule itself is a LIKE per term, which is what decides. In front of it sits an index so that a
search does not read every report:

- SQLite: the FTS5 table `reports_fts` (trigram tokenizer, no positions). It yields the rows
  that hold the spaced trigrams of every term of 3 characters or more (spaced_trigrams: those
  that cover each character once, not all of them); shorter terms are left to the
  LIKE alone. FTS5 folds case at least as widely as SQLite's LIKE does, so the candidates include
  every row the LIKE accepts. Its rowids are those of `report_search_rows`, which also holds each
  report's id, project, title, description and filing time, so that a search's total and its
  newest-first page are read there alone.
  A new report is indexed by the fan-out (svc.models.search_index, a batch to a statement:
  half the work of a report to a statement, and none of it under the filing's write lock);
  until then its created event waits, and a search takes the reports of those events as
  candidates too, so a report is found from its 201 on. Triggers keep indexed reports in step
  with edits and deletions. A search with no other filter reads its matches newest rowid
  first, once, for its count and its newest-first page (newest_matches); each row's
  `filed_by` (the newest filing up to it) tells whether that page is the list's.
- PostgreSQL: `reports.search_text`, a stored generated column holding
  lower(title || '\n' || description), with a pg_trgm GIN index (migration e2b7c4a1f9d3).
  `search_text LIKE lower('%term%')` is what ILIKE on title or description answers (in a UTF-8
  database ILIKE lowers both sides; a term holds no white space, so no match spans the line
  break), without lowering every candidate's text again. The index leads with the filing day
  (btree_gin; migration a7c3e9b1d5f2), so that a count can stop among the newest reports
  (window_pays), and a newest-first page that lies among them is read there alone.

The measurements behind each choice here: docs/performance.md, "What made it fast".
"""

import math
from datetime import UTC, date, datetime, time

from sqlalchemy import (
    Integer,
    Text,
    and_,
    column,
    func,
    literal_column,
    null,
    or_,
    select,
    table,
    text,
    union_all,
)

from svc.models import Report
from svc.models.base import UTCDateTime
from svc.models.search_index import NOT_INDEXED, SEARCH_ROWS

TRIGRAM = 3
# What reading a candidate report and sorting it costs, in steps over one entry of a sort index:
# on SQLite a step only looks the entry up among the FTS rows, on PostgreSQL it reads the report.
CANDIDATE_TO_INDEX_ENTRY_COST = {"sqlite": 10, "postgresql": 1}
# The databases whose walk of a sort index stops where a budget of entries ends (walk_budget).
_BOUNDED_WALKS = frozenset({"postgresql"})
# The databases whose search index leads with the filing day (migration a7c3e9b1d5f2), and
# what a count of a common word pays for one of its window's entries, in reports of the table
# that the same count over every report pays for (measured at a million: docs/performance.md).
_WINDOWED_COUNTS = frozenset({"postgresql"})
WINDOW_ENTRY_TO_REPORT_COST = 12
_FTS_ROWIDS = "SELECT rowid FROM reports_fts WHERE reports_fts MATCH :fts_query"
_FTS = table("reports_fts", column("rowid", Integer))
# Not mapped: the ORM never reads it, and SQLite has no such column.
_SEARCH_TEXT = literal_column("reports.search_text", Text)
_FTS_CANDIDATES = text(f"SELECT report_id FROM report_search_rows WHERE rowid IN ({_FTS_ROWIDS})")
# Each report walked past is looked up among the FTS rows (one index seek), rather than every FTS
# row being mapped to its report before the walk starts. SQLite does not start a query from a
# correlated EXISTS (a test checks the plan), so this also keeps it walking the sort index.
_FTS_HOLDS_REPORT = text(
    "EXISTS (SELECT 1 FROM report_search_rows WHERE report_id = reports.id "
    f"AND rowid IN ({_FTS_ROWIDS}))"
)


def condition(search: str, dialect: str, lead: bool = True):
    """The WHERE clause for a search string (not empty) on a database of the given dialect.

    lead=False keeps SQLite from starting at the FTS candidates: it then walks the index of the
    query's sort and checks each entry against them (see walk_sort_index)."""
    terms = search.split()
    exact = and_(*(_contains(term, dialect, Report.title, Report.description) for term in terms))
    query = _fts_query_for(terms, dialect)
    if query is None:
        return exact
    waiting = Report.id.in_(NOT_INDEXED)
    if not lead:
        return and_(or_(_FTS_HOLDS_REPORT.bindparams(fts_query=query), waiting), exact)
    candidates = _FTS_CANDIDATES.bindparams(fts_query=query)
    return and_(or_(Report.id.in_(candidates.columns(report_id=Report.id.type)), waiting), exact)


def newest_matches(search: str, dialect: str, projects, up_to: int):
    """SQLite: the matches of the given projects (a SELECT of their ids) as (rowid, id,
    created_at) rows: the indexed newest first by the FTS rowid, no further than `up_to`, and
    every one not indexed yet (rowid None), each by its id. None where reports are the better
    place to look: on PostgreSQL, and for a search with no term long enough for the FTS index
    (report_search_rows has no index by project).

    One read gives the count (up to `up_to`) and, for a newest-first list, its page: rowids
    follow the order reports were indexed in, close to their filing order, and `filed_before`
    bounds the filing time of every row not read. FTS5 reads its rows in rowid order itself,
    so the read stops at `up_to`; the LIKE is checked on report_search_rows' copy of the text,
    and each match's id and filing time are read there too: none is looked up among the
    reports."""
    terms = search.split()
    query = _fts_query_for(terms, dialect)
    if query is None:
        return None
    rows = SEARCH_ROWS.c
    indexed = (
        select(rows.rowid, rows.report_id.label("id"), rows.created_at)
        .select_from(_FTS.join(SEARCH_ROWS, rows.rowid == _FTS.c.rowid))
        .where(
            text("reports_fts MATCH :fts_query").bindparams(fts_query=query),
            rows.project_id.in_(projects),
            *(_contains(term, dialect, rows.title, rows.description) for term in terms),
        )
        .order_by(_FTS.c.rowid.desc())
        .limit(up_to)
        .subquery()
    )
    waiting = select(null().label("rowid"), Report.id, Report.created_at).where(
        Report.id.in_(NOT_INDEXED),
        Report.project_id.in_(projects),
        *(_contains(term, dialect, Report.title, Report.description) for term in terms),
    )
    return union_all(select(indexed), waiting)


def filed_before(rowid: int):
    """The newest filing time of the reports indexed before the given FTS rowid (None: none
    was), as report_search_rows keeps it (migration c8d2f4a6b1e3)."""
    rows = SEARCH_ROWS.c
    return select(rows.filed_by).where(rows.rowid < rowid).order_by(rows.rowid.desc()).limit(1)


def counts_in_windows(dialect: str) -> bool:
    """Whether a search's count may first look among the newest reports (window_pays)."""
    return dialect in _WINDOWED_COUNTS


def window_pays(window: int, reports: int) -> bool:
    """Whether a search first counts its matches among the newest `window` reports, of the
    `reports` it could match. Matches up to the count's limit among the newest prove the
    total's lower bound as well as anywhere, and on PostgreSQL such a count reads the window's
    entries of the search index, where a count over all reads every report that holds the
    search's trigrams (140,000 for a common word at ten million). A search with fewer matches
    there counts again over all, so the window is tried only where it costs at most half as
    much as that."""
    return window > 0 and 2 * WINDOW_ENTRY_TO_REPORT_COST * window <= reports


def wider_window(window: int, found: int, page_end: int) -> int:
    """The window to look in next for a newest-first page, where `window` reports held `found`
    matches, fewer than the page's end: at that rate, one that holds about twice the page
    (more than twice `window`, so that window_pays soon stops the widening). Where none was
    found, 0: window_pays refuses it."""
    return window * 2 * page_end // found if found else 0


def filed_since(day: date):
    """The condition that a report was filed on the given UTC day or after, as the search
    index holds the day (the expression of migration a7c3e9b1d5f2, 'day' a literal for the
    planner to match it)."""
    filed = func.date_trunc(literal_column("'day'"), Report.created_at, type_=UTCDateTime())
    return filed >= datetime.combine(day, time(), UTC)  # bound as the column: UTC, no zone


def steer_planner(session, search: str, dialect: str) -> None:
    """On PostgreSQL, keep a search of trigram-sized terms off a sequential scan for the rest of
    the transaction. Its planner prices ILIKE as cheap as =, so it read every row rather than
    use the trigram indexes. Shorter terms are left alone: no trigram index can serve them.

    JIT compilation goes off with it: a scan that is switched off is priced at 10^10, so any
    query of the transaction that still scans (the sum of the projects' report counts) looked
    costly enough to compile, and compiling took far longer than the query."""
    if dialect == "postgresql" and all(len(term) >= TRIGRAM for term in search.split()):
        # The count too reads the trigram index: walking another index for its first
        # matches (it stops at a cap) is as blind as the page's guess (see steer_page).
        _set_for_the_transaction(session, enable_seqscan="off", enable_indexscan="off", jit="off")


def walk_sort_index(dialect: str, matches: int, page_end: int, reports: int) -> bool:
    """Whether a page of a search that matches many reports is cheaper read by walking the
    index of its sort and checking each entry than by reading and sorting every match. The
    walk steps over about page_end * reports / matches entries before the page is full."""
    cost = CANDIDATE_TO_INDEX_ENTRY_COST.get(dialect, 1)
    return page_end * reports < cost * matches * matches


def bounds_walks(dialect: str) -> bool:
    """Whether a search past its count limit walks the sort index within walk_budget."""
    return dialect in _BOUNDED_WALKS


def walk_budget(dialect: str, page_end: int, reports: int) -> int | None:
    """How many entries of the sort index a search past its count limit walks, looking for its
    page, before it reads every match instead (None: no bound). At sqrt(cost x page_end x
    reports) the two meet: a search that has not filled its page by then matches fewer than
    budget / cost reports, which cost no more than the walk to read. PostgreSQL only: SQLite
    sorts what a bounded walk found, so its query would read the whole budget, and there a
    step of the walk costs a tenth of a match read."""
    if not bounds_walks(dialect):
        return None
    return math.isqrt(CANDIDATE_TO_INDEX_ENTRY_COST[dialect] * page_end * reports) + 1


def steer_page(session, dialect: str, walk: bool) -> None:
    """Hold PostgreSQL's planner to walk_sort_index's choice for the page query, for the rest of
    the transaction. It guesses how many reports a trigram search matches from a sample of a
    hundred texts, so a word that no sampled text held was read as rare (every match read and
    sorted for a page of 20, where walking the sort index reads a tenth of them), and a word
    that one of them held as common, whatever its count. SQLite is steered by the search
    condition (see condition)."""
    if dialect == "postgresql":
        _set_for_the_transaction(
            session,
            enable_bitmapscan="off" if walk else "on",
            enable_indexscan="on" if walk else "off",
        )


def _set_for_the_transaction(session, **settings: str) -> None:
    """PostgreSQL settings that hold until the transaction ends (as SET LOCAL), in one
    statement."""
    calls = ", ".join(f"set_config('{name}', :{name}, true)" for name in settings)
    session.execute(text(f"SELECT {calls}"), settings)


def _fts_query_for(terms: list[str], dialect: str) -> str | None:
    """The FTS5 query for a search's terms, or None where no FTS index serves them: on
    PostgreSQL, or when every term is shorter than a trigram."""
    indexable = [term for term in terms if len(term) >= TRIGRAM]
    return fts_query(indexable) if dialect == "sqlite" and indexable else None


def fts_query(terms: list[str]) -> str:
    """An FTS5 query for rows holding the spaced trigrams of every term (spaced_trigrams). The
    index keeps no positions (detail=none), so even every trigram of a term finds a superset of
    the rows where it occurs as written; the LIKE decides. Each trigram is a quoted string, so
    nothing in a term is FTS5 syntax."""
    trigrams = dict.fromkeys(trigram for term in terms for trigram in spaced_trigrams(term))
    return " AND ".join('"' + trigram.replace('"', '""') + '"' for trigram in trigrams)


def spaced_trigrams(term: str) -> list[str]:
    """The trigrams of a term that cover each of its characters once where they can: every
    third, and the last (8 characters: 3 of its 6; none under 3). A newest-first read starts at
    the end of each trigram's list in every segment of the index, so each trigram asked for
    costs a search whatever it narrows, and the overlapping ones rarely exclude a row that the
    others let through (docs/performance.md, "Fewer trigrams, and no report read, for a
    search")."""
    starts = list(range(0, len(term) - TRIGRAM + 1, TRIGRAM))
    if starts and starts[-1] != len(term) - TRIGRAM:
        starts.append(len(term) - TRIGRAM)
    return [term[start : start + TRIGRAM] for start in starts]


def _contains(term: str, dialect: str, title, description):
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    pattern = f"%{escaped}%"
    if dialect != "sqlite":
        return _SEARCH_TEXT.like(func.lower(pattern), escape="\\")
    # SQLite's LIKE ignores case as its lower() folds it (ASCII letters only), so ILIKE's
    # lower(description) would only copy every candidate's text once more: a third of the time
    # of a broad search.
    return or_(title.like(pattern, escape="\\"), description.like(pattern, escape="\\"))
