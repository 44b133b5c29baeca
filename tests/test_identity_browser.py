"""Identity end to end in Debian's Chromium (docs/identity.md): single sign-on against a real
OpenID provider (npm's `oidc-provider`, harness/oidc.py) and passkeys in Chromium's virtual
authenticator (the DevTools protocol's WebAuthn domain). Every refusal shows a page that says
why, and leaves no session behind."""

import base64
import contextlib
import hashlib
import re
import secrets
import threading
from urllib.parse import urlencode

import pytest
from joserfc.errors import JoseError
from playwright.sync_api import expect
from sqlalchemy import select
from werkzeug.serving import make_server

from harness.client import PASSWORD, register
from harness.oidc import OpenIDProvider, query_of, signing_keys
from harness.ports import listening_socket
from svc import sso
from svc.auth import oidc
from svc.extensions import db
from svc.models import AuditEntry
from tests.helpers import totp_code, totp_step, unspent_totp_code

pytestmark = [pytest.mark.browser, pytest.mark.any_database]

PROVIDER_NAME = "Test IdP"
CALLBACK = re.compile(r"/sso/callback\?")
SSO_LOGIN = re.compile(r"/sso/login")


@pytest.fixture(scope="module")
def svc_socket():
    """svc's listening socket for this module's tests, held between them: the provider's
    clients name its port as their callback's."""
    with listening_socket() as sock:
        yield sock


@pytest.fixture(scope="module")
def svc_port(svc_socket) -> int:
    return svc_socket.getsockname()[1]


@pytest.fixture(scope="module")
def shared_keys() -> dict:
    """One signing key for both providers: a token of the other issuer then passes the
    signature check, and what refuses it is the issuer check itself."""
    return signing_keys("shared")


@pytest.fixture(scope="module")
def providers(certificate_authority, svc_port, shared_keys):
    """The provider svc trusts (clients `svc` and `other-app`), and another issuer."""
    ca, bundle = certificate_authority
    callback = f"http://localhost:{svc_port}/sso/callback"
    started = []
    try:
        for clients in ({"svc": [callback], "other-app": [callback]}, {"svc": [callback]}):
            started.append(OpenIDProvider(ca, clients, jwks=shared_keys).start(bundle))
        yield started
    finally:
        for provider in started:
            provider.stop()


@pytest.fixture
def sso_app(make_app, providers, certificate_authority, svc_port):
    """`make_app` with single sign-on through the first provider; `overrides` on top."""

    def build(**overrides):
        settings = {
            "SVC_PUBLIC_URL": f"http://localhost:{svc_port}",
            "SVC_OIDC_ISSUER": providers[0].issuer,
            "SVC_OIDC_CLIENT_ID": "svc",
            "SVC_OIDC_CLIENT_SECRET": "a client secret for the tests",
            "SVC_OIDC_NAME": PROVIDER_NAME,
            "SVC_OIDC_CA_BUNDLE": certificate_authority[1],
        }
        return make_app(**{**settings, **overrides})

    return build


@contextlib.contextmanager
def serving(app, sock):
    """`app` served on the held `sock` (werkzeug serves a duplicate of it and closes only that)."""
    port = sock.getsockname()[1]
    server = make_server("127.0.0.1", port, app, threaded=True, fd=sock.fileno())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{port}"
    finally:
        server.shutdown()
        thread.join(timeout=5)


def sign_in_at_provider(page, login: str) -> None:
    """The provider's development pages: any password; then its consent page."""
    page.locator("input[name=login]").fill(login)
    page.locator("input[name=password]").fill("anything")
    page.get_by_role("button", name="Sign-in").click()
    page.get_by_role("button", name="Continue").click()


def me(page) -> dict:
    return page.evaluate("fetch('/api/v1/auth/me').then((r) => r.ok ? r.json() : r.status)")


def has_session(context) -> bool:
    return any(cookie["name"] == "svc_access_token" for cookie in context.cookies())


