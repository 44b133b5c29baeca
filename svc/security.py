"""Process-wide protections: the secret key's home and the headers every response carries."""

import os
import secrets
import time

from flask import Response, request

SECRET_KEY_FILE = "secret_key"


def load_or_create_secret_key(instance_path: str) -> str:
    """The instance's secret key, generated on first start. Safe when several workers start at
    once: the file is created exclusively and whoever loses the race reads the winner's key."""
    path = os.path.join(instance_path, SECRET_KEY_FILE)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    else:
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(48))
    for _ in range(50):
        with open(path) as handle:
            key = handle.read().strip()
        if key:
            return key
        # Another process created the file and has not written it yet.
        time.sleep(0.01)
    raise RuntimeError(f"{path} is empty; delete it to have a new key generated")


# A year; without includeSubDomains, which would bind other sites of the operator's domain.
HSTS = "max-age=31536000"


def set_security_headers(response: Response) -> Response:
    headers = response.headers
    if request.is_secure:  # as the trusted proxy says (SVC_TRUSTED_PROXIES)
        headers.setdefault("Strict-Transport-Security", HSTS)
    headers.setdefault("X-Content-Type-Options", "nosniff")
    headers.setdefault("Referrer-Policy", "no-referrer")
    headers.setdefault("X-Frame-Options", "DENY")
    if response.mimetype == "application/json":
        headers.setdefault("Cache-Control", "no-store")
    return response
