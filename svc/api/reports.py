"""Reports (contract section 6): the widget files them with the project's API key; the team
lists, reads, updates and deletes them with a session or a PAT."""

from flask import Blueprint, request

from svc.api.cors import widget_cors
from svc.api.decorators import (
    api_key_and_address,
    body,
    needs_role,
    query,
    rate_limited,
    response,
)
from svc.auth.guard import api_key_required, current_caller, current_project, login_required
from svc.errors import field_error
from svc.models import MEMBER
from svc.schemas.reports import (
    ReportCreateIn,
    ReportListQuery,
    ReportOut,
    ReportPageOut,
    ReportUpdateIn,
)
from svc.services import listing, reports

bp = Blueprint("reports", __name__, url_prefix="/api/v1/reports")


def _idempotency_key() -> str | None:
    key = request.headers.get(reports.IDEMPOTENCY_HEADER)
    if key is None:
        return None
    if not 1 <= len(key) <= 255 or not all(" " <= char <= "~" for char in key):
        raise field_error(reports.IDEMPOTENCY_HEADER, "1 to 255 printable ASCII characters.")
    return key


@bp.post("")
@widget_cors
@rate_limited("SVC_RATE_LIMIT_INGEST", key_func=api_key_and_address)
@api_key_required
@body(ReportCreateIn())
@response(ReportOut(), 201, also=(200,))
def create_report(data):
    """File a report (the widget). A repeated Idempotency-Key answers 200 with the first report."""
    report, created = reports.create(current_project(), data, _idempotency_key())
    return report, {"Location": f"/api/v1/reports/{report.id}"}, 201 if created else 200


@bp.get("")
@login_required
@query(ReportListQuery())
@response(ReportPageOut())
def list_reports(params):
    """The reports of the caller's projects: filtered, searched, sorted and paged."""
    return listing.list_for(current_caller().user, params)


@bp.get("/<report_ref>")
@login_required
@response(ReportOut())
def get_report(report_ref: str):
    """One report, by its id or its tracking id (WS-12)."""
    return reports.get_for(current_caller().user, report_ref)


@bp.patch("/<report_ref>")
@login_required
@needs_role(MEMBER)
@body(ReportUpdateIn())
@response(ReportOut())
def update_report(data, report_ref: str):
    """Change status, severity, category, title, description or assignee."""
    report, _changes = reports.update(current_caller().user, report_ref, data)
    return report


@bp.delete("/<report_ref>")
@login_required
@needs_role(MEMBER)
@response(None, 204)
def delete_report(report_ref: str):
    """Delete a report and its screenshots."""
    reports.delete(current_caller().user, report_ref)