def refused(page, context, words: str) -> None:
    expect(page.get_by_role("heading", name="Sign-in refused")).to_be_visible()
    expect(page.locator("#reason")).to_contain_text(words)
    assert not has_session(context)


def test_single_sign_on_creates_an_account_or_signs_into_the_one_with_that_address(
    browser, sso_app, svc_socket
):
    app = sso_app(SVC_REGISTRATION="closed")
    ada_id = register(app.test_client())["id"]  # the first user, with a password
    with serving(app, svc_socket) as base_url:
        for login, expected_id in (("grace", None), ("ada", ada_id)):
            context = browser.new_context(base_url=base_url, ignore_https_errors=True)
            page = context.new_page()
            page.goto("/login")
            page.get_by_role("link", name=f"Sign in with {PROVIDER_NAME}").click()
            sign_in_at_provider(page, login)
            page.wait_for_url(f"{base_url}/reports")
            user = me(page)
            assert user["email"] == f"{login}@example.com"
            assert expected_id in (None, user["id"])
            context.close()
        # Grace came in through closed registration by single sign-on; her account has no
        # password, and the account page says how she signs in.
        grace = app.test_client()
        login = {"email": "grace@example.com", "password": PASSWORD}
        assert grace.post("/api/v1/auth/login", json=login).status_code == 401
    with app.app_context():
        methods = db.session.scalars(
            select(AuditEntry.detail).where(AuditEntry.action == "sign_in")
        ).all()
    assert [m["method"] for m in methods] == ["password", "oidc", "oidc"]


def test_what_single_sign_on_refuses_leaves_no_session(browser, sso_app, svc_socket):
    app = sso_app(SVC_OIDC_ALLOWED_DOMAINS="example.com")
    with serving(app, svc_socket) as base_url:
        context = browser.new_context(base_url=base_url, ignore_https_errors=True)
        page = context.new_page()

        def start(login: str | None = None) -> None:
            page.goto("/login")
            page.get_by_role("link", name=f"Sign in with {PROVIDER_NAME}").click()
            if login:
                sign_in_at_provider(page, login)

        start("eve")  # her address is not verified at the provider
        refused(page, context, "eve@example.com is not verified")
        context.clear_cookies()
        start("olga")  # elsewhere.example is not an allowed domain
        refused(page, context, "Addresses at elsewhere.example cannot sign in")
        context.clear_cookies()

        # What svc sends the browser to the provider with, changed on the way: Playwright sees
        # the first request of a navigation, /sso/login, and answers with svc's own answer (its
        # cookie included) sent elsewhere.
        def changed_on_the_way(change) -> None:
            def handle(route):
                answer = route.fetch(max_redirects=0)
                headers = {**answer.headers, "location": change(answer.headers["location"])}
                route.fulfill(response=answer, headers=headers)

            page.route(SSO_LOGIN, handle)
            start()
            page.unroute(SSO_LOGIN)

        changed_on_the_way(lambda location: location.replace("state=", "state=forged"))
        sign_in_at_provider(page, "ada")
        refused(page, context, "did not check out")
        context.clear_cookies()

        changed_on_the_way(lambda location: location.replace("nonce=", "nonce=not-svcs-"))
        sign_in_at_provider(page, "ada")
        refused(page, context, "nonce")
        context.clear_cookies(domain="localhost")  # out of svc, still in at the provider

        # A code used once, brought again under a state svc just issued: the provider refuses
        # to exchange it a second time.
        callbacks = []
        page.on(
            "request",
            lambda request: callbacks.append(request.url) if CALLBACK.search(request.url) else None,
        )
        start()
        page.wait_for_url(f"{base_url}/reports")
        used = query_of(callbacks[-1])["code"]
        context.clear_cookies(domain="localhost")
        changed_on_the_way(
            lambda location: (
                f"{base_url}/sso/callback?"
                + urlencode({"code": used, "state": query_of(location)["state"]})
            )
        )
        refused(page, context, "did not check out")
    with app.app_context():
        failed = db.session.scalars(
            select(AuditEntry.detail).where(AuditEntry.action == "sign_in_failed")
        ).all()
    reasons = [detail["reason"].split(":")[0] for detail in failed]
    assert reasons == ["unverified e-mail", "domain not allowed"] + ["protocol"] * 3


