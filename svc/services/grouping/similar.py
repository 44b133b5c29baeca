"""Similar reports (docs/api.md §8.12): the reports of a report's project most likely to be the
same bug, best first, with the reasons in words, for the team to mark duplicates.

Each report's signature row (svc.services.grouping.signatures) holds what is compared: the
signature, keys of the app's console error, the app's failed request and the page (never the
page's noise: svc.services.grouping.evidence), and the stems of its words.
The candidates are the project's WINDOW newest reports (one read of an index of narrow rows)
and, from before them, the newest that share the signature, the console error or the failed
request (an index each). Each piece of evidence is a chance that two reports are one bug; they
combine as independent chances do, so the score stays within 0..1 and more evidence ranks
higher. Words weigh by how rare they are among the candidates (a word every report has, such as
"checkout" in a shop, says little). The figures behind the weights: bench/similar.py and
docs/performance.md, "Similar reports".
"""

import itertools
import math
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple

from sqlalchemy import String, select, type_coerce

from svc.extensions import db
from svc.models import Report, ReportDetail, ReportDuplicate, ReportSignature
from svc.services import listing
from svc.services.grouping import signatures

# The project's newest reports compared with each report, and how many sharing each part are
# read from before them.
WINDOW = 2000
SHARED = 50
# How likely each shared piece makes two reports one bug.
EVIDENCE = {
    "signature": (0.6, "same signature"),
    "error_key": (0.5, "same console error"),
    "request_key": (0.4, "same failed request"),
    "page_key": (0.15, "same page"),
}
# The most the words alone make it (all of them shared), and the least a candidate needs.
WORDS = 0.85
THRESHOLD = 0.1

_COLUMNS = (
    ReportSignature.report_id,
    ReportSignature.signature,
    ReportSignature.error_key,
    ReportSignature.request_key,
    ReportSignature.page_key,
    ReportSignature.terms,
)


# The candidates' ids as the driver gives them (hex text on SQLite, a uuid on PostgreSQL):
# making 2,000 uuid.UUID objects per lookup was an eighth of its time; only the best are made.
_RAW_COLUMNS = (type_coerce(ReportSignature.report_id, String).label("report_id"), *_COLUMNS[1:])


class _Candidate(NamedTuple):
    signature: str
    error_key: str | None
    request_key: str | None
    page_key: str | None
    terms: frozenset[str]


@dataclass
class Match:
    report_id: uuid.UUID
    score: float
    reasons: list[str] = field(default_factory=list)


def similar_to(report: Report, limit: int) -> list[dict]:
    """[{report, score, reasons}] of up to `limit` reports of the report's project, best first:
    never the report itself, nor those already in its group (its primary, its duplicates)."""
    mine = _row_of(report)
    rows = _candidates(report.project_id, mine)
    grouped = _group_of(report)
    weight = _rarity([row.terms for row in rows.values()])
    rare = max(weight.values(), default=1.0)  # a stem no candidate has: as rare as can be
    my_terms = set(mine["terms"].split())
    my_norm = sum(weight.get(term, rare) for term in my_terms)
    keys = [(name, mine[name], *EVIDENCE[name]) for name in EVIDENCE if mine[name] is not None]
    # One group that no shared error or request explains: words alone, joined
    # (signatures.WORDS_ALONE), or the same page and title.
    explaining = {EVIDENCE["error_key"][1], EVIDENCE["request_key"][1]}
    matches = []
    for raw_id, row in rows.items():
        unlikely, reasons = 1.0, []
        for name, value, chance, words in keys:
            if getattr(row, name) == value:
                unlikely *= 1 - chance
                if name != "signature":  # the parts it is made of say it in words
                    reasons.append(words)
        if row.signature == mine["signature"] and not explaining.intersection(reasons):
            reasons.append("same group")
        common = my_terms.intersection(row.terms)
        if common:
            # The cosine of the two sets of stems, each weighed by its rarity.
            theirs = sum(weight[term] for term in row.terms)
            text = sum(weight[term] for term in common) / math.sqrt(my_norm * theirs)
            unlikely *= 1 - WORDS * text
            if text >= 0.2:
                reasons.append(f"similar words ({round(text * 100)} %)")
        if 1 - unlikely >= THRESHOLD:
            matches.append(Match(raw_id, 1 - unlikely, reasons))
    # The best few only (a duplicate among them may stand for a primary already there), and
    # never the report or its group.
    best = {}
    for match in sorted(matches, key=lambda match: -match.score)[: limit * 4 + len(grouped)]:
        match.report_id = _as_uuid(match.report_id)
        if match.report_id not in grouped:
            best[match.report_id] = match
    ranked = _primaries_for_duplicates(best, grouped)[:limit]
    shown = {
        found.id: found
        for found in db.session.scalars(
            select(Report)
            .where(Report.id.in_([match.report_id for match in ranked]))
            .options(*listing.ANSWER_OPTIONS)
        )
    }
    return [
        {"report": shown[match.report_id], "score": round(match.score, 3), "reasons": match.reasons}
        for match in ranked
        if match.report_id in shown
    ]


