"""Formats of every credential the service hands out, and their cryptography. No database here.

- access token (cookie): a signed JSON `{sid, jti, exp}`; deterministic, so the same session,
  jti and expiry always give the same string (the refresh grace window relies on it).
- refresh token (cookie): `<session id>.<generation>.<HMAC(secret, id|generation|seed)>`.
- CSRF token: HMAC of the session id, so it is bound to its session.
- personal access token: `svc_pat_` + 36 random base62 characters + a 6-character checksum.
- project API key: `svc_pub_` + 40 random base62 characters.
"""

import base64
import hashlib
import hmac
import secrets
import string
import uuid
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime

from itsdangerous import BadSignature, URLSafeSerializer

BASE62 = string.digits + string.ascii_letters
PAT_PREFIX = "svc_pat_"
API_KEY_PREFIX = "svc_pub_"
_PAT_RANDOM_LENGTH = 36
_CHECKSUM_LENGTH = 6
PAT_LENGTH = len(PAT_PREFIX) + _PAT_RANDOM_LENGTH + _CHECKSUM_LENGTH
TOKEN_HINT_LENGTH = 12


def random_base62(length: int) -> str:
    return "".join(secrets.choice(BASE62) for _ in range(length))


def sha256_hex(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def base64url(raw: bytes) -> str:
    """URL-safe base64 without padding: what a token in a link is written in."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _mac(secret_key: str, purpose: str, message: str) -> str:
    digest = hmac.new(f"{purpose}:{secret_key}".encode(), message.encode(), hashlib.sha256).digest()
    return base64url(digest)


# --- personal access tokens -------------------------------------------------------------------


def _base62_checksum(body: str) -> str:
    value = zlib.crc32(body.encode())
    digits = []
    for _ in range(_CHECKSUM_LENGTH):
        value, rest = divmod(value, 62)
        digits.append(BASE62[rest])
    return "".join(reversed(digits))


def new_pat() -> str:
    body = random_base62(_PAT_RANDOM_LENGTH)
    return f"{PAT_PREFIX}{body}{_base62_checksum(body)}"


def is_well_formed_pat(value: str) -> bool:
    """Rejects typos and truncated values without a database look-up."""
    if len(value) != PAT_LENGTH or not value.startswith(PAT_PREFIX):
        return False
    rest = value[len(PAT_PREFIX) :]
    if any(char not in BASE62 for char in rest):
        return False
    body, checksum = rest[:-_CHECKSUM_LENGTH], rest[-_CHECKSUM_LENGTH:]
    return hmac.compare_digest(checksum, _base62_checksum(body))


def new_api_key() -> str:
    return f"{API_KEY_PREFIX}{random_base62(40)}"


# --- session tokens ---------------------------------------------------------------------------


@dataclass(frozen=True)
class AccessClaims:
    session_id: uuid.UUID
    jti: str
    expires_at: datetime


def _access_serializer(secret_key: str) -> URLSafeSerializer:
    return URLSafeSerializer(secret_key, salt="svc.access")


def sign_access_token(
    secret_key: str, session_id: uuid.UUID, jti: str, expires_at: datetime
) -> str:
    payload = {"sid": session_id.hex, "jti": jti, "exp": int(expires_at.timestamp() * 1000)}
    return _access_serializer(secret_key).dumps(payload)


def read_access_token(secret_key: str, token: str) -> AccessClaims | None:
    """The claims of a genuine token, expired or not (logout accepts an expired one); else None."""
    try:
        payload = _access_serializer(secret_key).loads(token)
        return AccessClaims(
            session_id=uuid.UUID(hex=payload["sid"]),
            jti=str(payload["jti"]),
            expires_at=datetime.fromtimestamp(payload["exp"] / 1000, UTC),
        )
    except (BadSignature, KeyError, TypeError, ValueError):
        return None


def refresh_token_for(secret_key: str, session_id: uuid.UUID, generation: int, seed: str) -> str:
    mac = _mac(secret_key, "refresh", f"{session_id.hex}|{generation}|{seed}")
    return f"{session_id.hex}.{generation}.{mac}"


def parse_refresh_token(token: str) -> tuple[uuid.UUID, int] | None:
    """(session id, generation) named by a token, before its MAC is checked; None if malformed."""
    parts = token.split(".")
    if len(parts) != 3 or not parts[1].isdigit() or len(parts[1]) > 9:
        return None
    try:
        return uuid.UUID(hex=parts[0]), int(parts[1])
    except ValueError:
        return None


def csrf_token_for(secret_key: str, session_id: uuid.UUID) -> str:
    return _mac(secret_key, "csrf", session_id.hex)


def same_secret(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode(), expected.encode())
