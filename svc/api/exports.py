"""Export jobs (docs/api.md §8.3.1): an export too large for one answer, written by the
scheduler; its status and progress, then its file."""

import uuid

from flask import Blueprint, redirect, send_file

from svc.api.decorators import body, response
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
    if found.url:
        return redirect(found.url, 302)
    answer = send_file(
        found.path or found.stream,
        mimetype=found.content_type,
        download_name=export_jobs.filename(job),
        as_attachment=True,
        conditional=found.path is not None,
    )
    if found.stream is not None and found.size is not None:
        answer.content_length = found.size
    answer.cache_control.private = True
    return answer