@pytest.mark.parametrize("wrong", ["/realms/other", ""])
def test_a_wrong_issuer_is_a_configuration_error_said_at_start_and_to_users(
    sso_app, providers, wrong
):
    """Users were told "cannot reach ... Try again"; nothing said why."""
    issuer = providers[0].issuer + wrong if wrong else providers[1].issuer
    app = sso_app(SVC_OIDC_ISSUER=issuer)
    if not wrong:  # another provider's document, claiming its own issuer: as if mistyped
        app.extensions["svc.oidc"].issuer = providers[0].issuer
    problem = oidc.configuration_problem(app)
    assert problem and ("answered 404" in problem or "names issuer" in problem), problem
    refused = app.test_client().get("/sso/login")
    assert refused.status_code == 502
    page = refused.get_data(as_text=True)
    assert "not set up correctly" in page and "administrator" in page
    assert "Try again" not in page
    assert oidc.configuration_problem(sso_app()) is None  # the right issuer: nothing to say


def test_a_provider_that_rotated_its_keys_is_followed(make_app, certificate_authority, svc_port):
    """svc holds the provider's keys from the first sign-in; a token signed with a new key (a
    key id it does not hold) makes it fetch them again, and passes."""
    ca, bundle = certificate_authority
    clients = {"svc": [f"http://localhost:{svc_port}/sso/callback"]}
    provider = OpenIDProvider(ca, clients, jwks=signing_keys("before")).start(bundle)
    try:
        app = make_app(
            SVC_OIDC_ISSUER=provider.issuer,
            SVC_OIDC_CLIENT_ID="svc",
            SVC_OIDC_CLIENT_SECRET="a client secret for the tests",
            SVC_OIDC_CA_BUNDLE=bundle,
        )
        with app.test_request_context():
            token = id_token_of(provider, "svc", "n1", svc_port)
            assert sso.check_id_token(token, "n1")["sub"] == "ada"
        provider.rotate(signing_keys("after"))
        with app.test_request_context():
            token = id_token_of(provider, "svc", "n2", svc_port)
            assert sso.check_id_token(token, "n2")["sub"] == "ada"
    finally:
        provider.stop()


def id_token_of(provider, client_id: str, nonce: str, svc_port: int) -> dict:
    """A token response of the provider for Ada, as that client (PKCE, as svc asks)."""
    callback = f"http://localhost:{svc_port}/sso/callback"
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    query = {
        "client_id": client_id,
        "response_type": "code",
        "scope": "openid email",
        "redirect_uri": callback,
        "state": "s",
        "nonce": nonce,
        "code_challenge": base64.urlsafe_b64encode(digest).rstrip(b"=").decode(),
        "code_challenge_method": "S256",
    }
    back = provider.sign_in(f"{provider.issuer}/auth?{urlencode(query)}", "ada")
    return provider.exchange(client_id, callback, query_of(back)["code"], verifier)


def test_an_id_token_of_another_issuer_or_audience_is_refused(sso_app, providers, svc_port):
    """Real ID tokens, from the other provider (same signing key) and for the other client,
    checked as the callback checks them."""
    app = sso_app()

    with app.test_request_context():
        assert (
            sso.check_id_token(id_token_of(providers[0], "svc", "n1", svc_port), "n1")["sub"]
            == "ada"
        )
        for provider, client_id, claim in (
            (providers[1], "svc", "iss"),
            # Not for svc: Authlib then wants an `azp` naming svc, and there is none.
            (providers[0], "other-app", "aud|azp"),
        ):
            with pytest.raises(JoseError, match=claim):
                sso.check_id_token(id_token_of(provider, client_id, "n2", svc_port), "n2")
        with pytest.raises(JoseError, match="nonce"):
            sso.check_id_token(id_token_of(providers[0], "svc", "n3", svc_port), "another")


