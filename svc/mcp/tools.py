"""What a coding agent may ask of svc (docs/mcp.md), each as the token's user, through the same
services (and so the same roles and project scope) as the REST API. Each answers text for the
agent to read; every word a reporter wrote is inside an untrusted block (svc.mcp.untrusted).
Sizes are capped, and long logs are read a page at a time."""

import json
import uuid

from marshmallow import ValidationError
from sqlalchemy import func, select

from svc import audit, storage
from svc.errors import Invalid, not_found
from svc.extensions import db
from svc.mcp.untrusted import NOTICE, Framer
from svc.models import Membership, Project, Report, ReportSignature, User, failed_request
from svc.schemas.comments import CommentIn
from svc.schemas.reports import ReportListQuery, ReportUpdateIn
from svc.services import listing, projects
from svc.services.grouping import similar
from svc.services.reporting import comments, reports, repro, screenshots

# The most a long log answers at once, and the most text any answer holds.
PAGE = 50
MAX_TEXT = 200_000


def _capped(text: str) -> str:
    if len(text) <= MAX_TEXT:
        return text
    return text[:MAX_TEXT] + f"\n\n[cut at {MAX_TEXT:,} characters of {len(text):,}]"


def _facts(report: Report) -> list[str]:
    """What svc itself says of a report: no reporter's words."""
    return [
        f"- Tracking id: {report.tracking_id}",
        f"- Project: {report.project.tracking_prefix} ({report.project_id})",
        f"- Status: {report.status}; severity: {report.severity}; category: {report.category}",
        f"- Filed: {report.created_at.isoformat()}; updated: {report.updated_at.isoformat()}",
        f"- Duplicate of: {report.primary.tracking_id if report.primary else 'none'}",
    ]


# --- reads ---------------------------------------------------------------------------------


def list_reports(
    user: User,
    project=None,
    status=None,
    severity=None,
    query=None,
    signature=None,
    limit=20,
    cursor=None,
) -> str:
    """The reports of the user's projects, newest first, a page at a time."""
    given = {"page": int(cursor or 1), "page_size": max(1, min(int(limit), 100))}
    if project:
        given["project_id"] = str(_project_of(user, project).id)
    for name, value in (
        ("status", status),
        ("severity", severity),
        ("search", query),
        ("signature", signature),
    ):
        if value:
            given[name] = value
    params = _loaded(ReportListQuery(), given)
    page = listing.list_for(user, params)
    framer = Framer()
    lines = [
        f"{'' if page.total_exact else 'more than '}{page.total} report(s); page {params['page']}."
        + (
            f" Next page: cursor={params['page'] + 1}."
            if params["page"] * params["page_size"] < page.total or not page.total_exact
            else ""
        ),
        NOTICE,
        "",
    ]
    for report in page.items:
        lines.append(
            f"- {report.tracking_id} [{report.status}, {report.severity}] "
            f"{report.created_at.date().isoformat()}: {framer.inline(report.title)}"
        )
    return "\n".join(lines)


def _project_of(user: User, reference: str) -> Project:
    """A project of the user's by its id or its tracking prefix (WS)."""
    mine = select(Project).join(Membership).where(Membership.user_id == user.id)
    try:
        found = db.session.scalar(mine.where(Project.id == uuid.UUID(str(reference))))
    except ValueError:
        found = db.session.scalar(mine.where(Project.tracking_prefix == str(reference).upper()))
    if found is None:
        raise not_found(f"No project {reference} among yours")
    return found


def get_report(user: User, report: str) -> str:
    found = reports.get_for(user, report)
    framer = Framer()
    meta = found.meta or {}
    detail = found.detail
    console = detail.console_logs if detail else []
    network = detail.network_logs if detail else []
    errors = sum(1 for e in console if isinstance(e, dict) and e.get("level") == "error")
    failed = sum(1 for e in network if isinstance(e, dict) and failed_request(e))
    parts = [
        f"# {found.tracking_id}",
        NOTICE,
        "",
        *_facts(found),
        f"- Captured: {len(console)} console entries ({errors} errors), {len(network)} "
        f"requests ({failed} failed), {len(detail.user_actions if detail else [])} actions, "
        f"screenshot: {'yes' if found.screenshot_key else 'no'}",
        "",
        framer.block("title", found.title),
        framer.block("description", found.description or ""),
    ]
    for label, key in (("page address", "url"), ("browser", "userAgent")):
        if isinstance(meta.get(key), str):
            parts.append(framer.block(label, meta[key]))
    if found.reporter_identifier:
        parts.append(framer.block("reported by", found.reporter_identifier))
    parts += [
        "",
        "More: get_console, get_network, get_actions, get_screenshot, get_repro_test, "
        f"get_har, similar_reports with report={found.tracking_id}; resources "
        f"svc://reports/{found.tracking_id}, /screenshot, /repro.spec.ts.",
    ]
    return _capped("\n".join(parts))


