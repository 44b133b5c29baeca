"""One webhook POST, safe against server-side request forgery.

The host is resolved once; the address is checked (no loopback, private, link-local, multicast,
reserved or cloud-metadata address unless the operator allows them) and the connection goes to
that very address, so a second DNS answer cannot rebind it. TLS is verified against the URL's
host name (with SNI), redirects are not followed, and at most 64 KiB of the answer is read.
"""

import ipaddress
import socket
import ssl
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import urllib3
from urllib3.exceptions import HTTPError, MaxRetryError, SSLError, TimeoutError

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


def is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    if ip.version == 6 and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast and ip not in _CLOUD_METADATA


def resolve(host: str, port: int, allow_private: bool) -> str:
    """The address to connect to: the first the name resolves to that may be used (IPv4 first)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses = list(dict.fromkeys(info[4][0] for info in infos))
    addresses.sort(key=lambda address: ":" in address)
    usable = addresses if allow_private else [a for a in addresses if is_public(a)]
    if not usable:
        raise RefusedAddress(
            f"{host} resolves to {addresses[0]}, which is not a public address "
            "(set SVC_WEBHOOK_ALLOW_PRIVATE=true to allow it)"
        )
    return usable[0]


def _pool(scheme: str, address: str, host: str, port: int, timeout: float, ca_bundle: str | None):
    kwargs = {
        "timeout": urllib3.Timeout(connect=timeout, read=timeout),
        "retries": False,
        "maxsize": 1,
    }
    if scheme == "http":
        return urllib3.HTTPConnectionPool(address, port, **kwargs)
    context = ssl.create_default_context()
    if ca_bundle:
        context.load_verify_locations(cafile=ca_bundle)
    return urllib3.HTTPSConnectionPool(
        address, port, ssl_context=context, server_hostname=host, assert_hostname=host, **kwargs
    )


def post(
    url: str,
    body: bytes,
    headers: dict[str, str],
    *,
    timeout: float,
    allow_private: bool,
    ca_bundle: str | None,
) -> Outcome:
    """POST `body`; success is a 2xx answer within `timeout` seconds, anything else a failure
    with a short reason."""
    parts = urlsplit(url)
    host, scheme = parts.hostname, parts.scheme
    port = parts.port or (443 if scheme == "https" else 80)
    try:
        address = resolve(host, port, allow_private)
    except RefusedAddress as exc:
        return Outcome(None, f"Refused: {exc}")
    except (socket.gaierror, UnicodeError) as exc:
        return Outcome(None, f"Cannot resolve {host}: {exc}")
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    host_header = host if parts.port is None else f"{host}:{port}"
    started = time.monotonic()
    pool = _pool(scheme, address, host, port, timeout, ca_bundle)
    try:
        response = pool.urlopen(
            "POST",
            target,
            body=body,
            headers={**headers, "Host": host_header},
            redirect=False,
            preload_content=False,
            assert_same_host=False,
        )
        try:
            response.read(MAX_RESPONSE_BYTES)
        finally:
            response.close()
    except (SSLError, ssl.SSLError) as exc:
        return Outcome(None, f"TLS error: {exc}")
    except TimeoutError:
        return Outcome(None, f"Timed out after {timeout:g} s")
    except MaxRetryError as exc:
        return Outcome(None, _reason(exc.reason, timeout))
    except (HTTPError, OSError) as exc:
        return Outcome(None, _reason(exc, timeout))
    finally:
        pool.close()
    if time.monotonic() - started > timeout:
        return Outcome(response.status, f"Timed out after {timeout:g} s")
    if not 200 <= response.status < 300:
        return Outcome(response.status, f"HTTP {response.status}")
    return Outcome(response.status, None)


def _reason(exc, timeout: float) -> str:
    if isinstance(exc, TimeoutError):
        return f"Timed out after {timeout:g} s"
    if isinstance(exc, SSLError | ssl.SSLError):
        return f"TLS error: {exc}"
    return f"Connection failed: {exc}"[:500]
