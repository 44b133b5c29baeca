"""The OpenID provider as Authlib reaches it (svc.sso's docstring says what is checked). Imported
only when SVC_OIDC_ISSUER is set: Authlib and joserfc would add to the start of every process."""

import requests
from authlib.integrations.base_client import OAuthError
from authlib.integrations.flask_client import FlaskOAuth2App, OAuth
from authlib.integrations.requests_client import OAuth2Session
from flask import Flask, Response
from joserfc.errors import JoseError

from svc.auth.oidc import ProviderError

SCOPES = "openid email profile"


class _TrustingSession(OAuth2Session):
    """requests lets REQUESTS_CA_BUNDLE beat a session's own `verify`: pass it on each call, so
    that SVC_OIDC_CA_BUNDLE holds wherever svc runs."""

    def request(self, method, url, withhold_token=False, auth=None, **kwargs):
        kwargs.setdefault("verify", self.verify)
        return super().request(method, url, withhold_token=withhold_token, auth=auth, **kwargs)


class _App(FlaskOAuth2App):
    client_cls = _TrustingSession


class _OAuth(OAuth):
    oauth2_client_cls = _App


class Provider:
    """The configured provider: its discovery document and keys are cached per process."""

    def __init__(self, app: Flask):
        config = app.config
        self.issuer = config["SVC_OIDC_ISSUER"].rstrip("/")
        self.client_id = config["SVC_OIDC_CLIENT_ID"]
        client_kwargs = {"scope": SCOPES, "code_challenge_method": "S256", "timeout": 10}
        if config["SVC_OIDC_CA_BUNDLE"]:
            client_kwargs["verify"] = config["SVC_OIDC_CA_BUNDLE"]
        self._client = _OAuth(app).register(
            "oidc",
            client_id=config["SVC_OIDC_CLIENT_ID"],
            client_secret=config["SVC_OIDC_CLIENT_SECRET"],
            server_metadata_url=self.issuer + "/.well-known/openid-configuration",
            client_kwargs=client_kwargs,
        )

    def _checked_client(self) -> FlaskOAuth2App:
        try:
            metadata = self._client.load_server_metadata()
        except requests.HTTPError as error:
            status = error.response.status_code if error.response is not None else 0
            if 400 <= status < 500:  # no discovery document there: not a provider's issuer
                raise ProviderError(
                    f"{self.issuer}/.well-known/openid-configuration answered {status}",
                    misconfigured=True,
                ) from error
            raise
        if metadata.get("issuer", "").rstrip("/") != self.issuer:
            # OpenID Connect Discovery §4.3: a document for another issuer is not this one's.
            named = metadata.get("issuer")
            raise ProviderError(
                f"the provider's discovery names issuer {named!r}", misconfigured=True
            )
        return self._client

    def check_discovery(self) -> None:
        """Read the discovery document as a sign-in would; ProviderError says what is wrong."""
        try:
            self._checked_client()
        except (OAuthError, requests.RequestException, ValueError) as error:
            raise ProviderError(_words(error), unreachable=True) from error

    def _claims_options(self) -> dict:
        """What the ID token must say: issued by SVC_OIDC_ISSUER, for svc (`aud` must name its
        client id: Authlib alone lets a token for another client pass on `azp`); the expiry
        and nonce Authlib checks against the clock and the flow's nonce."""
        return {
            "iss": {"essential": True, "values": [self.issuer, self.issuer + "/"]},
            "aud": {"essential": True, "values": [self.client_id]},
        }

    def authorization_redirect(self, redirect_uri: str) -> Response:
        """To the provider, with a new state, nonce and PKCE verifier kept in the session."""
        try:
            return self._checked_client().authorize_redirect(redirect_uri)
        except (OAuthError, requests.RequestException, ValueError) as error:
            raise ProviderError(_words(error), unreachable=True) from error

    def claims_from_callback(self) -> dict:
        """The checked claims of the provider's way back (state, code, ID token), with those
        of the userinfo endpoint when the ID token does not carry the e-mail."""
        try:
            client = self._checked_client()
            token = client.authorize_access_token(claims_options=self._claims_options())
            claims = dict(token.get("userinfo") or {})
            if not claims:
                raise OAuthError(description="the provider sent no ID token")
            if "email" not in claims:  # many providers say it only at the userinfo endpoint
                extra = client.userinfo(token=token)
                if extra.get("sub") != claims.get("sub"):
                    raise OAuthError(description="the userinfo answer is for another subject")
                claims = {**dict(extra), **claims}
            return claims
        except (OAuthError, JoseError, requests.RequestException, ValueError, KeyError) as error:
            raise ProviderError(_words(error)) from error

    def check_id_token(self, token: dict, nonce: str) -> dict:
        """The claims of a token response's ID token, checked as the callback checks them."""
        client = self._checked_client()
        return dict(client.parse_id_token(token, nonce, claims_options=self._claims_options()))


# What svc says for an error code a provider (or anyone, in a link to /sso/callback) sends:
# its own words, never the sender's `error_description`.
_ERROR_WORDS = {
    "access_denied": "the sign-in was cancelled or refused at the provider",
    "login_required": "the provider wants you to sign in there first",
    "interaction_required": "the provider needs you to do something there first",
    "consent_required": "the provider needs your consent first",
    "account_selection_required": "the provider needs you to choose an account",
    "invalid_request": "the provider found the request invalid",
    "unauthorized_client": "the provider does not let svc sign you in",
    "unsupported_response_type": "the provider does not support this sign-in",
    "invalid_scope": "the provider refused the scopes svc asks for",
    "server_error": "the provider had an error",
    "temporarily_unavailable": "the provider is unavailable for now",
    "invalid_grant": "the sign-in code was refused (used, expired or not svc's)",
    "invalid_client": "the provider refused svc's client credentials",
    "mismatching_state": "the sign-in's state did not match (a stale or forged link)",
}


def _words(error: Exception) -> str:
    if isinstance(error, OAuthError):
        if error.error:
            return _ERROR_WORDS.get(error.error, "the provider refused the sign-in")
        return error.description or "refused"  # svc's own, raised above
    return str(error) or type(error).__name__
