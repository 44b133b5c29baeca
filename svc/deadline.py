"""A wall-clock limit on everything done over one socket: the webhook sender's and the mail
sender's attempts. Imports nothing of svc."""

import contextlib
import socket
import threading


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
