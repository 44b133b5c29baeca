"""Projects, their keys and their members (docs/api.md §7)."""

import uuid

from flask import Blueprint

from svc import json_codec
from svc.api.decorators import body, described, documents_role, query, response
from svc.api.downloads import download
from svc.auth.guard import current_user, login_required, session_required
from svc.models import OWNER
from svc.schemas.projects import (
    ErasedOut,
    MemberOut,
    MemberRoleIn,
    ProjectCreateIn,
    ProjectOut,
    ProjectSummaryOut,
    ProjectUpdateIn,
    ProjectUsageOut,
    ReporterIn,
)
from svc.schemas.reports import ReportOut
from svc.services import projects
from svc.services.instance import usage
from svc.services.reporting import retention

bp = Blueprint("projects", __name__, url_prefix="/api/v1/projects")


@bp.post("")
@login_required
@body(ProjectCreateIn())
@response(ProjectOut(), 201, errors=(409,))
def create_project(data):
    """Create a project; the caller owns it."""
    project = projects.create(current_user(), data["name"], data.get("tracking_prefix"))
    return project, {"Location": f"/api/v1/projects/{project.project.id}"}


@bp.get("")
@login_required
@response(ProjectSummaryOut(many=True))
def list_projects():
    """The projects the caller owns or is a member of."""
    return projects.list_for(current_user())


@bp.get("/<uuid:project_id>")
@login_required
@response(ProjectOut())
def get_project(project_id: uuid.UUID):
    """One project; `webhookSecret` for its owner only."""
    return projects.access(current_user(), project_id)


@bp.patch("/<uuid:project_id>")
@login_required
@body(ProjectUpdateIn())
@documents_role(OWNER)
@response(ProjectOut(), errors=(409,))
def update_project(data, project_id: uuid.UUID):
    """Change the name, tracking prefix or settings (merged: keys not sent keep their values)."""
    return projects.update(current_user(), project_id, data)


@bp.delete("/<uuid:project_id>")
@login_required
@documents_role(OWNER)
@response(None, 204)
def delete_project(project_id: uuid.UUID):
    """Delete the project with everything that belongs to it."""
    projects.delete(current_user(), project_id)


@bp.post("/<uuid:project_id>/rotate-api-key")
@session_required
@documents_role(OWNER)
@response(ProjectOut())
def rotate_api_key(project_id: uuid.UUID):
    """Replace the API key; the old one stops working at once."""
    return projects.rotate_api_key(current_user(), project_id)


@bp.post("/<uuid:project_id>/rotate-webhook-secret")
@session_required
@documents_role(OWNER)
@response(ProjectOut())
def rotate_webhook_secret(project_id: uuid.UUID):
    """Replace the secret that keys the Standard Webhooks signature."""
    return projects.rotate_webhook_secret(current_user(), project_id)


@bp.get("/<uuid:project_id>/members")
@login_required
@response(MemberOut(many=True))
def list_members(project_id: uuid.UUID):
    """The people of a project with their roles. They join by invitation (svc.api.invitations):
    POST here is 405."""
    return projects.list_members(current_user(), project_id)


@bp.patch("/<uuid:project_id>/members/<uuid:user_id>")
@session_required
@documents_role(OWNER)
@body(MemberRoleIn())
@response(MemberOut(), errors=(409,))
def change_member_role(data, project_id: uuid.UUID, user_id: uuid.UUID):
    """Set a member's role; the last owner cannot be demoted (409)."""
    return projects.change_role(current_user(), project_id, user_id, data["role"])


@bp.delete("/<uuid:project_id>/members/<uuid:user_id>")
@login_required
@documents_role(OWNER)
@response(None, 204, errors=(409,))
def remove_member(project_id: uuid.UUID, user_id: uuid.UUID):
    """Remove a member (owners), or leave the project (anyone, with their own id); the last
    owner can do neither (409)."""
    projects.remove_member(current_user(), project_id, user_id)


@bp.post("/<uuid:project_id>/reporter-data/erase")
@login_required
@body(ReporterIn())
@documents_role(OWNER)
@response(ErasedOut())
def erase_reporter_data(data, project_id: uuid.UUID):
    """Delete every report of one reporter (any case), and blank the value in what waits to be
    sent: the right to erasure."""
    erased = retention.erase_reporter(current_user(), project_id, data["reporter_identifier"])
    return {"reports": erased}


@bp.get("/<uuid:project_id>/reporter-data")
@login_required
@query(ReporterIn())
@documents_role(OWNER)
@described(
    responses={
        "200": {
            "description": "One report per line, whole, as GET /reports/{id} has it, with the "
            "reporter's status-page replies and the report's files (base64)",
            "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
        }
    }
)
def export_reporter_data(params, project_id: uuid.UUID):
    """Download every report of one reporter: a subject-access request."""
    who = params["reporter_identifier"]
    found = retention.reports_of_reporter(current_user(), project_id, who)
    extra = retention.what_else_is_theirs(found)
    lines = "".join(
        json_codec.dumps({**shown, "reporterReplies": extra[report.id]["replies"],
                          "files": extra[report.id]["files"]}) + "\n"
        for report, shown in zip(found, ReportOut(many=True).dump(found), strict=True)
    )  # fmt: skip
    name = retention.export_file_name(who)
    return download(lines, "application/x-ndjson", name)


@bp.get("/<uuid:project_id>/usage")
@login_required
@response(ProjectUsageOut())
def project_usage(project_id: uuid.UUID):
    """What the project takes up: reports, comments, stored objects, the oldest report."""
    return usage.project_usage(current_user(), project_id)