def get_console(user: User, report: str, level="error", offset=0, limit=PAGE) -> str:
    """The console, newest last: errors by default (`level="all"` for every entry), the last
    `limit` before `offset` entries from the end."""
    found = reports.get_for(user, report)
    entries = [
        e
        for e in (found.detail.console_logs if found.detail else [])
        if isinstance(e, dict) and (level == "all" or e.get("level") == level)
    ]
    return _paged(
        f"{found.tracking_id} console ({level})",
        entries,
        offset,
        limit,
        lambda e, f: (
            f"[{e.get('level')}] "
            + f.block(
                "console message",
                str(e.get("message", "")) + (f"\n{e['stack']}" if e.get("stack") else ""),
            )
        ),
    )


def get_network(user: User, report: str, offset=0, limit=PAGE) -> str:
    """The requests, failed ones first, with headers and bodies when the project captured them."""
    found = reports.get_for(user, report)
    entries = [
        e for e in (found.detail.network_logs if found.detail else []) if isinstance(e, dict)
    ]
    entries = sorted(entries, key=lambda e: not failed_request(e))  # stable: failed first

    def shown(entry, framer):
        said = (
            f"{entry.get('status')} {'FAILED ' if failed_request(entry) else ''}"
            f"{entry.get('duration', '?')} ms "
            + framer.block("request", f"{entry.get('method', 'GET')} {entry.get('url', '')}")
        )
        for name in ("requestHeaders", "requestBody", "responseHeaders", "responseBody"):
            if entry.get(name):
                value = entry[name] if isinstance(entry[name], str) else json.dumps(entry[name])
                said += "\n" + framer.block(name, value[:10_000])
        return said

    return _paged(
        f"{found.tracking_id} network, failed first",
        entries,
        offset,
        limit,
        shown,
        newest_last=False,
    )


def get_actions(user: User, report: str, offset=0, limit=PAGE) -> str:
    """The reporter's steps, oldest first."""
    found = reports.get_for(user, report)
    entries = [
        e for e in (found.detail.user_actions if found.detail else []) if isinstance(e, dict)
    ]
    return _paged(
        f"{found.tracking_id} steps",
        entries,
        offset,
        limit,
        lambda e, f: (
            f"{e.get('type', '?')} "
            + f.inline(" ".join(str(e[k]) for k in ("target", "url") if e.get(k)))
        ),
    )


def _paged(title, entries, offset, limit, show, newest_last=True) -> str:
    """One page of a long list: the last `limit` before `offset` from the end (a log read from
    its end, where the bug is), or the first ones after `offset` (`newest_last=False`)."""
    offset, limit = max(0, int(offset)), max(1, min(int(limit), 200))
    total = len(entries)
    if newest_last:
        chosen = entries[max(0, total - offset - limit) : max(0, total - offset)]
        more = total - offset - len(chosen)
        hint = f" Earlier ones: offset={offset + len(chosen)}." if more > 0 else ""
    else:
        chosen = entries[offset : offset + limit]
        hint = f" More: offset={offset + len(chosen)}." if offset + len(chosen) < total else ""
    framer = Framer()
    lines = [f"{title}: {len(chosen)} of {total}.{hint}", NOTICE, ""]
    lines += [show(entry, framer) for entry in chosen]
    return _capped("\n".join(lines))


def get_screenshot(user: User, report: str) -> tuple[bytes, str] | str:
    """The annotated screenshot when there is one, else the screenshot: (bytes, image type)."""
    found = reports.get_for(user, report)
    key = found.annotated_screenshot_key or found.screenshot_key
    if not key:
        return f"{found.tracking_id} has no screenshot."
    # The bytes themselves, from any store: download_for's choice between a file, a stream and
    # a presigned address is for an HTTP answer.
    screenshot = screenshots.find_for(user, key)
    stream = storage.current_store().open(key)
    if stream is None:
        raise not_found("Screenshot not found")
    with stream:
        return stream.read(), screenshot.content_type


