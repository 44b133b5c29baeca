"""One webhook POST, safe against server-side request forgery.

The host is resolved once; the address is checked (no loopback, private, link-local, multicast,
reserved or cloud-metadata address unless the operator allows them) and the connection goes to
that very address, so a second DNS answer cannot rebind it. TLS is verified against the URL's
host name (with SNI), redirects are not followed, at most 64 KiB of the answer is read, and the
whole attempt ends at a wall-clock deadline.
"""

import http.client
import ipaddress
import socket
import ssl
from dataclasses import dataclass
from urllib.parse import urlsplit

from svc.deadline import Deadline, tls_context

MAX_RESPONSE_BYTES = 64 * 1024
_CLOUD_METADATA = {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}


@dataclass(frozen=True)
class Outcome:
    status_code: int | None
    error: str | None

    @property
    def succeeded(self) -> bool:
        return self.error is None


class RefusedAddress(Exception):
    pass


# IPv6 forms that only carry IPv4 traffic, or never reach the internet: refused whatever they
# hold (IPv4-compatible, IPv4-translated, local-use NAT64, Teredo, site-local). Some Pythons
# call a few of them global.
_NEVER_A_RECEIVER = tuple(
    ipaddress.ip_network(network)
    for network in ("::/96", "::ffff:0:0:0/96", "64:ff9b:1::/48", "2001::/32", "fec0::/10")
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def is_public(address: str) -> bool:
    """Whether a webhook may go to this address. An IPv6 address that stands for an IPv4 one
    (IPv4-mapped, well-known NAT64, 6to4) is judged by the IPv4 address it holds."""
    ip = ipaddress.ip_address(address)
    if ip.version == 6:
        if any(ip in network for network in _NEVER_A_RECEIVER):
            return False
        embedded = ip.ipv4_mapped or ip.sixtofour
        if ip in _NAT64:
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None:
            ip = embedded
    return ip.is_global and not ip.is_multicast and ip not in _CLOUD_METADATA


# One word for every refusal of a host: a name that resolves to a private address and one that
# does not resolve at all look the same, or the answer would tell a member which internal
# names exist (the delivery log, a tracker's "Test connection").
NO_PUBLIC_ADDRESS = "no public address"


def resolve(host: str, port: int, allow_private: bool) -> str:
    """The address to connect to: the first the name resolves to that may be used (IPv4 first)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses = list(dict.fromkeys(info[4][0] for info in infos))
    addresses.sort(key=lambda address: ":" in address)
    usable = addresses if allow_private else [a for a in addresses if is_public(a)]
    if not usable:
        # Which address a name resolves to is not for the delivery log: for an internal name,
        # that would answer a question its members should not be able to ask.
        raise RefusedAddress(NO_PUBLIC_ADDRESS)
    return usable[0]


class _PinnedConnection(http.client.HTTPSConnection):
    """HTTP or HTTPS to an address resolved and checked beforehand; TLS verified against the
    URL's host name (with SNI). Every socket it opens is handed to the deadline."""

    def __init__(self, address, port, *, host, tls, deadline: Deadline, timeout, ca_bundle):
        context = tls_context(ca_bundle) if tls else None
        super().__init__(address, port, timeout=timeout, context=context)
        self._tls_host = host if tls else None
        self._deadline = deadline

    def connect(self) -> None:
        sock = socket.create_connection((self.host, self.port), self.timeout)
        self._deadline.watch(sock)
        if self._tls_host:
            sock = self._context.wrap_socket(
                sock, server_hostname=self._tls_host, do_handshake_on_connect=False
            )
            self._deadline.watch(sock)
            sock.do_handshake()
        self.sock = sock


@dataclass(frozen=True)
class Reply:
    """What came back from one exchange: the status, headers and (the first part of) the body,
    or, when no answer came in time, `error` alone."""

    status_code: int | None
    error: str | None
    body: bytes = b""
    headers: dict[str, str] | None = None


def post(
    url: str,
    body: bytes,
    headers: dict[str, str],
    *,
    timeout: float,
    allow_private: bool,
    ca_bundle: str | None,
) -> Outcome:
    """POST `body`; success is a 2xx answer within `timeout` seconds in all (connecting,
    sending, reading), anything else a failure with a short reason."""
    reply = exchange(
        "POST",
        url,
        body,
        headers,
        timeout=timeout,
        allow_private=allow_private,
        ca_bundle=ca_bundle,
    )
    if reply.error is None and not 200 <= reply.status_code < 300:
        return Outcome(reply.status_code, f"HTTP {reply.status_code}")
    return Outcome(reply.status_code, reply.error)


def exchange(
    method: str,
    url: str,
    body: bytes | None,
    headers: dict[str, str],
    *,
    timeout: float,
    allow_private: bool,
    ca_bundle: str | None,
    max_bytes: int = MAX_RESPONSE_BYTES,
) -> Reply:
    """One request under the rules above; the answer whatever its status (an issue tracker's
    JSON is read, up to `max_bytes`)."""
    parts = urlsplit(url)
    host, scheme = parts.hostname, parts.scheme
    port = parts.port or (443 if scheme == "https" else 80)
    try:
        address = resolve(host, port, allow_private)
    except RefusedAddress as exc:
        return Reply(None, f"Refused: {exc}")
    except (socket.gaierror, UnicodeError) as exc:
        if not allow_private:
            return Reply(None, f"Refused: {NO_PUBLIC_ADDRESS}")
        return Reply(None, f"Cannot resolve {host}: {exc}")
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    host_header = host if parts.port is None else f"{host}:{port}"
    timed_out = Reply(None, f"Timed out after {timeout:g} s")
    with Deadline(timeout) as deadline:
        connection = _PinnedConnection(
            address,
            port,
            host=host,
            tls=scheme == "https",
            deadline=deadline,
            timeout=timeout,
            ca_bundle=ca_bundle,
        )
        try:
            connection.request(method, target, body=body, headers={**headers, "Host": host_header})
            response = connection.getresponse()
            # An answer is not ours to keep whole: the first part, then hang up.
            answer = response.read(max_bytes)
        except (ssl.SSLError, ssl.CertificateError) as exc:
            return timed_out if deadline.expired else Reply(None, f"TLS error: {exc}")
        except TimeoutError:
            return timed_out
        except (OSError, http.client.HTTPException, ValueError) as exc:
            return timed_out if deadline.expired else _failed(exc)
        finally:
            connection.close()
    if deadline.expired:
        return Reply(response.status, timed_out.error)
    return Reply(response.status, None, answer, {k.lower(): v for k, v in response.getheaders()})


def _failed(exc: Exception) -> Reply:
    return Reply(None, f"Connection failed: {exc or type(exc).__name__}"[:500])
