"""Reports (docs/api.md §8): the widget files them with the project's API key; the team
lists, reads, updates and deletes them with a session or a PAT."""

import json

from flask import Blueprint, request, stream_with_context

from svc import i18n
from svc.api.cors import widget_cors
from svc.api.decorators import (
    api_key_and_address,
    body,
    described,
    documents_role,
    query,
    rate_limited,
    response,
)
from svc.api.downloads import download
from svc.auth.guard import (
    api_key_required_remembered,
    current_project,
    current_user,
    login_required,
)
from svc.errors import field_error
from svc.models import MEMBER
from svc.models.base import utcnow
from svc.schemas.bulk import BulkDeletedOut, BulkDeleteIn, BulkUpdatedOut, BulkUpdateIn
from svc.schemas.comments import ActivityOut
from svc.schemas.reports import (
    DuplicateOfIn,
    ExportQuery,
    GroupsOut,
    GroupsQuery,
    ReportCreateIn,
    ReportListQuery,
    ReportOut,
    ReportPageOut,
    ReportUpdateIn,
    ReproductionQueuedOut,
    ReproductionsOut,
    SimilarQuery,
    SimilarReportsOut,
)
from svc.services import listing
from svc.services.grouping import report_markdown, signatures, similar
from svc.services.reporting import export, intake, reports, repro
from svc.services.reproductions import runs

bp = Blueprint("reports", __name__, url_prefix="/api/v1/reports")


def _idempotency_key() -> str | None:
    key = request.headers.get(intake.IDEMPOTENCY_HEADER)
    if key is None:
        return None
    if not 1 <= len(key) <= 255 or not all(" " <= char <= "~" for char in key):
        raise field_error(intake.IDEMPOTENCY_HEADER, "1 to 255 printable ASCII characters.")
    return key


@bp.post("")
@widget_cors
@rate_limited("SVC_RATE_LIMIT_INGEST", key_func=api_key_and_address)
@api_key_required_remembered
@body(ReportCreateIn())
@response(ReportOut(), 201, also=(200,))
def create_report(data):
    """File a report (the widget). A repeated Idempotency-Key answers 200 with the first report."""
    data["locale"] = i18n.locale_of_request(data["locale"], request.accept_languages)
    report, created = intake.create(current_project(), data, _idempotency_key())
    return report, {"Location": f"/api/v1/reports/{report.id}"}, 201 if created else 200


@bp.get("")
@login_required
@query(ReportListQuery())
@response(ReportPageOut())
def list_reports(params):
    """The reports of the caller's projects: filtered, searched, sorted and paged."""
    return listing.list_for(current_user(), params)


@bp.patch("")
@login_required
@documents_role(MEMBER)
@body(BulkUpdateIn())
@response(BulkUpdatedOut(), errors=(404,))
def update_reports(data):
    """Set the same fields on up to 500 reports, all or none; `updated` counts those changed."""
    return {"updated": reports.bulk_update(current_user(), data["ids"], data["set"])}


@bp.delete("")
@login_required
@documents_role(MEMBER)
@body(BulkDeleteIn())
@response(BulkDeletedOut(), errors=(404,))
def delete_reports(data):
    """Delete up to 500 reports with their screenshots, all or none."""
    return {"deleted": reports.bulk_delete(current_user(), data["ids"])}


EXPORT_TYPES = {"csv": "text/csv", "ndjson": "application/x-ndjson"}


@bp.get("/export")
@login_required
@query(ExportQuery())
@described(
    responses={
        "200": {
            "description": "A download: CSV with a header row, or one JSON report per line",
            "content": {kind: {"schema": {"type": "string"}} for kind in EXPORT_TYPES.values()},
        }
    }
)
def export_reports(params):
    """Download every report the list's filters choose, as CSV or NDJSON, streamed."""
    items = export.reports(current_user(), params)
    kind = params["format"]
    body = export.csv_text(items) if kind == "csv" else export.ndjson(items)
    filename = f"svc-reports-{utcnow():%Y-%m-%d}.{kind}"
    return download(stream_with_context(body), EXPORT_TYPES[kind], filename)


@bp.get("/groups")
@login_required
@query(GroupsQuery())
@response(GroupsOut())
def report_groups(params):
    """One bug's reports grouped by signature: the largest groups of the last days first."""
    return {"items": signatures.groups_for(current_user(), params)}


