"""Single sign-on's provider, as the rest of svc sees it: what goes wrong with it, and the
check of SVC_OIDC_ISSUER said at start (the scheduler says it; svc.sso, the blueprint, signs
people in). The client itself, with Authlib: svc.auth.oidc_provider, loaded only where single
sign-on is on."""

from flask import Flask


class ProviderError(Exception):
    """The provider's answer did not check out, or the provider could not be reached."""

    def __init__(self, words: str, unreachable: bool = False, misconfigured: bool = False):
        super().__init__(words)
        self.words = words
        self.unreachable = unreachable
        # SVC_OIDC_ISSUER names no provider (its discovery is missing, or names another
        # issuer): trying again cannot help, the administrator must change it.
        self.misconfigured = misconfigured


def configuration_problem(app: Flask) -> str | None:
    """What is wrong with SVC_OIDC_ISSUER as its discovery document says (None: nothing, or
    no single sign-on): said once at start-up, so an administrator sees it in the log."""
    provider = app.extensions.get("svc.oidc")
    if provider is None:
        return None
    with app.app_context():
        try:
            provider.check_discovery()
        except ProviderError as error:
            return error.words
    return None
