"""The two signatures every delivery carries (docs/api.md §12)."""

import base64
import hashlib
import hmac
import secrets

WEBHOOK_SECRET_PREFIX = "whsec_"


def new_webhook_secret() -> str:
    """`whsec_` + base64 of 32 random bytes, as the Standard Webhooks libraries expect."""
    return WEBHOOK_SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def hmac_sha256(key: str, body: bytes) -> str:
    """Lowercase hex HMAC-SHA256 of the exact body bytes: X-Svc-Signature's (keyed with the
    API key), and the trackers' signatures of what they send svc (svc.integrations)."""
    return hmac.new(key.encode(), body, hashlib.sha256).hexdigest()


def svc_signature(api_key: str, body: bytes) -> str:
    """X-Svc-Signature, keyed with the API key. The API key ships inside the public widget, so
    this proves little; see standard_signature."""
    return hmac_sha256(api_key, body)


def standard_signature(webhook_secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """webhook-signature of the Standard Webhooks specification, keyed with the project's own
    secret: `v1,` + base64 HMAC-SHA256 of "{id}.{timestamp}.{body}"."""
    key = base64.b64decode(webhook_secret.removeprefix(WEBHOOK_SECRET_PREFIX))
    signed = f"{message_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
