"""A real SMTP server on 127.0.0.1 (aiosmtpd) for the tests: STARTTLS with a certificate from
trustme, AUTH required, every message kept. `stop()` and `start()` again on the same port play
a server that is down for a while: the port stays reserved meanwhile (harness/ports.py), so no
other process can take it, and a connection to it is refused as by a server that is down."""

import contextlib
import email
import email.policy
import socket
import ssl
import threading
import time
from email.message import EmailMessage

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

from harness.ports import Reservation

USER, PASSWORD = "svc", "mail password"


class _Keep:
    def __init__(self, server: "SmtpServer"):
        self._server = server

    async def handle_DATA(self, _server, _session, envelope):
        message = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        message.raw = envelope.original_content  # the bytes as sent, for what parsing hides
        with self._server.lock:
            self._server.messages.append(message)
        return "250 Message accepted"


def _authenticate(_server, _session, _envelope, mechanism, auth_data):
    ok = mechanism in ("LOGIN", "PLAIN") and (auth_data.login, auth_data.password) == (
        USER.encode(),
        PASSWORD.encode(),
    )
    return AuthResult(success=ok)


class _SharingController(Controller):
    """aiosmtpd's controller, binding beside the server's Reservation (SO_REUSEPORT): the
    documented place to change how it binds."""

    def _create_server(self):
        return self.loop.create_server(
            self._factory_invoker,
            host=self.hostname,
            port=self.port,
            ssl=self.ssl_context,
            reuse_port=True,
        )


class SmtpServer:
    """A real SMTP server (aiosmtpd) on 127.0.0.1: STARTTLS and a password required, as a
    provider's is; or, `plain`, neither, as a relay on the same host (a local Postfix)."""

    def __init__(self, certificate_authority, plain: bool = False):
        self.plain = plain
        self._reservation = Reservation()
        self.port = self._reservation.port
        self.messages: list[EmailMessage] = []
        self.lock = threading.Lock()
        self._tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        certificate_authority.issue_cert("127.0.0.1", "localhost").configure_cert(self._tls)
        self._controller = None

    @property
    def url(self) -> str:
        if self.plain:
            return f"smtp://127.0.0.1:{self.port}?starttls=off"
        return f"smtp://{USER}:{PASSWORD.replace(' ', '%20')}@127.0.0.1:{self.port}"

    def start(self) -> "SmtpServer":
        secured = {"tls_context": self._tls, "require_starttls": True,
                   "authenticator": _authenticate, "auth_required": True}  # fmt: skip
        self._controller = _SharingController(
            _Keep(self), hostname="127.0.0.1", port=self.port, **({} if self.plain else secured)
        )
        self._controller.start()
        return self

    def stop(self) -> None:
        """Down: the port stays reserved (see close)."""
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

    def close(self) -> None:
        """Down for good: the port let go."""
        self.stop()
        self._reservation.close()

    def wait_for(self, count: int, timeout: float = 30) -> list[EmailMessage]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.messages) >= count:
                    return list(self.messages)
            time.sleep(0.05)
        raise AssertionError(f"expected {count} mails, got {len(self.messages)}")


class Tarpit:
    """A port that takes connections and never says a word: an SMTP server that hangs, so
    that a sender's attempts are caught in the middle."""

    def __init__(self, port: int):
        # Beside the stopped SMTP server's Reservation of the port.
        self._listener = socket.create_server(("127.0.0.1", port), reuse_port=True)
        self._held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @property
    def connections(self) -> int:
        return len(self._held)

    def _accept(self) -> None:
        with contextlib.suppress(OSError):  # closed
            while True:
                self._held.append(self._listener.accept()[0])

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() under way (Linux)
        self._listener.close()
        for connection in self._held:
            connection.close()
        self._thread.join(timeout=5)
