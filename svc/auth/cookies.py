"""The three session cookies of docs/api.md §2.1, set and cleared in one place."""

from flask import Response, current_app, request

from svc.auth.sessions import SessionTokens
from svc.models.base import utcnow

ACCESS_COOKIE = "svc_access_token"
REFRESH_COOKIE = "svc_refresh_token"
CSRF_COOKIE = "svc_csrf_token"
CSRF_HEADER = "X-CSRF-Token"
REFRESH_PATH = "/api/v1/auth"
# The half-signed-in state (svc.auth.pending): sent to the second-factor endpoints only.
PENDING_COOKIE = "svc_pending_sign_in"
PENDING_PATH = "/api/v1/auth/second-factor"


def cookies_secure() -> bool:
    """Whether svc's cookies carry `Secure`: SVC_COOKIE_SECURE, or for `auto` whether this
    request came over HTTPS."""
    mode = current_app.config["SVC_COOKIE_SECURE"]
    return request.is_secure if mode == "auto" else mode == "true"


def _max_age(expires_at, now) -> int:
    return max(0, int((expires_at - now).total_seconds()))


def set_session_cookies(response: Response, session_tokens: SessionTokens) -> None:
    now = utcnow()
    secure = cookies_secure()
    session_age = _max_age(session_tokens.session_expires_at, now)
    response.set_cookie(
        ACCESS_COOKIE,
        session_tokens.access_token,
        path="/",
        httponly=True,
        samesite="Lax",
        secure=secure,
        max_age=_max_age(session_tokens.access_expires_at, now),
    )
    response.set_cookie(
        REFRESH_COOKIE,
        session_tokens.refresh_token,
        path=REFRESH_PATH,
        httponly=True,
        samesite="Strict",
        secure=secure,
        max_age=session_age,
    )
    # Readable by the dashboard's script, which echoes it in the X-CSRF-Token header.
    response.set_cookie(
        CSRF_COOKIE,
        session_tokens.csrf_token,
        path="/",
        httponly=False,
        samesite="Lax",
        secure=secure,
        max_age=session_age,
    )


def clear_session_cookies(response: Response) -> None:
    secure = cookies_secure()
    response.delete_cookie(ACCESS_COOKIE, path="/", httponly=True, samesite="Lax", secure=secure)
    response.delete_cookie(
        REFRESH_COOKIE, path=REFRESH_PATH, httponly=True, samesite="Strict", secure=secure
    )
    response.delete_cookie(CSRF_COOKIE, path="/", samesite="Lax", secure=secure)


def set_pending_cookie(response: Response, token: str, max_age: int) -> None:
    response.set_cookie(
        PENDING_COOKIE,
        token,
        path=PENDING_PATH,
        httponly=True,
        samesite="Strict",
        secure=cookies_secure(),
        max_age=max_age,
    )


def clear_pending_cookie(response: Response) -> None:
    response.delete_cookie(
        PENDING_COOKIE, path=PENDING_PATH, httponly=True, samesite="Strict", secure=cookies_secure()
    )
