"""Argon2id password hashing with OWASP's recommended parameters (19 MiB, 2 passes, 1 lane)."""

from functools import lru_cache


@lru_cache(maxsize=1)
def _hasher():
    # Imported at the first password, not by every process that creates the app: gunicorn's
    # master and the scheduler hash none (docs/performance.md, "Memory").
    from argon2 import PasswordHasher

    return PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)


def hash_password(password: str) -> str:
    return _hasher().hash(password)


def verify_password(password_hash: str, password: str) -> bool:
    from argon2.exceptions import InvalidHashError, VerificationError

    try:
        return _hasher().verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def needs_rehash(password_hash: str) -> bool:
    return _hasher().check_needs_rehash(password_hash)


@lru_cache(maxsize=1)
def _dummy_hash() -> str:
    return _hasher().hash("not a real password, only spends the same time")


def spend_verify_time(password: str) -> None:
    """Do the work of a verification for an e-mail that has no account, so that a login's timing
    does not tell whether the address is registered."""
    verify_password(_dummy_hash(), password)
