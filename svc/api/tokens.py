"""Personal access tokens (docs/api.md §6)."""

import uuid

from flask import Blueprint

from svc.api.decorators import body, response
from svc.auth import pats
from svc.auth.guard import current_user, login_required, session_required
from svc.schemas.tokens import TokenCreatedOut, TokenCreateIn, TokenOut

bp = Blueprint("tokens", __name__, url_prefix="/api/v1/tokens")


@bp.post("")
@session_required
@body(TokenCreateIn())
@response(TokenCreatedOut(), 201)
def create_token(data):
    """Create a token; its value is shown in this answer only."""
    return pats.issue(current_user(), data["name"], data["expires_in_days"], data["scopes"])


@bp.get("")
@login_required
@response(TokenOut(many=True))
def list_tokens():
    """The caller's tokens, newest first, without their values."""
    return pats.list_for(current_user())


@bp.delete("/<uuid:token_id>")
@login_required
@response(None, 204)
def revoke_token(token_id: uuid.UUID):
    """Revoke a token at once."""
    pats.revoke(current_user(), token_id)