def _row_of(report: Report) -> dict:
    """What the report is compared by: its stored row, or (a report just filed, before the
    fan-out signed it) the same made now."""
    stored = report.signature_row
    if stored is not None:
        return {column.key: getattr(stored, column.key) for column in _COLUMNS}
    detail = db.session.get(ReportDetail, report.id)
    made = signatures.row_of(
        report,
        detail.console_logs if detail else [],
        detail.network_logs if detail else [],
        report.project.allowed_origins,
        detail.locale if detail else None,
    )
    return {column.key: made[column.key] for column in _COLUMNS}


def _candidates(project_id: uuid.UUID, mine: dict) -> dict:
    newest = ReportSignature.created_at.desc()
    statements = [
        select(*_RAW_COLUMNS)
        .where(ReportSignature.project_id == project_id)
        .order_by(newest)
        .limit(WINDOW)
    ]
    for name in ("signature", "error_key", "request_key"):
        if mine[name] is not None:
            column = getattr(ReportSignature, name)
            statements.append(
                select(*_RAW_COLUMNS)
                .where(column == mine[name], ReportSignature.project_id == project_id)
                .order_by(newest)
                .limit(SHARED)
            )
    rows = {}
    for statement in statements:
        for raw_id, signature, error_key, request_key, page_key, terms in db.session.execute(
            statement
        ):
            if raw_id not in rows:
                rows[raw_id] = _Candidate(
                    signature, error_key, request_key, page_key, frozenset(terms.split())
                )
    return rows


def _as_uuid(raw) -> uuid.UUID:
    return raw if isinstance(raw, uuid.UUID) else uuid.UUID(str(raw))


def _rarity(documents: list[frozenset[str]]) -> dict[str, float]:
    """Each stem's weight: the square of its inverse document frequency among the candidates."""
    counted = Counter(itertools.chain.from_iterable(documents))
    total = len(documents) + 1
    return {term: (math.log(total / (count + 1)) + 1) ** 2 for term, count in counted.items()}


def _group_of(report: Report) -> set[uuid.UUID]:
    """The report, its primary and the primary's duplicates: already one group."""
    primary = report.duplicate_row.primary_id if report.duplicate_row else report.id
    members = db.session.scalars(
        select(ReportDuplicate.report_id).where(ReportDuplicate.primary_id == primary)
    )
    return {report.id, primary, *members}


def _primaries_for_duplicates(matches: dict, grouped: set) -> list[Match]:
    """Ranked, a duplicate standing for its primary (a report cannot be marked a duplicate of
    a duplicate): the primary keeps the best score and the reasons of its best match."""
    primaries = dict(
        db.session.execute(
            select(ReportDuplicate.report_id, ReportDuplicate.primary_id).where(
                ReportDuplicate.report_id.in_(list(matches))
            )
        ).all()
    )
    best: dict[uuid.UUID, Match] = {}
    for report_id, match in matches.items():
        target = primaries.get(report_id, report_id)
        if target in grouped:
            continue
        if target not in best or best[target].score < match.score:
            best[target] = Match(target, match.score, match.reasons)
    return sorted(best.values(), key=lambda match: -match.score)
