"""The instance's administration (docs/api.md §5), for its administrators only."""

import uuid

from flask import Blueprint

from svc.api.decorators import body, response
from svc.auth.guard import admin_required, admin_session_required, current_user
from svc.schemas.admin import AdminUserIn, AdminUserOut, HealthOut, InstanceStatusOut
from svc.schemas.projects import InstanceUsageOut
from svc.services.identity import second_factors
from svc.services.instance import admin, usage

bp = Blueprint("admin", __name__, url_prefix="/api/v1/admin")


@bp.get("/users")
@admin_required
@response(AdminUserOut(many=True))
def list_users():
    """Every account, oldest first, with its last sign-in."""
    return admin.list_users()


@bp.patch("/users/<uuid:user_id>")
@admin_session_required
@body(AdminUserIn())
@response(AdminUserOut(), errors=(409,))
def update_user(data, user_id: uuid.UUID):
    """Deactivate or reactivate an account, grant or take administration; the last active
    administrator can do neither to themself (409)."""
    return admin.update_user(current_user(), user_id, data)


@bp.delete("/users/<uuid:user_id>/factors")
@admin_session_required
@response(None, 204, errors=(404,))
def reset_factors(user_id: uuid.UUID):
    """Remove every second factor and recovery code of an account (a lost phone)."""
    second_factors.reset_factors(current_user(), user_id)


@bp.post("/users/<uuid:user_id>/reset-link")
@admin_required
@response(None, 202, errors=(409,))
def send_reset_link(user_id: uuid.UUID):
    """Mail the account a password reset link (as "Forgot password?" does)."""
    admin.send_reset_link(current_user(), user_id)


@bp.get("/status")
@admin_required
@response(InstanceStatusOut())
def instance_status():
    """Whether mail is on, its sender, and how many mails wait or failed."""
    return admin.status()


@bp.get("/health")
@admin_required
@response(HealthOut())
def instance_health():
    """Which scheduler is active, what the outboxes hold, whether the store and the database
    answer (docs/deployment.md)."""
    return admin.health()


@bp.get("/usage")
@admin_required
@response(InstanceUsageOut())
def instance_usage():
    """Reports and stored objects per project and in all, and the database's size."""
    return usage.instance_usage()
