"""Single sign-on with OpenID Connect (docs/identity.md), made with Authlib.

`/sso/login` sends the browser to the provider: the authorization code flow with PKCE (S256),
a state and a nonce, kept in a signed cookie of their own (Flask's session, `svc_sso`) so that
the callback may reach any worker. `/sso/callback` checks the state, exchanges the code, and has
the ID token checked: its signature by the provider's JWKS (cached per process, fetched again
when a token names a key id it does not hold), issuer, audience, expiry and nonce
(svc.auth.oidc_provider). Then svc.services.identity.single_sign_on decides whose account it is.
Anything amiss is a page that says what, and no session.

Configured by SVC_OIDC_ISSUER, _CLIENT_ID, _CLIENT_SECRET, _NAME, _ALLOWED_DOMAINS, _CA_BUNDLE;
without an issuer there is nothing here but a 404."""

import logging
from urllib.parse import urlsplit

from flask import Blueprint, Flask, abort, current_app, redirect, render_template, request, session
from flask.sessions import SecureCookieSessionInterface

from svc.auth.cookies import cookies_secure, set_session_cookies
from svc.auth.oidc import ProviderError
from svc.config import public_url
from svc.errors import APIError
from svc.rate_limits import rate_limited
from svc.services.identity import single_sign_on, users

log = logging.getLogger(__name__)
bp = Blueprint("sso", __name__, template_folder="templates")
NEXT = "svc_sso_next"


class _FlowCookie(SecureCookieSessionInterface):
    """The flow's cookie is `Secure` by the rule svc's own cookies follow (SVC_COOKIE_SECURE;
    `auto`: whether the request came over HTTPS), not Flask's fixed setting. Every other
    request comes without it: its empty session is made without Flask's signing serializer,
    which Flask builds first for every request."""

    def get_cookie_secure(self, app: Flask) -> bool:
        return cookies_secure()

    def open_session(self, app: Flask, request):
        if app.secret_key and self.get_cookie_name(app) not in request.cookies:
            return self.session_class()
        return super().open_session(app, request)


def init_app(app: Flask) -> None:
    """Register the provider, when one is configured; Flask's session cookie (which holds only
    the flow's state, nonce and PKCE verifier) gets a name, path and flags of its own."""
    config = app.config
    app.session_interface = _FlowCookie()
    if not config["SVC_OIDC_ISSUER"]:
        return
    from svc.auth.oidc_provider import Provider  # Authlib, only where single sign-on is on

    config.update(
        SESSION_COOKIE_NAME="svc_sso",
        SESSION_COOKIE_PATH="/sso",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",  # it must come back on the provider's redirect
    )
    app.extensions["svc.oidc"] = Provider(app)


def _provider():
    provider = current_app.extensions.get("svc.oidc")
    if provider is None:
        abort(404)
    return provider


def check_id_token(token: dict, nonce: str) -> dict:
    """The claims of a token response's ID token, checked as the callback checks them."""
    return _provider().check_id_token(token, nonce)


def _redirect_uri() -> str:
    return public_url() + "/sso/callback"


def _safe_next(value: str | None) -> str:
    """Only a path of this site (no //host, no scheme): never an open redirect."""
    parts = urlsplit(value or "")
    # A browser reads "/\\host" as "//host", and drops tabs and line breaks before reading.
    odd = any(char == "\\" or ord(char) < 32 for char in value or "")
    if not value or not value.startswith("/") or value.startswith("//") or parts.netloc or odd:
        return "/projects"
    return value


# Both are open to anyone, and each refusal writes an audit entry: limited as sign-in is.
@bp.get("/sso/login")
@rate_limited("SVC_RATE_LIMIT_AUTH")
def login():
    """Off to the provider's sign-in page."""
    provider = _provider()
    session[NEXT] = _safe_next(request.args.get("next"))
    try:
        return provider.authorization_redirect(_redirect_uri())
    except ProviderError as error:
        if error.misconfigured:
            log.error("single sign-on: configuration error: SVC_OIDC_ISSUER: %s", error.words)
            return _refused(
                "Single sign-on is not set up correctly on this svc. Please tell your "
                "administrator; signing in with a password may still work.",
                502,
            )
        log.warning("single sign-on: the provider cannot be reached: %s", error.words)
        return _refused(f"svc cannot reach the sign-in provider ({error.words}). Try again.", 502)


@bp.get("/sso/callback")
@rate_limited("SVC_RATE_LIMIT_AUTH")
def callback():
    """Back from the provider: check everything, then whose account, then a session."""
    provider = _provider()
    try:
        claims = provider.claims_from_callback()
    except ProviderError as error:
        log.info("single sign-on refused: %s", error.words)
        reason = f"protocol: {error.words}"[:200]
        users.record_failed_sign_in(None, None, reason, issuer=provider.issuer)
        return _refused(
            "This sign-in could not be completed: the answer from the provider did not check "
            f"out ({error.words}). Start again from the sign-in page."
        )
    try:
        user = single_sign_on.account_for(provider.issuer, claims)
    except APIError as error:
        return _refused(error.detail, 403)
    response = redirect(_safe_next(session.pop(NEXT, None)))
    set_session_cookies(response, users.sign_in(user, "oidc"))
    return response


def _refused(message: str, status: int = 400):
    session.pop(NEXT, None)
    page = render_template("sign_in_refused.html", message=message)
    return page, status, {"Cache-Control": "no-store"}
