"""Project API keys (`X-API-Key`): which project a key opens, and from which origins.

The key is publishable (it ships in the customer's page), so the origin rule is what keeps
another site from filing reports with it when a project lists its allowed origins.
"""

from sqlalchemy import bindparam, select

from svc.auth import tokens
from svc.database import begin_read_only
from svc.extensions import db
from svc.models import Project

_BY_API_KEY = select(Project).where(Project.api_key == bindparam("api_key"))


def for_api_key(api_key: str) -> Project | None:
    """The project an `X-API-Key` value belongs to; None for anything else. Every report and
    upload asks, so it reads without waiting for SQLite's write lock; the caller (the guard)
    ends the transaction before anything is written."""
    if not api_key.startswith(tokens.API_KEY_PREFIX) or len(api_key) > 64:
        return None
    begin_read_only(db.session())
    return db.session.scalar(_BY_API_KEY, {"api_key": api_key})


def normalize_origin(origin: str) -> str:
    """An origin as projects store it and requests are compared with it."""
    return origin.rstrip("/").lower()


def origin_allowed(project: Project, origin: str | None) -> bool:
    """Whether a request from `origin` may use the project's key: any origin while the project
    lists none, else only those it lists. A request without an Origin header (a script, not a
    browser) is not a cross-origin one."""
    if not origin or not project.allowed_origins:
        return True
    return normalize_origin(origin) in project.allowed_origins
