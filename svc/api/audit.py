"""The audit log (docs/api.md §14): read-only, the instance's for its administrators and a
project's for its owners, a page at a time or whole as NDJSON."""

import uuid

from flask import Blueprint, Response, stream_with_context

from svc.api.decorators import described, documents_role, query, response
from svc.api.downloads import download
from svc.auth.guard import admin_required, current_user, login_required
from svc.models import OWNER
from svc.models.base import utcnow
from svc.schemas.audit import AuditEntryOut, AuditPageOut, AuditQuery
from svc.services.instance import audit_log
from svc.services.reporting import export

bp = Blueprint("audit", __name__, url_prefix="/api/v1")

_NDJSON = described(
    responses={
        "200": {
            "description": "A download: one entry per line, oldest first",
            "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
        }
    }
)


def _download(query: dict, name: str) -> Response:
    lines = export.ndjson(AuditEntryOut().dump(entry) for entry in audit_log.everything(query))
    return download(
        stream_with_context(lines), "application/x-ndjson", f"{name}-{utcnow():%Y-%m-%d}.ndjson"
    )


@bp.get("/admin/audit")
@admin_required
@query(AuditQuery())
@response(AuditPageOut())
def instance_audit(params):
    """The instance's audit log, newest first."""
    return audit_log.page(params)


@bp.get("/admin/audit/export")
@admin_required
@query(AuditQuery())
@_NDJSON
def export_instance_audit(params):
    """The instance's audit log as NDJSON, streamed; the page's filters apply."""
    return _download(params, "svc-audit")


@bp.get("/projects/<uuid:project_id>/audit")
@login_required
@documents_role(OWNER)
@query(AuditQuery())
@response(AuditPageOut())
def project_audit(params, project_id: uuid.UUID):
    """A project's entries in the audit log, newest first (its owners)."""
    return audit_log.page(audit_log.of_project(current_user(), project_id, params))


@bp.get("/projects/<uuid:project_id>/audit/export")
@login_required
@documents_role(OWNER)
@query(AuditQuery())
@_NDJSON
def export_project_audit(params, project_id: uuid.UUID):
    """A project's entries as NDJSON, streamed (its owners)."""
    return _download(audit_log.of_project(current_user(), project_id, params), "svc-audit-project")
