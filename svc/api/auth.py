"""Accounts and browser sessions (docs/api.md §3)."""

from flask import Blueprint, after_this_request, request

from svc.api.decorators import body, rate_limited, response, signed_in_user
from svc.auth import pending, sessions
from svc.auth.cookies import (
    ACCESS_COOKIE,
    REFRESH_COOKIE,
    clear_session_cookies,
    set_pending_cookie,
    set_session_cookies,
)
from svc.auth.guard import current_caller, current_user, login_required, session_required
from svc.errors import APIError
from svc.schemas.second_factors import PendingSignInOut
from svc.schemas.users import (
    ForgotPasswordIn,
    LoginIn,
    PasswordChangeIn,
    RegisterIn,
    ResetPasswordIn,
    SignInMethodsOut,
    UserOut,
)
from svc.services.identity import password_resets, second_factors, users

bp = Blueprint("auth", __name__, url_prefix="/api/v1/auth")


def _send_cookies(session_tokens) -> None:
    @after_this_request
    def add_cookies(resp):
        set_session_cookies(resp, session_tokens)
        return resp


def sign_in(user, method: str = "password") -> None:
    """Start a session for the user; the answer carries its cookies."""
    _send_cookies(users.sign_in(user, method))


def start_session(user, answer, status: int = 200):
    """Every way in with a password ends here (signing in, registering, an invitation's new
    account), so that one sign-in policy holds for each: with a second factor due (one is
    enrolled, or SVC_REQUIRE_2FA asks for one), 202 and only the cookie that
    /auth/second-factor takes; else a session, and `answer` with `status`."""
    waiting = second_factors.begin_sign_in(user)
    if waiting is not None:
        token, pending_answer = waiting
        _send_pending_cookie(token)
        return pending_answer, {}, 202
    sign_in(user)
    return answer, {}, status


def _send_pending_cookie(token: str) -> None:
    @after_this_request
    def add_cookie(resp):
        set_pending_cookie(resp, token, int(pending.LIFETIME.total_seconds()))
        return resp


def _clear_cookies(site_data: bool = False) -> None:
    @after_this_request
    def remove_cookies(resp):
        clear_session_cookies(resp)
        if site_data:
            # Signing out: also every cookie our Set-Cookie headers might not reach.
            resp.headers["Clear-Site-Data"] = '"cookies"'
        return resp


@bp.post("/register")
@rate_limited("SVC_RATE_LIMIT_AUTH")
@body(RegisterIn())
@response(UserOut(), 201, errors=(403, 409), also={202: PendingSignInOut()})
def register(data):
    """Create an account and sign it in (202 and a second factor to enrol first under
    SVC_REQUIRE_2FA, as a password sign-in)."""
    user = users.register(data["name"], data["email"], data["password"])
    return start_session(user, user, 201)


@bp.post("/login")
@rate_limited("SVC_RATE_LIMIT_AUTH")
@body(LoginIn())
@response(UserOut(), errors=(401, 403), also={202: PendingSignInOut()})
def login(data):
    """Sign in: a new session with new cookies; with a second factor due, 202 and only the
    cookie that /auth/second-factor takes (docs/identity.md)."""
    user = users.authenticate(data["email"], data["password"])
    return start_session(user, user)


@bp.post("/refresh")
@response(UserOut(), errors=(401,))
def refresh():
    """Rotate the access and refresh tokens, using the refresh cookie."""
    try:
        user, session_tokens = sessions.refresh(request.cookies.get(REFRESH_COOKIE, ""))
    except APIError:
        _clear_cookies()
        raise
    _send_cookies(session_tokens)
    return user


@bp.get("/methods")
@response(SignInMethodsOut())
def sign_in_methods():
    """How one signs in here: with a password, single sign-on (its button's name), or both."""
    return users.sign_in_methods()


@bp.get("/me")
@login_required
@response(UserOut())
def me():
    """The signed-in user."""
    return current_user()


@bp.post("/logout")
@response(None, 204)
def logout():
    """End the session server-side and clear its cookies; answers 204 without a session too."""
    session_id = sessions.session_id_from_cookies(
        request.cookies.get(ACCESS_COOKIE), request.cookies.get(REFRESH_COOKIE)
    )
    if session_id is not None:
        users.sign_out(session_id)
    _clear_cookies(site_data=True)


@bp.post("/password")
@session_required
@rate_limited("SVC_RATE_LIMIT_PASSWORD", key_func=signed_in_user)
@body(PasswordChangeIn())
@response(None, 204)
def change_password(data):
    """Change the password; every other session of the user ends."""
    caller = current_caller()
    users.change_password(
        caller.user, data["current_password"], data["new_password"], keep_session=caller.session_id
    )


@bp.post("/forgot-password")
@rate_limited("SVC_RATE_LIMIT_AUTH")
@body(ForgotPasswordIn())
@response(None, 202)
def forgot_password(data):
    """Mail a reset link; the same answer whether or not the address has an account."""
    password_resets.request_reset(data["email"])


@bp.post("/reset-password")
@rate_limited("SVC_RATE_LIMIT_AUTH")
@body(ResetPasswordIn())
@response(None, 204, errors=(400,))
def reset_password(data):
    """Set a new password with a reset link's token: every session and token of the user ends."""
    password_resets.reset(data["token"], data["password"])