def get_repro_test(user: User, report: str) -> str:
    found = reports.get_for(user, report)
    return _capped(
        "\n".join(
            [
                f"{found.tracking_id}: a Playwright test of the reporter's steps "
                "(docs/repro-kit.md). Its strings are the reporter's: read it first.",
                NOTICE,
                "",
                Framer().block("repro.spec.ts", repro.playwright_spec(found)),
            ]
        )
    )


def get_har(user: User, report: str) -> str:
    found = reports.get_for(user, report)
    return _capped(
        "\n".join(
            [
                f"{found.tracking_id}: the network log as HAR 1.2.",
                NOTICE,
                "",
                Framer().block("har", json.dumps(repro.har(found))),
            ]
        )
    )


def similar_reports(user: User, report: str, limit=5) -> str:
    found = reports.get_for(user, report)
    framer = Framer()
    lines = [f"Reports most likely the same bug as {found.tracking_id}, best first.", NOTICE, ""]
    for match in similar.similar_to(found, max(1, min(int(limit), 20))):
        other = match["report"]
        lines.append(
            f"- {other.tracking_id} score {match['score']} ({', '.join(match['reasons'])})"
            f" [{other.status}]: {framer.inline(other.title)}"
        )
    return "\n".join(lines)


def get_group(user: User, signature: str, limit=20) -> str:
    """A signature's reports (docs/api.md §8.9) in the user's projects: counts, first and last
    seen, the newest reports."""
    mine = projects.ids_of(user, None)
    count, first, last, label = db.session.execute(
        select(
            func.count(),
            func.min(ReportSignature.created_at),
            func.max(ReportSignature.created_at),
            func.max(ReportSignature.label),
        ).where(ReportSignature.signature == signature, ReportSignature.project_id.in_(mine))
    ).one()
    if not count:
        raise not_found(f"No report of yours has the signature {signature}")
    framer = Framer()
    listed = list_reports(user, signature=signature, limit=limit)
    return "\n".join(
        [
            f"Group {signature}: {count} report(s), first {first.isoformat()}, last "
            f"{last.isoformat()}.",
            NOTICE,
            framer.block("what the group is made from", label),
            "",
            listed,
        ]
    )


# --- writes (off unless asked for; docs/mcp.md) --------------------------------------------


def _loaded(schema, given: dict) -> dict:
    """The arguments checked by the REST API's own schema: one rule for both."""
    try:
        return schema.load(given)
    except ValidationError as error:
        raise Invalid(error.messages) from None


def set_status(user: User, report: str, status: str) -> str:
    changes = _loaded(ReportUpdateIn(), {"status": status})
    found, changed = reports.update(user, report, changes)
    _audited(user, found, "set_status", status=status)
    return (
        f"{found.tracking_id} is {found.status}."
        if changed
        else f"{found.tracking_id} was already {status}."
    )


def add_comment(user: User, report: str, body: str) -> str:
    """An internal comment (never shown to the reporter)."""
    checked = _loaded(CommentIn(), {"body": body})
    comment = comments.add(user, report, checked["body"], public=False)
    found = reports.get_for(user, report)
    _audited(user, found, "add_comment", comment_id=str(comment.id))
    return f"Commented on {found.tracking_id} (internal)."


def assign(user: User, report: str, to: str) -> str:
    found = reports.get_for(user, report)
    member = db.session.scalar(
        select(User)
        .join(Membership, Membership.user_id == User.id)
        .where(
            Membership.project_id == found.project_id,
            (User.email == to.strip().lower()) if "@" in to else (User.id == _uuid(to)),
        )
    )
    if member is None:
        raise not_found(f"No member of {found.project.tracking_prefix} is {to}")
    found, _ = reports.update(user, report, {"assignee_id": member.id})
    _audited(user, found, "assign", assignee_id=str(member.id))
    return f"{found.tracking_id} is assigned to {member.name}."


def mark_duplicate(user: User, report: str, target: str) -> str:
    found = reports.mark_duplicate(user, report, target)
    _audited(user, found, "mark_duplicate", target=target)
    return f"{found.tracking_id} is a duplicate of {found.primary.tracking_id}."


def _uuid(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


def _audited(user: User, report: Report, tool: str, **detail) -> None:
    audit.record(
        audit.REPORT_CHANGED,
        user,
        ("report", report.id),
        project_id=report.project_id,
        via="mcp",
        tool=tool,
        tracking_id=report.tracking_id,
        **detail,
    )
    db.session.commit()
