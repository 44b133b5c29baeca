"""Export jobs (docs/api.md §8.3.1): an export too large for one answer, written by the
scheduler; its status and progress, then its file."""

import uuid

from flask import Blueprint

from svc.api.decorators import body, response
from svc.api.downloads import stored
from svc.auth.guard import current_user, login_required
from svc.schemas.reports import ExportJobIn, ExportJobOut
from svc.services.reporting import export_jobs

bp = Blueprint("exports", __name__, url_prefix="/api/v1")


@bp.post("/projects/<uuid:project_id>/exports")
@login_required
@body(ExportJobIn())
@response(ExportJobOut(), 202, errors=(404,))
def start_export(data, project_id: uuid.UUID):
    """Export the project's reports the filters choose, as a gzipped CSV or NDJSON file the
    scheduler writes; follow it with GET /exports/{id}."""
    kind = data.pop("format")
    return export_jobs.request(current_user(), project_id, kind, data)


@bp.get("/exports/<uuid:job_id>")
@login_required
@response(ExportJobOut(), errors=(404,))
def get_export(job_id: uuid.UUID):
    """An export of the caller's: its status, progress and, once done, its download."""
    return export_jobs.get_for(current_user(), job_id)


@bp.get("/exports/<uuid:job_id>/file")
@login_required
def export_file(job_id: uuid.UUID):
    """The export's file, gzipped (application/gzip), until it expires."""
    job, found = export_jobs.download_for(current_user(), job_id)
    return stored(found, filename=export_jobs.filename(job))
