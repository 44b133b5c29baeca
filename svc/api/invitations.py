"""Invitations to projects (docs/api.md §7.1): owners invite, list, resend and revoke; the
invitee previews and accepts, signed in or with a new account."""

import uuid

from flask import Blueprint, request

from svc import rate_limits
from svc.api.auth import start_session
from svc.api.decorators import body, documents_role, rate_limited, response, signed_in_user
from svc.auth.guard import (
    current_caller,
    current_user,
    login_required,
    session_required,
    signed_in_if_credentials,
)
from svc.errors import field_error
from svc.models import OWNER
from svc.schemas.invitations import (
    AcceptedOut,
    AcceptIn,
    InvitationIn,
    InvitationLinkOut,
    InvitationOut,
    InvitationPreviewOut,
    InvitationTokenIn,
)
from svc.schemas.second_factors import PendingSignInOut
from svc.services.identity import invitations

bp = Blueprint("invitations", __name__, url_prefix="/api/v1")


def _invited_address() -> str:
    """Rate-limit key: the address an invitation (new, or resent) goes to, so that no one can
    make svc mail one address without end."""
    invitation_id = request.view_args.get("invitation_id")
    if invitation_id is not None:
        email = invitations.address_of(invitation_id) or ""
    else:
        body = request.get_json(silent=True)
        # Any JSON may arrive here before the schema refuses it: a list or a string has no email.
        email = str(body.get("email", "")) if isinstance(body, dict) else ""
    return "invited|" + rate_limits.key_part(email.strip().lower())


def _with_url(invitation, url):
    invitation.url = url
    return invitation


@bp.post("/projects/<uuid:project_id>/invitations")
@session_required
@rate_limited("SVC_RATE_LIMIT_INVITE", key_func=signed_in_user, shared=True)
@rate_limited("SVC_RATE_LIMIT_INVITE_ADDRESS", key_func=_invited_address, shared=True)
@body(InvitationIn())
@documents_role(OWNER)
@response(InvitationLinkOut(), 201, errors=(409,))
def invite(data, project_id: uuid.UUID):
    """Invite an e-mail address with a role; the answer and the mail carry the link."""
    return _with_url(*invitations.invite(current_user(), project_id, data["email"], data["role"]))


@bp.get("/projects/<uuid:project_id>/invitations")
@login_required
@documents_role(OWNER)
@response(InvitationOut(many=True))
def list_invitations(project_id: uuid.UUID):
    """Pending invitations, newest first (expired ones too, so they can be resent)."""
    return invitations.pending(current_user(), project_id)


@bp.delete("/invitations/<uuid:invitation_id>")
@session_required
@documents_role(OWNER)
@response(None, 204)
def revoke_invitation(invitation_id: uuid.UUID):
    """Revoke a pending invitation: its link stops working."""
    invitations.revoke(current_user(), invitation_id)


@bp.post("/invitations/<uuid:invitation_id>/resend")
@session_required
@rate_limited("SVC_RATE_LIMIT_INVITE", key_func=signed_in_user, shared=True)
@rate_limited("SVC_RATE_LIMIT_INVITE_ADDRESS", key_func=_invited_address, shared=True)
@documents_role(OWNER)
@response(InvitationLinkOut())
def resend_invitation(invitation_id: uuid.UUID):
    """Mail a new link, valid for 7 more days; the old link stops working."""
    return _with_url(*invitations.resend(current_user(), invitation_id))


@bp.post("/invitations/preview")
@rate_limited("SVC_RATE_LIMIT_AUTH")
@body(InvitationTokenIn())
@response(InvitationPreviewOut(), errors=(404,))
def preview_invitation(data):
    """What an invitation link offers, for the page that accepts it."""
    invitation = invitations.lookup(data["token"])
    return {
        "email": invitation.email,
        "role": invitation.role,
        "project": invitation.project,
        "invited_by": invitation.invited_by,
        "expires_at": invitation.expires_at,
        "account_exists": invitations.account_exists(invitation),
    }


@bp.post("/invitations/accept")
@signed_in_if_credentials
@rate_limited("SVC_RATE_LIMIT_AUTH")
@body(AcceptIn())
@response(AcceptedOut(), errors=(403, 404, 409), also={201: AcceptedOut(), 202: PendingSignInOut()})
def accept_invitation(data):
    """Join the project: signed in, as the invited address; or, without a session, with a
    `name` and `password` that create the account (201, signed in)."""
    caller = current_caller()
    if caller is not None:
        access = invitations.accept_as(caller.user, data["token"])
        return {"user": caller.user, "project": access}
    missing = [name for name in ("name", "password") if name not in data]
    if missing:
        raise field_error(
            missing[0], "Needed to create your account; or sign in first and send the token alone."
        )
    user, access = invitations.accept_with_new_account(
        data["token"], data["name"], data["password"]
    )
    return start_session(user, {"user": user, "project": access}, 201)
