"""The decorators that say which credentials an endpoint accepts (docs/api.md §2).

`@login_required`: a session cookie (with CSRF on unsafe methods) or a personal access token.
`@session_required`: a session cookie only; a personal access token gets 403 (creating tokens,
changing the password: a token must not outlive or lock out the person behind it).
The caller is then `current_caller()`; views hand `current_user()` to the services.
`@admin_required`: as @login_required, for administrators of the instance only.
`@signed_in_if_credentials`: either, or none at all (then the view decides).
`@api_key_required`: a project's API key in `X-API-Key`; the project is then `current_project()`.
`@pending_sign_in_required`: the half-signed-in cookie of a password sign-in that waits for its
second factor (svc.auth.pending); the state is then `current_pending_sign_in()`.
"""

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Literal

from flask import current_app, g, request

from svc import database
from svc.auth import api_keys, pats, pending, sessions, tokens
from svc.auth.cookies import ACCESS_COOKIE, CSRF_COOKIE, CSRF_HEADER, PENDING_COOKIE
from svc.errors import AccountDeactivated, Forbidden, ProjectChanged, unauthorized
from svc.extensions import db
from svc.models import Project, User

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
SESSION_OR_PAT = ("session", "pat")
SESSION_ONLY = ("session",)
API_KEY = ("api_key",)
API_KEY_HEADER = "X-API-Key"


@dataclass(frozen=True)
class Caller:
    user: User
    kind: Literal["session", "pat"]
    session_id: uuid.UUID | None = None


def current_caller() -> Caller | None:
    """Who is calling; None only under @signed_in_if_credentials for a caller without any."""
    return g.caller


def current_user() -> User | None:
    """The user calling; None only under @signed_in_if_credentials for a caller without any."""
    return g.caller.user if g.caller else None


def _bearer_value(header: str) -> str:
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        raise unauthorized("Malformed Authorization header; expected 'Bearer <token>'")
    return value.strip()


def _check_csrf(session_id: uuid.UUID) -> None:
    """Double submit, bound to the session: header == cookie == HMAC(session id)."""
    header = request.headers.get(CSRF_HEADER, "")
    cookie = request.cookies.get(CSRF_COOKIE, "")
    expected = tokens.csrf_token_for(current_app.config["SECRET_KEY"], session_id)
    # Both comparisons always run, so timing says nothing about which one failed.
    header_ok = tokens.same_secret(header, expected)
    cookie_ok = tokens.same_secret(cookie, expected)
    if not (header and header_ok and cookie_ok):
        raise Forbidden(
            "Missing or invalid CSRF token: send the svc_csrf_token cookie's "
            "value in the X-CSRF-Token header"
        )


def authenticate_user() -> Caller:
    """Who is calling, by the rules of docs/api.md §3 and §2; raises 401 or 403. A
    deactivated account's sessions and tokens are refused (docs/api.md §5)."""
    caller = _caller()
    if not caller.user.active:
        raise AccountDeactivated()
    return caller


def _caller() -> Caller:
    authorization = request.headers.get("Authorization")
    if authorization is not None:
        # A bearer token decides, even when cookies came along; it is never cookie-authenticated.
        token = pats.live_token(_bearer_value(authorization))
        if request.method in UNSAFE_METHODS and not _scope_allows(token):
            raise Forbidden(
                f"This token's scopes ({token.scopes}) do not allow this change: a token with "
                "reports:read only reads, one with reports:write changes reports alone"
            )
        return Caller(user=db.session.get(User, token.user_id), kind="pat")
    if API_KEY_HEADER in request.headers:
        raise unauthorized(
            "An API key authenticates a project, not a user: use a session "
            "or a personal access token here"
        )
    access_token = request.cookies.get(ACCESS_COOKIE)
    if not access_token:
        raise unauthorized()
    _read_only_transaction()
    session = sessions.session_for_access_token(access_token)
    if session is None:
        raise unauthorized("Session expired or ended; sign in again")
    if request.method in UNSAFE_METHODS:
        _check_csrf(session.id)
    return Caller(user=sessions.user_of(session), kind="session", session_id=session.id)


def _scope_allows(token) -> bool:
    """A change is a token's to make when it has no scope (all), or reports:write and the
    change is to a report (its status, comments, assignee, duplicates)."""
    if token.scopes is None:
        return True
    return pats.may_write_reports(token) and request.path.startswith("/api/v1/reports/")


def _read_only_transaction() -> None:
    """Checking a session only reads, so it runs in a read-only transaction, which on SQLite
    takes no write lock (a token's check writes: it records the token's use)."""
    database.begin_read_only(db.session())


def _end_transaction() -> None:
    """Before the view parses the body (svc.database.end_transaction); a view that only reads
    then reads without SQLite's write lock."""
    database.end_transaction(then_read_only=request.method not in UNSAFE_METHODS)