def test_an_id_token_must_name_svc_as_its_audience(sso_app, providers, shared_keys):
    """A token of the right issuer and key, for another client, that names svc in `azp` only:
    Authlib passed it; svc wants `aud` to name its client id."""
    import time

    from joserfc import jwt
    from joserfc.jwk import KeySet

    app = sso_app()
    now = int(time.time())
    claims = {
        "iss": providers[0].issuer,
        "sub": "ada",
        "aud": "other-app",
        "azp": "svc",
        "exp": now + 300,
        "iat": now,
        "nonce": "n1",
        "email": "ada@example.com",
        "email_verified": True,
    }
    keys = KeySet.import_key_set(shared_keys)
    forged = jwt.encode({"alg": "RS256", "kid": "shared"}, claims, keys)
    with app.test_request_context(), pytest.raises(JoseError, match="aud"):
        sso.check_id_token({"id_token": forged, "token_type": "Bearer"}, "n1")


def test_the_providers_error_description_is_never_shown_or_stored(sso_app):
    """Anyone can send a link to /sso/callback with an `error_description` of their choosing:
    svc says its own words for the error code, and records the code alone."""
    app = sso_app()
    bait = "Your account is locked: call +1 900 555 0199 now"
    answer = app.test_client().get(
        "/sso/callback", query_string={"error": "access_denied", "error_description": bait}
    )
    page = answer.get_data(as_text=True)
    assert answer.status_code == 400 and "cancelled or refused at the provider" in page
    assert "900 555" not in page
    with app.app_context():
        stored = [str(entry.detail) for entry in db.session.scalars(select(AuditEntry))]
    assert stored and not any("900 555" in entry for entry in stored)


@pytest.mark.parametrize("scheme, secure", [("https", True), ("http", False)])
def test_the_flow_cookie_is_secure_as_svcs_own_cookies(sso_app, scheme, secure):
    app = sso_app(SVC_COOKIE_SECURE="auto")
    started = app.test_client().get("/sso/login", base_url=f"{scheme}://localhost")
    assert started.status_code == 302
    (cookie,) = [c for c in started.headers.getlist("Set-Cookie") if c.startswith("svc_sso=")]
    assert ("; Secure" in cookie) is secure


