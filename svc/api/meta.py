"""Health checks and the API description; public, no credentials."""

from flask import Blueprint, current_app, jsonify
from sqlalchemy import text

from svc import replay, storage
from svc.auth.guard import login_required
from svc.database import begin_read_only
from svc.errors import StorageUnavailable, error_response
from svc.extensions import db
from svc.openapi import api_description

bp = Blueprint("meta", __name__)


@bp.get("/healthz")
def healthz():
    """The process is running."""
    return {"status": "ok"}


@bp.get("/readyz")
def readyz():
    """The database and the object store answer."""
    try:
        begin_read_only(db.session())  # answers while SQLite's write lock is held, too
        db.session.execute(text("SELECT 1"))
    except Exception:  # any failure to reach the database means "not ready", never a 500
        db.session.rollback()
        current_app.logger.warning("readiness check: database unavailable", exc_info=True)
        return error_response(503, "Database unavailable", headers={"Retry-After": "5"})
    try:
        storage.current_store().check()
    except StorageUnavailable:
        current_app.logger.warning("readiness check: object store unavailable", exc_info=True)
        return error_response(503, "Object store unavailable", headers={"Retry-After": "5"})
    return {"status": "ok"}


@bp.get("/api/v1/features")
@login_required
def features():
    """What this installation can offer: replay needs rrweb installed (docs/replay.md); an
    export of more than `syncLimit` reports is a job (docs/api.md §8.3.1)."""
    reason = replay.unavailable()
    return {
        "replay": {"available": reason is None, "reason": reason},
        "export": {"syncLimit": current_app.config["SVC_EXPORT_SYNC_LIMIT"]},
    }


@bp.get("/api/v1/openapi.json")
def openapi():
    """This description."""
    return jsonify(api_description(current_app))
