"""A wall-clock limit on everything done over one socket, and the TLS context such a socket is
wrapped in: the webhook sender's and the mail sender's attempts. Imports nothing of svc."""

import contextlib
import functools
import socket
import ssl
import threading


@functools.lru_cache(maxsize=8)
def tls_context(ca_bundle: str | None) -> ssl.SSLContext:
    """The system's trusted certificates, and those of the PEM file `ca_bundle` names, in one
    context for the process's life (threads share it safely): loading the system's store cost
    29 ms of CPU at every attempt (docs/performance.md, "The test suite"). A bundle changed on
    disk is read at the next start."""
    context = ssl.create_default_context()
    if ca_bundle:
        context.load_verify_locations(cafile=ca_bundle)
    return context


class Deadline:
    """An attempt's wall-clock limit. A socket timeout bounds each recv only: a peer that sends
    a byte every few seconds would hold a thread for ever. At the deadline a timer shuts the
    socket being watched down, which ends whatever read or write is waiting on it."""

    def __init__(self, seconds: float):
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self.expired = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> "Deadline":
        self._timer.start()
        return self

    def __exit__(self, *_exc) -> None:
        self._timer.cancel()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._socket = sock
            if self.expired:
                shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            if self._socket is not None:
                shut(self._socket)


def shut(sock: socket.socket) -> None:
    # socket.socket's own shutdown: an SSLSocket's would drop its TLS state under the reader.
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
