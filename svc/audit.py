"""The audit log (docs/api.md §14; what it records: docs/security.md): who did what to what,
from where.

`record` adds an entry to the caller's transaction, so that it commits with the action or not at
all. The address is the client's as the proxy rules see it (SVC_TRUSTED_PROXIES), read here so
that no service has to carry it; from the command line there is none. An entry never holds a
secret: callers give names, ids and field names, never a token, a password, a link or a value
that might be one (a webhook URL may carry a chat's token)."""

import uuid

from flask import has_request_context, request

from svc.extensions import db
from svc.models import AuditEntry, User

# Accounts and sessions
SIGN_IN = "sign_in"
SIGN_IN_FAILED = "sign_in_failed"
SIGN_OUT = "sign_out"
ACCOUNT_CREATED = "account_created"
PASSWORD_CHANGED = "password_changed"
PASSWORD_RESET = "password_reset"
SECOND_FACTOR_ADDED = "second_factor_added"
SECOND_FACTOR_REMOVED = "second_factor_removed"
RECOVERY_CODES_CREATED = "recovery_codes_created"
RECOVERY_CODE_USED = "recovery_code_used"
SSO_LINKED = "sso_linked"
TOKEN_CREATED = "token_created"
TOKEN_REVOKED = "token_revoked"
# Projects and their people
PROJECT_CREATED = "project_created"
PROJECT_UPDATED = "project_updated"
PROJECT_DELETED = "project_deleted"
API_KEY_ROTATED = "api_key_rotated"
WEBHOOK_SECRET_ROTATED = "webhook_secret_rotated"
MEMBER_JOINED = "member_joined"
MEMBER_ROLE_CHANGED = "member_role_changed"
MEMBER_REMOVED = "member_removed"
MEMBER_LEFT = "member_left"
INVITATION_CREATED = "invitation_created"
INVITATION_RESENT = "invitation_resent"
INVITATION_REVOKED = "invitation_revoked"
INTEGRATION_CREATED = "integration_created"
INTEGRATION_UPDATED = "integration_updated"
INTEGRATION_DELETED = "integration_deleted"
# Reports
REPORT_DELETED = "report_deleted"
# A change a coding agent made through the MCP server (docs/mcp.md): `via: mcp`.
REPORT_CHANGED = "report_changed"
STATUS_LINK_RENEWED = "status_link_renewed"
ISSUE_CREATED = "issue_created"
REPORTS_EXPORTED = "reports_exported"
RETENTION_APPLIED = "retention_applied"
REPORTER_DATA_ERASED = "reporter_data_erased"
REPORTER_DATA_EXPORTED = "reporter_data_exported"
# The instance
USER_DEACTIVATED = "user_deactivated"
USER_REACTIVATED = "user_reactivated"
ADMIN_GRANTED = "admin_granted"
ADMIN_REVOKED = "admin_revoked"
SECOND_FACTORS_RESET = "second_factors_reset"
RESET_LINK_SENT = "reset_link_sent"
INSTANCE_RESTORED = "instance_restored"

# Every action above, in alphabetical order (the dashboard's constants.js lists them the same).
ACTIONS = tuple(
    sorted(value for name, value in globals().items() if name.isupper() and isinstance(value, str))
)


def record(
    action: str,
    actor: User | None,
    target: tuple[str, object],
    *,
    project_id: uuid.UUID | None = None,
    **detail,
) -> None:
    """Add one entry to the session: `target` is (type, id), the id None where there is none."""
    target_type, target_id = target
    db.session.add(
        AuditEntry(
            actor_id=actor.id if actor else None,
            actor_name=actor.name if actor else None,
            action=action,
            target_type=target_type,
            target_id=None if target_id is None else str(target_id),
            project_id=project_id,
            ip=request.remote_addr if has_request_context() else None,
            detail=detail,
        )
    )
