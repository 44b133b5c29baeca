"""The half-signed-in state (docs/identity.md): a password accepted, its second factor not yet.

Its cookie reaches the second-factor endpoints and nothing else (the guard reads no other
cookie), lasts five minutes and ends at the first success or the fifth wrong code. The row
lives in the database, so any worker on any host completes what another began."""

import secrets
from datetime import timedelta

from sqlalchemy import select, update

from svc.auth import tokens
from svc.extensions import db
from svc.models import PendingSignIn, User
from svc.models.base import utcnow

LIFETIME = timedelta(minutes=5)
MAX_FAILURES = 5


def _hash(token: str) -> str:
    return tokens.sha256_hex(token)


def begin(user: User) -> tuple[str, PendingSignIn]:
    """A new half-signed-in state for the user, committed; its cookie's value, and the row."""
    token = secrets.token_urlsafe(32)
    now = utcnow()
    pending = PendingSignIn(
        user_id=user.id, token_hash=_hash(token), created_at=now, expires_at=now + LIFETIME
    )
    db.session.add(pending)
    db.session.commit()
    return token, pending


def find(token: str) -> PendingSignIn | None:
    """The live state the cookie names: not expired, not spent, not failed too often."""
    if not token:
        return None
    return db.session.scalar(
        select(PendingSignIn).where(
            PendingSignIn.token_hash == _hash(token),
            PendingSignIn.used_at.is_(None),
            PendingSignIn.expires_at > utcnow(),
            PendingSignIn.failures < MAX_FAILURES,
        )
    )


def spend(pending: PendingSignIn) -> bool:
    """Mark it used unless another request did first (or it expired meanwhile): a conditional
    UPDATE, so two requests racing with two good codes start one session, not two."""
    now = utcnow()
    result = db.session.execute(
        update(PendingSignIn)
        .where(
            PendingSignIn.id == pending.id,
            PendingSignIn.used_at.is_(None),
            PendingSignIn.expires_at > now,
        )
        .values(used_at=now)
        .execution_options(synchronize_session=False)
    )
    return result.rowcount == 1


def count_failure(pending: PendingSignIn) -> None:
    """One more wrong answer, in the caller's transaction (it commits it with the refusal's
    audit entry)."""
    db.session.execute(
        update(PendingSignIn)
        .where(PendingSignIn.id == pending.id)
        .values(failures=PendingSignIn.failures + 1)
        .execution_options(synchronize_session=False)
    )
