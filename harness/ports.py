"""Ports for the servers the tests start, none of them a number that nothing holds.

A port found free by binding and closing a socket can be taken by any other process before the
server binds it (seen: the OpenID provider's EADDRINUSE while another suite ran beside). So a
server here either binds port 0 itself and says which port it got, or is started through
`start_on_a_port`, which tries again on a new port when the server says the address is in use.
A server that must come back on the port it had (a store down for a while) keeps a
`Reservation` on it meanwhile, and a test that needs a port where nothing answers holds one too.
"""

import socket
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
P = TypeVar("P")
ATTEMPTS = 8


class AddressInUse(Exception):
    """The server said its address is taken: start it again on another port."""


def candidate_port() -> int:
    """A port the kernel has just handed out and taken back: a guess, for `start_on_a_port`
    only, which tries again when the guess was wrong."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_on_a_port(start: Callable[[P], T], candidates: Callable[[], P] | None = None) -> T:
    """`start(port)` on a candidate port (or whatever `candidates` makes: several ports), again
    on new ones while it raises AddressInUse."""
    candidates = candidates or candidate_port
    for attempt in range(ATTEMPTS):
        try:
            return start(candidates())
        except AddressInUse:
            if attempt == ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def said_address_in_use(output: str) -> bool:
    """Whether a server's output says its port was taken (gunicorn: "Connection in use", Go and
    Node: "address already in use", Python: "Address already in use")."""
    lowered = output.lower()
    return "address already in use" in lowered or "connection in use" in lowered


class Reservation:
    """A port held by a bound socket that does not listen: a connection to it is refused, as to
    a server that is down, and no other process can bind it. The one server that may is one
    binding with SO_REUSEPORT (set here too) in this same user's name: the server that comes
    back on it. Close it when done."""

    def __init__(self, port: int = 0):
        self._socket = socket.socket()
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        self._socket.bind(("127.0.0.1", port))
        self.port = self._socket.getsockname()[1]

    def close(self) -> None:
        self._socket.close()

    def __enter__(self) -> "Reservation":
        return self

    def __exit__(self, *_) -> None:
        self.close()


def listening_socket() -> socket.socket:
    """A socket listening on a port of the kernel's choice, for a server started on it again
    and again (werkzeug's `make_server(..., fd=sock.fileno())`): the port stays held between."""
    return socket.create_server(("127.0.0.1", 0))
