"""Issue trackers (docs/api.md §15): a project's integrations, a report's issues, and the
address each tracker sends its events to."""

import uuid

from flask import Blueprint, request

from svc.api.decorators import body, documents_role, query, response
from svc.auth.guard import current_user, login_required, session_required
from svc.models import MEMBER, OWNER
from svc.schemas.integrations import (
    CallListQuery,
    CallOut,
    CallPageOut,
    EventAcceptedOut,
    ExternalIssueOut,
    IntegrationCreateIn,
    IntegrationOut,
    IntegrationUpdateIn,
    IssueCreateIn,
    TestOut,
    TrackerEventOut,
    load_config,
)
from svc.services.reporting import reports
from svc.services.trackers import integrations, tracker_calls, tracker_events

bp = Blueprint("integrations", __name__, url_prefix="/api/v1")


@bp.post("/projects/<uuid:project_id>/integrations")
@session_required
@body(IntegrationCreateIn())
@documents_role(OWNER)
@response(IntegrationOut(), 201)
def create_integration(data, project_id: uuid.UUID):
    """Connect a tracker; the answer shows `webhookSecret`, once."""
    integration = integrations.create(current_user(), project_id, data)
    return integration, {"Location": f"/api/v1/integrations/{integration.id}"}


@bp.get("/projects/<uuid:project_id>/integrations")
@login_required
@response(IntegrationOut(many=True))
def list_integrations(project_id: uuid.UUID):
    """The project's integrations, oldest first (never their tokens)."""
    return integrations.list_for(current_user(), project_id)


@bp.get("/integrations/<uuid:integration_id>")
@login_required
@response(IntegrationOut())
def get_integration(integration_id: uuid.UUID):
    return integrations.get_for(current_user(), integration_id)


@bp.patch("/integrations/<uuid:integration_id>")
@session_required
@body(IntegrationUpdateIn())
@documents_role(OWNER)
@response(IntegrationOut())
def update_integration(data, integration_id: uuid.UUID):
    """Change any field; `config` keys not sent keep their values; a new `token` replaces it."""
    return integrations.update_for(current_user(), integration_id, data, load_config)


@bp.delete("/integrations/<uuid:integration_id>")
@session_required
@documents_role(OWNER)
@response(None, 204)
def delete_integration(integration_id: uuid.UUID):
    """Disconnect; the issues made stay in the tracker, their links in svc go."""
    integrations.delete(current_user(), integration_id)


@bp.post("/integrations/<uuid:integration_id>/test")
@login_required
@documents_role(MEMBER)
@response(TestOut())
def test_integration(integration_id: uuid.UUID):
    """One harmless call to the tracker; 422 with the tracker's words when it fails."""
    return integrations.test(current_user(), integration_id)


@bp.get("/integrations/<uuid:integration_id>/deliveries")
@login_required
@query(CallListQuery())
@response(CallPageOut())
def list_calls(params, integration_id: uuid.UUID):
    """The calls made to the tracker in the background (auto-create, close, reopen), newest
    first, as the webhook delivery log shows deliveries."""
    return tracker_calls.calls_page(
        current_user(), integration_id, params["page"], params["page_size"]
    )


@bp.post("/integrations/<uuid:integration_id>/calls/<uuid:call_id>/retry")
@login_required
@documents_role(MEMBER)
@response(CallOut(), 202, errors=(404, 409))
def retry_call(integration_id: uuid.UUID, call_id: uuid.UUID):
    """Make a call that failed for good again: a new cycle of attempts, due now."""
    return tracker_calls.retry_call(current_user(), integration_id, call_id)


@bp.get("/integrations/<uuid:integration_id>/events")
@login_required
@response(TrackerEventOut(many=True))
def list_events(integration_id: uuid.UUID):
    """The last 20 deliveries received from the tracker, and what svc made of each."""
    return tracker_events.recent_events(current_user(), integration_id)


@bp.post("/integrations/<uuid:integration_id>/events")
@response(EventAcceptedOut(), 202, errors=(401,))
def receive_event(integration_id: uuid.UUID):
    """The tracker's webhook: signed with the integration's secret (401 otherwise), applied
    once per delivery id."""
    headers = {name.lower(): value for name, value in request.headers.items()}
    outcome = tracker_events.apply_event(integration_id, headers, request.get_data())
    return {"detail": outcome}


@bp.post("/reports/<report_ref>/issues")
@login_required
@body(IssueCreateIn())
@documents_role(MEMBER)
@response(ExternalIssueOut(), 201, errors=(409, 502))
def create_issue(data, report_ref: str):
    """Create the report's issue in a tracker now; 502 with the tracker's words if it refuses.
    A duplicate's new issue is its primary's (docs/api.md §8.11)."""
    report = reports.workable_for(current_user(), report_ref)
    return integrations.create_issue(current_user(), report, data["integration_id"])