def test_a_passkey_is_enrolled_and_signs_in_and_another_sites_is_refused(
    browser, make_app, svc_port, svc_socket
):
    app = make_app(SVC_PUBLIC_URL=f"http://localhost:{svc_port}")
    register(app.test_client())
    with serving(app, svc_socket) as base_url:
        context = browser.new_context(base_url=base_url)
        page = context.new_page()
        devtools = context.new_cdp_session(page)
        devtools.send("WebAuthn.enable")
        devtools.send(
            "WebAuthn.addVirtualAuthenticator",
            {
                "options": {
                    "protocol": "ctap2",
                    "transport": "internal",
                    "hasResidentKey": True,
                    "hasUserVerification": True,
                    "isUserVerified": True,
                }
            },
        )

        def password_sign_in():
            page.goto("/login")
            page.get_by_label("E-mail").fill("ada@example.com")
            page.get_by_label("Password").fill(PASSWORD)
            page.get_by_role("button", name="Sign in").click()

        password_sign_in()
        page.wait_for_url(f"{base_url}/reports")
        page.goto("/account")
        # Without the password (a stolen session), no factor is added.
        page.get_by_role("button", name="Add a passkey").click()
        expect(page.get_by_role("alert").filter(has_text="current password")).to_be_visible()
        page.get_by_label("Current password or code").fill(PASSWORD)
        page.get_by_role("button", name="Add a passkey").click()
        expect(page.get_by_label("Recovery codes").locator("li")).to_have_count(10)
        expect(page.locator(".factors li > span:first-child")).to_have_text(["Passkey"])
        page.get_by_role("button", name="Sign out").click()
        page.wait_for_url(f"{base_url}/login")

        password_sign_in()
        expect(page.get_by_role("heading", name="Second factor")).to_be_visible()
        assert not has_session(context)
        page.get_by_role("button", name="Use a passkey").click()
        page.wait_for_url(f"{base_url}/reports")
        assert me(page)["email"] == "ada@example.com"

        # An authenticator app too, from the account page; then the sign-in asks for either.
        page.goto("/account")
        page.get_by_label("Current password or code").fill(PASSWORD)
        page.get_by_role("button", name="Add an authenticator app").click()
        secret = page.locator(".totp-secret").inner_text()
        spent = totp_step()
        page.get_by_label("Code from the app").fill(totp_code(secret, spent))
        page.get_by_role("button", name="Confirm").click()
        # Its name says what it is: no "(authenticator app)" after it.
        expect(page.locator(".factors li > span:first-child")).to_have_text(
            ["Passkey", "Authenticator app"]
        )
        # A second click shows the setup already there, not a second QR code.
        page.get_by_role("button", name="Add an authenticator app").click()
        page.get_by_role("button", name="Add an authenticator app").click()
        expect(page.locator(".totp-secret")).to_have_count(1)
        page.reload()
        page.get_by_role("button", name="Sign out").click()
        password_sign_in()
        page.get_by_label("Code from your authenticator app").fill("000000")
        page.get_by_role("button", name="Verify").click()
        expect(
            page.get_by_role("alert").filter(has_text="Wrong or already used code")
        ).to_be_visible()
        # The confirmation spent its step's code: a later step's is taken.
        page.get_by_label("Code from your authenticator app").fill(unspent_totp_code(secret, spent))
        page.get_by_role("button", name="Verify").click()
        page.wait_for_url(f"{base_url}/reports")

        # A passkey of another site (RP id evil.localhost), made there and asked there to sign
        # svc's own challenge, is refused; Ada's still works for the same waiting sign-in.
        context.clear_cookies()
        page.goto("/login")
        options = page.evaluate(
            """async (password) => {
              await fetch("/api/v1/auth/login", {method: "POST",
                headers: {"Content-Type": "application/json"},
                body: JSON.stringify({email: "ada@example.com", password})});
              const answer = await fetch("/api/v1/auth/second-factor/passkey-options",
                {method: "POST"});
              return (await answer.json()).publicKey;
            }""",
            PASSWORD,
        )
        page.goto(f"http://evil.localhost:{svc_port}/login")
        foreign = page.evaluate(
            """async (options) => {
              const made = await navigator.credentials.create({publicKey: {
                rp: {id: "evil.localhost", name: "Evil"},
                user: {id: new Uint8Array(16), name: "ada@example.com", displayName: "Ada"},
                challenge: new Uint8Array(32),
                pubKeyCredParams: [{type: "public-key", alg: -7}],
                authenticatorSelection: {residentKey: "required"},
              }});
              const request = PublicKeyCredential.parseRequestOptionsFromJSON(
                {...options, rpId: "evil.localhost", allowCredentials: []});
              return (await navigator.credentials.get({publicKey: request})).toJSON();
            }""",
            options,
        )
        page.goto("/login")
        answer = page.evaluate(
            """async (credential) => (await fetch("/api/v1/auth/second-factor", {
              method: "POST", headers: {"Content-Type": "application/json"},
              body: JSON.stringify({credential})})).status""",
            foreign,
        )
        assert answer == 401 and not has_session(context)
        status = page.evaluate(
            """async (options) => {
              const request = PublicKeyCredential.parseRequestOptionsFromJSON(options);
              const credential = (await navigator.credentials.get({publicKey: request})).toJSON();
              return (await fetch("/api/v1/auth/second-factor", {
                method: "POST", headers: {"Content-Type": "application/json"},
                body: JSON.stringify({credential})})).status;
            }""",
            options,
        )
        assert status == 200 and has_session(context)