def _guarded(check: Callable[[], None], accepted: tuple[str, ...], **marks) -> Callable:
    """A decorator that runs `check` (which authenticates and sets g.caller or g.project, or
    raises) before the view, then ends the credential's transaction; `accepted` and `marks` are
    what svc.openapi and the role tests read off the view."""

    def decorator(view: Callable) -> Callable:
        @wraps(view)
        def wrapper(*args, **kwargs):
            check()
            _end_transaction()
            return view(*args, **kwargs)

        wrapper.accepted_credentials = accepted
        for name, value in marks.items():
            setattr(wrapper, name, value)
        return wrapper

    return decorator


def _any_user() -> None:
    g.caller = authenticate_user()


def _browser_session() -> None:
    g.caller = authenticate_user()
    _require_browser_session()


def _require_browser_session() -> None:
    if g.caller.kind != "session":
        raise Forbidden("This needs a signed-in browser session; a personal access token cannot")


def _administrator() -> None:
    g.caller = authenticate_user()
    if not g.caller.user.is_admin:
        raise Forbidden("Only administrators of this svc can do this")


def _administrator_in_browser() -> None:
    _administrator()
    _require_browser_session()


def _user_if_credentials() -> None:
    credentials = (
        "Authorization" in request.headers
        or API_KEY_HEADER in request.headers
        or ACCESS_COOKIE in request.cookies
    )
    g.caller = authenticate_user() if credentials else None


def _project() -> None:
    g.project = authenticate_project()


login_required = _guarded(_any_user, SESSION_OR_PAT)
session_required = _guarded(_browser_session, SESSION_ONLY)
# @login_required, for the instance's administrators only (403 for anyone else).
admin_required = _guarded(_administrator, SESSION_OR_PAT, needs_admin=True)
# What changes who holds power (an admin's changes to accounts): a browser session only, so
# that a token cannot outlive the person behind it by handing power on.
admin_session_required = _guarded(_administrator_in_browser, SESSION_ONLY, needs_admin=True)
# For an endpoint that serves both a signed-in user and someone without an account yet
# (accepting an invitation): credentials that come along are checked as @login_required
# checks them; without any, current_caller() is None.
signed_in_if_credentials = _guarded(_user_if_credentials, ("public", *SESSION_OR_PAT))


def current_project() -> Project:
    return g.project


def authenticate_project(remembered: bool = False) -> Project:
    """The project whose API key the request carries; 401 without a valid one, 403 when the
    project lists allowed origins and the request's Origin is not among them. `remembered`:
    as this process last read it (svc.auth.api_keys.for_api_key)."""
    api_key = request.headers.get(API_KEY_HEADER, "").strip()
    if not api_key:
        raise unauthorized("Missing X-API-Key header")
    project = api_keys.for_api_key(api_key, remembered=remembered)
    if project is None:
        raise unauthorized("Invalid API key")
    origin = request.headers.get("Origin")
    if not api_keys.origin_allowed(project, origin):
        raise Forbidden(f"Origin {origin} is not allowed to send reports to this project")
    return project


api_key_required = _guarded(_project, API_KEY)


def _remembered_project() -> None:
    g.project = authenticate_project(remembered=True)


def _checked_afresh_unless_filed(view: Callable) -> Callable:
    """The view writes against the project as this process remembered it, and raises
    ProjectChanged, having written nothing, when the project changed since (svc.services.
    intake): the key is then checked afresh, against the database, and the view runs once more.
    Any other failure is answered after that check too, so that a key rotated or an origin
    removed in another process answers 401 or 403 before a complaint about the body, as ever."""

    def afresh() -> None:
        db.session.rollback()
        api_keys.forget(g.project.api_key)
        _remembered_project()
        _end_transaction()

    @wraps(view)
    def wrapper(*args, **kwargs):
        try:
            return view(*args, **kwargs)
        except ProjectChanged:
            afresh()
            return view(*args, **kwargs)
        except Exception:
            afresh()
            raise

    return wrapper


def api_key_required_remembered(view: Callable) -> Callable:
    """@api_key_required for the widget's report: the project without a read of its own, as
    this process last read it for the key; the view's write must check it (ProjectChanged)."""
    return _guarded(_remembered_project, API_KEY)(_checked_afresh_unless_filed(view))


def current_pending_sign_in():
    return g.pending_sign_in


def _pending_sign_in() -> None:
    found = pending.find(request.cookies.get(PENDING_COOKIE, ""))
    if found is None:
        raise unauthorized(
            "No sign-in is waiting for a second factor, or it expired (5 minutes): sign in again"
        )
    g.pending_sign_in = found


pending_sign_in_required = _guarded(_pending_sign_in, ("pending_sign_in",))
