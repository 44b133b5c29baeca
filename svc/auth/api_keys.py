"""Project API keys (`X-API-Key`): which project a key opens, and from which origins.

The key is publishable (it ships in the customer's page), so the origin rule is what keeps
another site from filing reports with it when a project lists its allowed origins.
"""

from flask import current_app
from sqlalchemy import bindparam, select

from svc.auth import tokens
from svc.database import begin_read_only
from svc.extensions import db
from svc.models import Project

_BY_API_KEY = select(Project).where(Project.api_key == bindparam("api_key"))
_REMEMBERED = "svc_projects_by_api_key"  # in app.extensions: this process's, for this app
_REMEMBERED_AT_MOST = 1024  # keys of projects, so few; a full memory starts afresh


def for_api_key(api_key: str, *, remembered: bool = False) -> Project | None:
    """The project an `X-API-Key` value belongs to; None for anything else. Every report and
    upload asks, so it reads without waiting for SQLite's write lock; the caller (the guard)
    ends the transaction before anything is written.

    `remembered`: the project as this process last read it for the key, without reading, for
    a caller whose write checks it is still so (the report's numbering checks the project's
    `version`, svc.services.reporting.intake): the look-up was a third of a report's filing. A
    project read so is detached from the session, to be shared by the requests that follow."""
    if not api_key.startswith(tokens.API_KEY_PREFIX) or len(api_key) > 64:
        return None
    known = current_app.extensions.setdefault(_REMEMBERED, {}) if remembered else None
    if known is not None and (project := known.get(api_key)) is not None:
        return project
    begin_read_only(db.session())
    project = db.session.scalar(_BY_API_KEY, {"api_key": api_key})
    if known is not None and project is not None:
        db.session.expunge(project)
        if len(known) >= _REMEMBERED_AT_MOST:
            known.clear()
        known[api_key] = project
    return project


def forget(api_key: str) -> None:
    """The project remembered for the key changed: the next look-up reads it afresh."""
    current_app.extensions.get(_REMEMBERED, {}).pop(api_key, None)


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
