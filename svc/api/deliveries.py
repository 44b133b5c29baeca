"""A project's webhook delivery log, and redelivery (docs/api.md §12)."""

import uuid

from flask import Blueprint

from svc.api.decorators import documents_role, query, response
from svc.auth.guard import current_user, login_required
from svc.models import MEMBER
from svc.schemas.deliveries import DeliveryListQuery, DeliveryOut, DeliveryPageOut
from svc.services.team import delivery_log

bp = Blueprint(
    "deliveries", __name__, url_prefix="/api/v1/projects/<uuid:project_id>/webhook-deliveries"
)


@bp.get("")
@login_required
@query(DeliveryListQuery())
@response(DeliveryPageOut())
def list_deliveries(params, project_id: uuid.UUID):
    """The project's deliveries, newest first."""
    return delivery_log.page_for(current_user(), project_id, params["page"], params["page_size"])


@bp.post("/<uuid:delivery_id>/redeliver")
@login_required
@documents_role(MEMBER)
@response(DeliveryOut(), 202)
def redeliver(project_id: uuid.UUID, delivery_id: uuid.UUID):
    """Send a delivery again: a new cycle of attempts, with the same delivery id."""
    return delivery_log.redeliver(current_user(), project_id, delivery_id)
