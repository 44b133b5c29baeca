"""A real SMTP server on 127.0.0.1 (aiosmtpd) for the tests: STARTTLS with a certificate from
trustme, AUTH required, every message kept. `stop()` and `start()` again on the same port play
a server that is down for a while."""

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

from harness.service import free_port

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


class SmtpServer:
    def __init__(self, certificate_authority):
        self.port = free_port()
        self.messages: list[EmailMessage] = []
        self.lock = threading.Lock()
        self._tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        certificate_authority.issue_cert("127.0.0.1", "localhost").configure_cert(self._tls)
        self._controller = None

    @property
    def url(self) -> str:
        return f"smtp://{USER}:{PASSWORD.replace(' ', '%20')}@127.0.0.1:{self.port}"

    def start(self) -> "SmtpServer":
        self._controller = Controller(
            _Keep(self),
            hostname="127.0.0.1",
            port=self.port,
            tls_context=self._tls,
            require_starttls=True,
            authenticator=_authenticate,
            auth_required=True,
        )
        self._controller.start()
        return self

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

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
        self._listener = socket.create_server(("127.0.0.1", port))
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
