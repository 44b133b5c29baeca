"""Secrets the service must use again and so cannot hash (a tracker's token): encrypted at rest
with Fernet (cryptography). SVC_ENCRYPTION_KEYS lists keys, the first encrypts and all decrypt,
so a key is rotated by putting the new one first; none set, one key is derived from the secret
key (docs/integrations.md, "Tokens")."""

import base64
import hashlib

from flask import current_app

from svc.config import setting


class Undecryptable(Exception):
    """No key in SVC_ENCRYPTION_KEYS opens the value (the key it was written with is gone)."""


def _keys():
    # cryptography (8 MB) is loaded by the processes that use a secret, not by every one.
    from cryptography.fernet import Fernet, MultiFernet

    keys = setting("SVC_ENCRYPTION_KEYS")
    if not keys:
        derived = hashlib.sha256(b"svc encryption|" + current_app.secret_key.encode()).digest()
        keys = (base64.urlsafe_b64encode(derived).decode(),)
    return MultiFernet([Fernet(key) for key in keys])


def encrypt(text: str) -> str:
    return _keys().encrypt(text.encode()).decode()


def decrypt(value: str) -> str:
    from cryptography.fernet import InvalidToken

    try:
        return _keys().decrypt(value.encode()).decode()
    except InvalidToken:
        raise Undecryptable("no key in SVC_ENCRYPTION_KEYS opens this token") from None
