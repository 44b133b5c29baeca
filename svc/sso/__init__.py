"""Single sign-on with OpenID Connect (docs/identity.md, contract §20), made with Authlib.

`/sso/login` sends the browser to the provider: the authorization code flow with PKCE (S256),
a state and a nonce, kept in a signed cookie of its own (Flask's session, `svc_sso`) so that the
callback may reach any worker. `/sso/callback` checks the state, exchanges the code, and has the
ID token checked: its signature by the provider's JWKS (cached per process, fetched again when a
token names a key id it does not hold), issuer, audience, expiry and nonce. Then
svc.services.single_sign_on decides whose account it is. Anything amiss is a page that says
what, and no session.

Configured by SVC_OIDC_ISSUER, _CLIENT_ID, _CLIENT_SECRET, _NAME, _ALLOWED_DOMAINS, _CA_BUNDLE;
without an issuer there is nothing here but a 404."""

import logging
from urllib.parse import urlsplit

import requests
from authlib.integrations.base_client import OAuthError
from authlib.integrations.flask_client import FlaskOAuth2App, OAuth
from authlib.integrations.requests_client import OAuth2Session
from flask import Blueprint, Flask, abort, current_app, redirect, render_template, request, session
from joserfc.errors import JoseError

from svc.auth.cookies import set_session_cookies
from svc.config import setting
from svc.errors import APIError
from svc.services import single_sign_on, users

log = logging.getLogger(__name__)
bp = Blueprint("sso", __name__, template_folder="templates")
NEXT = "svc_sso_next"
SCOPES = "openid email profile"


class _TrustingSession(OAuth2Session):
    """requests lets REQUESTS_CA_BUNDLE beat a session's own `verify`: pass it on each call, so
    that SVC_OIDC_CA_BUNDLE holds wherever svc runs."""

    def request(self, method, url, withhold_token=False, auth=None, **kwargs):
        kwargs.setdefault("verify", self.verify)
        return super().request(method, url, withhold_token=withhold_token, auth=auth, **kwargs)


class _Provider(FlaskOAuth2App):
    client_cls = _TrustingSession


class _OAuth(OAuth):
    oauth2_client_cls = _Provider


def init_app(app: Flask) -> None:
    """Register the provider, when one is configured; Flask's session cookie (which holds only
    the flow's state, nonce and PKCE verifier) gets a name, path and flags of its own."""
    config = app.config
    if not config["SVC_OIDC_ISSUER"]:
        return
    config.update(
        SESSION_COOKIE_NAME="svc_sso",
        SESSION_COOKIE_PATH="/sso",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",  # it must come back on the provider's redirect
    )
    oauth = _OAuth(app)
    client_kwargs = {"scope": SCOPES, "code_challenge_method": "S256", "timeout": 10}
    if config["SVC_OIDC_CA_BUNDLE"]:
        client_kwargs["verify"] = config["SVC_OIDC_CA_BUNDLE"]
    app.extensions["svc.oidc"] = oauth.register(
        "oidc",
        client_id=config["SVC_OIDC_CLIENT_ID"],
        client_secret=config["SVC_OIDC_CLIENT_SECRET"],
        server_metadata_url=(
            config["SVC_OIDC_ISSUER"].rstrip("/") + "/.well-known/openid-configuration"
        ),
        client_kwargs=client_kwargs,
    )


def issuer() -> str:
    return setting("SVC_OIDC_ISSUER").rstrip("/")


def _client() -> FlaskOAuth2App:
    client = current_app.extensions.get("svc.oidc")
    if client is None:
        abort(404)
    metadata = client.load_server_metadata()
    if metadata.get("issuer", "").rstrip("/") != issuer():
        # OpenID Connect Discovery §4.3: a document for another issuer is not this provider's.
        raise OAuthError(
            description=f"the provider's discovery names issuer {metadata.get('issuer')!r}"
        )
    return client


def claims_options() -> dict:
    """What the ID token must say: issued by SVC_OIDC_ISSUER (the audience, expiry and nonce
    Authlib checks against the client id, the clock and the flow's nonce)."""
    return {"iss": {"essential": True, "values": [issuer(), issuer() + "/"]}}


def check_id_token(token: dict, nonce: str) -> dict:
    """The claims of a token response's ID token, checked as the callback checks them."""
    return dict(_client().parse_id_token(token, nonce, claims_options=claims_options()))


def _redirect_uri() -> str:
    base = setting("SVC_PUBLIC_URL") or request.host_url
    return base.rstrip("/") + "/sso/callback"


def _safe_next(value: str | None) -> str:
    """Only a path of this site (no //host, no scheme): never an open redirect."""
    parts = urlsplit(value or "")
    # A browser reads "/\\host" as "//host", and drops tabs and line breaks before reading.
    odd = any(char == "\\" or ord(char) < 32 for char in value or "")
    if not value or not value.startswith("/") or value.startswith("//") or parts.netloc or odd:
        return "/projects"
    return value


@bp.get("/sso/login")
def login():
    """Off to the provider's sign-in page."""
    try:
        client = _client()
        session[NEXT] = _safe_next(request.args.get("next"))
        return client.authorize_redirect(_redirect_uri())
    except (OAuthError, requests.RequestException, ValueError) as error:
        log.warning("single sign-on: the provider cannot be reached: %s", error)
        return _refused(
            "svc cannot reach the sign-in provider just now. Try again in a moment.", 502
        )


@bp.get("/sso/callback")
def callback():
    """Back from the provider: check everything, then whose account, then a session."""
    try:
        client = _client()
        token = client.authorize_access_token(claims_options=claims_options())
        claims = dict(token.get("userinfo") or {})
        if not claims:
            raise OAuthError(description="the provider sent no ID token")
        if "email" not in claims:  # many providers say it only at the userinfo endpoint
            extra = client.userinfo(token=token)
            if extra.get("sub") != claims.get("sub"):
                raise OAuthError(description="the userinfo answer is for another subject")
            claims = {**dict(extra), **claims}
    except (OAuthError, JoseError, requests.RequestException, ValueError, KeyError) as error:
        log.info("single sign-on refused: %s", error)
        single_sign_on.record_refusal(issuer(), None, f"protocol: {error}"[:200])
        return _refused(
            "This sign-in could not be completed: the answer from the provider did not check "
            f"out ({_words(error)}). Start again from the sign-in page."
        )
    try:
        user = single_sign_on.account_for(issuer(), claims)
    except APIError as error:
        return _refused(error.detail, 403)
    response = redirect(_safe_next(session.pop(NEXT, None)))
    set_session_cookies(response, users.sign_in(user, "oidc"))
    return response


def _words(error: Exception) -> str:
    if isinstance(error, OAuthError):
        return error.description or error.error or "refused"
    return str(error) or type(error).__name__


def _refused(message: str, status: int = 400):
    session.pop(NEXT, None)
    page = render_template("sign_in_refused.html", message=message)
    return page, status, {"Cache-Control": "no-store"}
