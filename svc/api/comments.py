"""Comments on reports (docs/api.md §8.7)."""

import uuid

from flask import Blueprint

from svc.api.decorators import body, documents_role, response
from svc.auth.guard import current_user, login_required
from svc.models import MEMBER
from svc.schemas.comments import CommentIn, CommentOut, NewCommentIn
from svc.services.reporting import comments

bp = Blueprint("comments", __name__, url_prefix="/api/v1")


@bp.post("/reports/<report_ref>/comments")
@login_required
@documents_role(MEMBER)
@body(NewCommentIn())
@response(CommentOut(), 201)
def add_comment(data, report_ref: str):
    """Comment on a report; `@Name` or `@email` of a member mentions them. A `public` one is
    shown on the report's status page and mailed to its reporter."""
    return comments.add(current_user(), report_ref, data["body"], data["public"])


@bp.get("/reports/<report_ref>/comments")
@login_required
@response(CommentOut(many=True))
def list_comments(report_ref: str):
    """A report's comments, oldest first."""
    return comments.list_for(current_user(), report_ref)


@bp.patch("/comments/<uuid:comment_id>")
@login_required
@documents_role(MEMBER)
@body(CommentIn())
@response(CommentOut())
def edit_comment(data, comment_id: uuid.UUID):
    """Change the text of a comment: its author only."""
    return comments.edit(current_user(), comment_id, data["body"])


@bp.delete("/comments/<uuid:comment_id>")
@login_required
@documents_role(MEMBER)
@response(None, 204)
def delete_comment(comment_id: uuid.UUID):
    """Delete a comment: its author, or any owner of the project."""
    comments.delete(current_user(), comment_id)
