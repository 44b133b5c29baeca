"""A real OpenID provider on 127.0.0.1 (harness/oidc_provider.mjs: npm's `oidc-provider`), over
HTTPS with a certificate from the tests' CA; and what a browser does at its development login
pages, done with requests when a test needs a provider's tokens without svc in between."""

import json
import queue
import subprocess
import tempfile
import threading
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import requests
from joserfc.jwk import RSAKey

from harness.service import ROOT

SCRIPT = Path(__file__).resolve().parent / "oidc_provider.mjs"
CLIENT_SECRET = "a client secret for the tests"
# Who can sign in at the provider (the login name is the id; any password).
ACCOUNTS = {
    "ada": {"email": "ada@example.com", "email_verified": True, "name": "Ada Lovelace"},
    "grace": {"email": "grace@example.com", "email_verified": True, "name": "Grace Hopper"},
    "eve": {"email": "eve@example.com", "email_verified": False, "name": "Eve"},
    "olga": {"email": "olga@elsewhere.example", "email_verified": True, "name": "Olga"},
}


STARTUP_SECONDS = 30


class OpenIDProvider:
    """`clients`: {client id: [redirect URIs]}, each with CLIENT_SECRET; `jwks`: the private
    signing keys (JWK set), else the provider's own. The provider binds a port of the kernel's
    choice: `port` and `issuer` are known once it has started."""

    def __init__(self, certificate_authority, clients: dict[str, list[str]], jwks=None):
        self.port = self.issuer = None
        self._folder = tempfile.TemporaryDirectory()
        folder = Path(self._folder.name)
        certificate = certificate_authority.issue_cert("127.0.0.1")
        certificate.cert_chain_pems[0].write_to_path(str(folder / "cert.pem"))
        certificate.private_key_pem.write_to_path(str(folder / "key.pem"))
        self.settings = {
            "cert": str(folder / "cert.pem"),
            "key": str(folder / "key.pem"),
            "clients": [
                {"client_id": client, "client_secret": CLIENT_SECRET, "redirect_uris": uris}
                for client, uris in clients.items()
            ],
            "accounts": ACCOUNTS,
            "jwks": jwks,
        }
        self.process = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._output: list[str] = []

    def start(self, ca_bundle: str) -> "OpenIDProvider":
        self.ca_bundle = ca_bundle
        self.process = subprocess.Popen(
            ["node", str(SCRIPT), json.dumps(self.settings)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        threading.Thread(target=self._read, daemon=True).start()
        self.issuer = self._line_after("listening on ").strip()
        self.port = int(self.issuer.rsplit(":", 1)[1])
        return self

    def rotate(self, jwks: dict) -> None:
        """From now on, sign with `jwks`: the same issuer on the same port, new keys."""
        self.process.stdin.write(json.dumps(jwks) + "\n")
        self.process.stdin.flush()
        self._line_after("rotated")

    def _read(self) -> None:
        for line in self.process.stdout:
            self._output.append(line)
            self._lines.put(line)
        self._lines.put(None)  # the process ended

    def _line_after(self, prefix: str) -> str:
        """The rest of the provider's next line that starts with `prefix`; its whole output
        in the failure where it says none in time."""
        while True:
            try:
                line = self._lines.get(timeout=STARTUP_SECONDS)
            except queue.Empty:
                line = None
            if line is None:
                raise AssertionError(f"oidc-provider did not say {prefix!r}:\n{self.output}")
            if line.startswith(prefix):
                return line[len(prefix) :]

    @property
    def output(self) -> str:
        return "".join(self._output)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        self._folder.cleanup()

    def sign_in(self, authorization_url: str, login: str) -> str:
        """Follow an authorization URL through the provider's login and consent pages as
        `login`; the redirect back to the client (with its code and state), not followed."""
        browser = _Browser(self.ca_bundle)
        answer = browser.get(authorization_url, allow_redirects=False)
        for prompt in ("login", "consent"):
            interaction = self._follow(browser, answer)
            form = {"prompt": prompt, "login": login, "password": "any"}
            answer = browser.post(f"{interaction}", data=form, allow_redirects=False)
            answer = self._resume(browser, answer)
            location = self._absolute(answer.headers.get("Location", ""))
            if not location.startswith(self.issuer):
                return location
        raise AssertionError("the provider did not send the browser back")

    def _follow(self, browser, answer) -> str:
        """The interaction page's form address."""
        location = answer.headers["Location"]
        page = browser.get(self._absolute(location), allow_redirects=False)
        assert page.status_code == 200, page.text
        return self._absolute(location)

    def _resume(self, browser, answer):
        """After a form: follow the provider's own redirects (the authorization resuming)."""
        while answer.status_code in (302, 303) and self._absolute(
            answer.headers["Location"]
        ).startswith(f"{self.issuer}/auth/"):
            answer = browser.get(self._absolute(answer.headers["Location"]), allow_redirects=False)
        return answer

    def _absolute(self, location: str) -> str:
        return location if location.startswith("http") else f"{self.issuer}{location}"

    def exchange(self, client_id: str, redirect_uri: str, code: str, verifier: str) -> dict:
        """The token endpoint's answer for a code, as that client."""
        metadata = requests.get(
            f"{self.issuer}/.well-known/openid-configuration", verify=self.ca_bundle
        ).json()
        answer = requests.post(
            metadata["token_endpoint"],
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": redirect_uri,
                "code_verifier": verifier,
            },
            auth=(client_id, CLIENT_SECRET),
            verify=self.ca_bundle,
        )
        assert answer.status_code == 200, answer.text
        return answer.json()


def signing_keys(kid: str) -> dict:
    """A private signing-key set (one RSA key named `kid`) for a provider's `jwks`."""
    key = RSAKey.generate_key(
        2048, parameters={"kid": kid, "use": "sig", "alg": "RS256"}, private=True
    )
    return {"keys": [key.as_dict(private=True)]}


class _Browser(requests.Session):
    """A session that trusts the tests' CA on every request (requests lets REQUESTS_CA_BUNDLE
    win over a session's own `verify`)."""

    def __init__(self, ca_bundle: str):
        super().__init__()
        self.ca_bundle = ca_bundle

    def request(self, method, url, **kwargs):
        return super().request(method, url, verify=self.ca_bundle, **kwargs)


def query_of(url: str) -> dict[str, str]:
    return {name: values[0] for name, values in parse_qs(urlsplit(url).query).items()}