@bp.get("/<report_ref>")
@login_required
@response(ReportOut())
def get_report(report_ref: str):
    """One report, by its id or its tracking id (WS-12)."""
    return reports.get_for(current_user(), report_ref)


@bp.post("/<report_ref>/reproductions")
@login_required
@documents_role(MEMBER)
@response(ReproductionQueuedOut(), 202, errors=(404, 409))
def reproduce_report(report_ref: str):
    """Run the report's steps in a browser against the project's staging origin: queued, then
    run by the scheduler (docs/repro-kit.md, "The runner")."""
    return runs.request(current_user(), report_ref)


@bp.get("/<report_ref>/reproductions")
@login_required
@response(ReproductionsOut(), errors=(404,))
def report_reproductions(report_ref: str):
    """The report's runs on the staging origin, newest first, each with its verdict."""
    return {"items": runs.list_for(current_user(), report_ref), "unavailable": runs.unavailable()}


@bp.get("/<report_ref>/markdown")
@login_required
@described(
    responses={
        "200": {
            "description": "The report as Markdown (docs/api.md §8.10)",
            "content": {"text/markdown": {"schema": {"type": "string"}}},
        }
    }
)
def markdown_of_report(report_ref: str):
    """The report as Markdown: for a chat, a tracker or an AI assistant."""
    tracking_id, text = report_markdown.of_report(current_user(), report_ref)
    return download(text, "text/markdown", f"{tracking_id}.md", inline=True)


@bp.get("/<report_ref>/har")
@login_required
@described(
    responses={
        "200": {
            "description": "The report's network log as a HAR 1.2 file (docs/repro-kit.md)",
            "content": {"application/json": {"schema": {"type": "object"}}},
        }
    }
)
def report_har(report_ref: str):
    """The network log as HAR 1.2, for DevTools and Playwright's routeFromHAR."""
    report = reports.get_for(current_user(), report_ref)
    # ASCII escapes: a captured body's lone surrogate stays valid JSON.
    text = json.dumps(repro.har(report), indent=2)
    return download(text, "application/json", f"{report.tracking_id}.har")


@bp.get("/<report_ref>/repro.spec.ts")
@login_required
@described(
    responses={
        "200": {
            "description": "A Playwright test replaying the report's actions (docs/repro-kit.md)",
            "content": {"text/plain": {"schema": {"type": "string"}}},
        }
    }
)
def report_repro(report_ref: str):
    """A Playwright test that replays the report's clicks, route changes and typed fields."""
    report = reports.get_for(current_user(), report_ref)
    return download(repro.playwright_spec(report), "text/plain", f"{report.tracking_id}.spec.ts")


@bp.get("/<report_ref>/activity")
@login_required
@response(ActivityOut(many=True))
def report_activity(report_ref: str):
    """What happened to a report, oldest first: its creation, each change, comments."""
    return reports.history(current_user(), report_ref)


@bp.patch("/<report_ref>")
@login_required
@documents_role(MEMBER)
@body(ReportUpdateIn())
@response(ReportOut())
def update_report(data, report_ref: str):
    """Change status, severity, category, title, description or assignee."""
    report, _changes = reports.update(current_user(), report_ref, data)
    return report


@bp.get("/<report_ref>/similar")
@login_required
@query(SimilarQuery())
@response(SimilarReportsOut())
def similar_reports(params, report_ref: str):
    """The reports of its project most likely to be the same bug, best first, with reasons."""
    report = reports.get_for(current_user(), report_ref)
    return {"items": similar.similar_to(report, params["limit"])}


@bp.post("/<report_ref>/duplicate-of")
@login_required
@documents_role(MEMBER)
@body(DuplicateOfIn())
@response(ReportOut())
def mark_duplicate(data, report_ref: str):
    """Mark the report a duplicate of another of its project: it closes and follows that one."""
    return reports.mark_duplicate(current_user(), report_ref, data["target"])


@bp.delete("/<report_ref>/duplicate-of")
@login_required
@documents_role(MEMBER)
@response(ReportOut(), errors=(409,))
def unmark_duplicate(report_ref: str):
    """Undo "duplicate of": the report is open again (`new`), on its own."""
    return reports.unmark_duplicate(current_user(), report_ref)


@bp.delete("/<report_ref>")
@login_required
@documents_role(MEMBER)
@response(None, 204)
def delete_report(report_ref: str):
    """Delete a report and its screenshots."""
    reports.delete(current_user(), report_ref)
