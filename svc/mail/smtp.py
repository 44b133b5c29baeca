"""One message over SMTP, within a wall-clock deadline.

`SVC_SMTP_URL`: `smtp://user:pass@host:587` speaks STARTTLS and refuses a server that does not
offer it (so a stripped offer cannot expose the password); `smtps://host:465` is TLS from the
first byte. Certificates are verified against the host name. `smtp://localhost:25?starttls=off`
speaks plain SMTP to a relay on the same host (svc.config allows it for loopback addresses only:
nothing crosses a network).
"""

import smtplib
import socket
from dataclasses import dataclass
from email.message import EmailMessage
from urllib.parse import parse_qs, unquote, urlsplit

from svc.deadline import Deadline, tls_context


@dataclass(frozen=True)
class SmtpServer:
    host: str
    port: int
    implicit_tls: bool
    username: str | None
    password: str | None
    starttls: bool = True


def parse_url(url: str) -> SmtpServer:
    """The parts of SVC_SMTP_URL, which svc.config has checked at start-up."""
    parts = urlsplit(url)
    implicit_tls = parts.scheme == "smtps"
    return SmtpServer(
        host=parts.hostname,
        port=parts.port or (465 if implicit_tls else 587),
        implicit_tls=implicit_tls,
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
        starttls=parse_qs(parts.query).get("starttls") != ["off"],
    )


class _SMTP(smtplib.SMTP):
    """Hands its socket to the deadline; after STARTTLS, `send` hands over the TLS socket."""

    def __init__(self, server: SmtpServer, deadline: Deadline, timeout: float):
        self.deadline = deadline
        super().__init__(server.host, server.port, timeout=timeout)  # connects

    def _get_socket(self, host, port, timeout):
        sock = super()._get_socket(host, port, timeout)
        self.deadline.watch(sock)
        return sock


class _SMTPS(smtplib.SMTP_SSL):
    """Watched from the connect on, TLS handshake included."""

    def __init__(self, server: SmtpServer, deadline: Deadline, timeout: float, context):
        self.deadline = deadline
        super().__init__(server.host, server.port, timeout=timeout, context=context)

    def _get_socket(self, host, port, timeout):
        sock = socket.create_connection((host, port), timeout, self.source_address)
        self.deadline.watch(sock)
        sock = self.context.wrap_socket(
            sock, server_hostname=self._host, do_handshake_on_connect=False
        )
        self.deadline.watch(sock)  # the wrapped socket took over the connection
        sock.do_handshake()
        return sock


def send(message: EmailMessage, server: SmtpServer, *, timeout: float, ca_bundle: str | None):
    """Send; an OSError (smtplib's and ssl's errors are ones) when the server did not take it
    within `timeout` seconds in all."""
    context = tls_context(ca_bundle)
    with Deadline(timeout) as deadline:
        connection = None
        try:
            if server.implicit_tls:
                connection = _SMTPS(server, deadline, timeout, context)
            else:
                connection = _SMTP(server, deadline, timeout)
                if server.starttls:
                    connection.starttls(context=context)  # SMTPNotSupportedError if not offered
                    deadline.watch(connection.sock)
            if server.username:
                connection.login(server.username, server.password or "")
            connection.send_message(message)
        except OSError:
            if deadline.expired:
                raise TimeoutError(f"timed out after {timeout:g} s") from None
            raise
        finally:
            if connection is not None:
                try:
                    connection.quit()
                except OSError:
                    connection.close()
