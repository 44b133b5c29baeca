"""A real HTTPS webhook receiver on 127.0.0.1, with a certificate from trustme.

It records every request and answers from a script of behaviours (then 200 once the script is
used up): `Receiver.script(500, 500, 200)`, `("sleep", 2)`, `("redirect", "/elsewhere")`,
`("reset",)`, `("huge",)`, `("drip", 0.5)` (the answer's first line one byte every 0.5 s,
for up to a minute: each read of the client's finishes in time, the answer never does).
"""

import collections
import contextlib
import json
import socket
import ssl
import struct
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    arrived: float = 0.0  # time.monotonic() when the request was read

    def json(self):
        return json.loads(self.body)


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def handle(self):
        # The sender may go first (killed, past its deadline, or done reading a huge or dripping
        # answer, as it should be): what it sent is recorded already.
        with contextlib.suppress(OSError):
            super().handle()

    def do_POST(self):
        receiver: Receiver = self.server.receiver
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        receiver.record(Received(self.path, dict(self.headers.items()), body, time.monotonic()))
        behaviour = receiver.next_behaviour()
        kind = behaviour[0]
        if kind == "sleep":
            time.sleep(behaviour[1])
            self._answer(200)
        elif kind == "redirect":
            self.send_response(302)
            self.send_header("Location", behaviour[1])
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif kind == "reset":
            # RST instead of an orderly close.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        elif kind == "huge":
            self.send_response(200)
            self.send_header("Content-Length", str(200 * 1024 * 1024))
            self.end_headers()
            chunk = b"x" * (1024 * 1024)
            for _ in range(200):
                self.wfile.write(chunk)
        elif kind == "drip":
            self._drip(behaviour[1])
        else:
            self._answer(behaviour[1])

    def _drip(self, interval: float):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for byte in b"HTTP/1.1 200 OK\r\nX-Drip: ":
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(interval)

    def _answer(self, status: int):
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")


def https_server(ca, handler) -> ThreadingHTTPServer:
    """A threaded HTTPS server on a free port of 127.0.0.1, its certificate issued by `ca`."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    server.socket = context.wrap_socket(server.socket, server_side=True)
    return server


class Receiver:
    def __init__(self, ca):
        self._server = https_server(ca, _Handler)
        self._server.receiver = self
        self._lock = threading.Condition()
        self._script = collections.deque()
        self.received: list[Received] = []
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}/hook"

    def start(self) -> "Receiver":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def script(self, *behaviours) -> None:
        """Answers for the next requests: a status code, or a tuple such as ("sleep", 2)."""
        with self._lock:
            for behaviour in behaviours:
                self._script.append(
                    behaviour if isinstance(behaviour, tuple) else ("status", behaviour)
                )

    def clear_script(self) -> None:
        with self._lock:
            self._script.clear()

    def next_behaviour(self):
        with self._lock:
            return self._script.popleft() if self._script else ("status", 200)

    def record(self, received: Received) -> None:
        with self._lock:
            self.received.append(received)
            self._lock.notify_all()

    def wait_for(self, count: int, timeout: float = 10) -> list[Received]:
        """Block until at least `count` requests arrived; returns them all."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while len(self.received) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"expected {count} requests, got {len(self.received)}")
                self._lock.wait(remaining)
            return list(self.received)
