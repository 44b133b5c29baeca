"""Server-side sessions: start, refresh (single-use tokens, grace window, theft detection), end."""

import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select, update

from svc.auth import tokens
from svc.config import setting
from svc.errors import unauthorized
from svc.extensions import db
from svc.models import AuthSession, User
from svc.models.base import utcnow


@dataclass(frozen=True)
class SessionTokens:
    """What the session cookies carry, with their expiry times."""

    access_token: str
    access_expires_at: datetime
    refresh_token: str
    csrf_token: str
    session_expires_at: datetime


def _secret() -> str:
    return setting("SECRET_KEY")


def _access_lifetime() -> timedelta:
    return timedelta(minutes=setting("SVC_ACCESS_TOKEN_MINUTES"))


def _session_end(signed_in_at: datetime, now: datetime) -> datetime:
    """Each refresh grants SVC_REFRESH_TOKEN_DAYS more, never past SVC_SESSION_MAX_DAYS after
    the sign-in: a stolen session cannot be kept alive for ever by refreshing it."""
    return min(
        now + timedelta(days=setting("SVC_REFRESH_TOKEN_DAYS")),
        signed_in_at + timedelta(days=setting("SVC_SESSION_MAX_DAYS")),
    )


def _new_jti() -> str:
    return secrets.token_hex(16)


def tokens_for(session: AuthSession) -> SessionTokens:
    """The token pair of the session's current generation; the same inputs give the same strings."""
    secret = _secret()
    return SessionTokens(
        access_token=tokens.sign_access_token(
            secret, session.id, session.access_jti, session.access_expires_at
        ),
        access_expires_at=session.access_expires_at,
        refresh_token=tokens.refresh_token_for(
            secret, session.id, session.generation, session.refresh_seed
        ),
        csrf_token=tokens.csrf_token_for(secret, session.id),
        session_expires_at=session.expires_at,
    )


def start_session(user: User) -> SessionTokens:
    """A login: a new session, so tokens from before the login (fixation) are worth nothing."""
    now = utcnow()
    session = AuthSession(
        user_id=user.id,
        refresh_seed=secrets.token_urlsafe(32),
        access_jti=_new_jti(),
        access_expires_at=now + _access_lifetime(),
        created_at=now,
        expires_at=_session_end(now, now),
    )
    db.session.add(session)
    user.last_sign_in_at = now
    db.session.commit()
    return tokens_for(session)


def _is_live(session: AuthSession, now: datetime) -> bool:
    signed_in_for = now - session.created_at
    return (
        session.ended_at is None
        and session.expires_at > now
        and signed_in_for < timedelta(days=setting("SVC_SESSION_MAX_DAYS"))
    )


def session_for_access_token(access_token: str) -> AuthSession | None:
    """The live session a genuine, unexpired access token names; None for anything else."""
    claims = tokens.read_access_token(_secret(), access_token)
    now = utcnow()
    if claims is None or claims.expires_at <= now:
        return None
    session = db.session.get(AuthSession, claims.session_id)
    return session if session is not None and _is_live(session, now) else None


def refresh(refresh_token: str) -> tuple[User, SessionTokens]:
    """Rotate a session's tokens. Raises 401 for anything but a current (or just-replaced) token."""
    parsed = tokens.parse_refresh_token(refresh_token)
    if parsed is None:
        raise unauthorized("Invalid refresh token")
    session_id, generation = parsed
    session = db.session.get(AuthSession, session_id)
    now = utcnow()
    if session is None or not _is_live(session, now):
        raise unauthorized("Session expired or ended")
    expected = tokens.refresh_token_for(_secret(), session_id, generation, session.refresh_seed)
    if not tokens.same_secret(refresh_token, expected):
        raise unauthorized("Invalid refresh token")

    if generation == session.generation and _rotate(session, now):
        return user_of(session), tokens_for(session)
    # Either the token was already used, or a concurrent request rotated it a moment ago.
    session = _reload(session_id)
    grace = timedelta(seconds=setting("SVC_REFRESH_REUSE_GRACE"))
    if (
        generation == session.generation - 1
        and session.rotated_at is not None
        and now - session.rotated_at <= grace
    ):
        return user_of(session), tokens_for(session)
    # An old token presented again after the grace window: someone holds a copy. End it all.
    end_session(session_id)
    raise unauthorized("Refresh token already used; the session has been ended")


def _rotate(session: AuthSession, now: datetime) -> bool:
    """Advance the generation unless somebody else did first: a conditional update, not a
    read-then-write."""
    result = db.session.execute(
        update(AuthSession)
        .where(
            AuthSession.id == session.id,
            AuthSession.generation == session.generation,
            AuthSession.ended_at.is_(None),
        )
        .values(
            generation=session.generation + 1,
            rotated_at=now,
            access_jti=_new_jti(),
            access_expires_at=now + _access_lifetime(),
            expires_at=_session_end(session.created_at, now),
        )
        .execution_options(synchronize_session=False)
    )
    if result.rowcount != 1:
        db.session.rollback()
        return False
    db.session.commit()
    db.session.refresh(session)
    return True


def _reload(session_id: uuid.UUID) -> AuthSession:
    return db.session.execute(
        select(AuthSession)
        .where(AuthSession.id == session_id)
        .execution_options(populate_existing=True)
    ).scalar_one()


def user_of(session: AuthSession) -> User:
    return db.session.get(User, session.user_id)


def end_session(session_id: uuid.UUID) -> None:
    db.session.execute(
        update(AuthSession)
        .where(AuthSession.id == session_id, AuthSession.ended_at.is_(None))
        .values(ended_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    db.session.commit()


def end_sessions_of(user_id: uuid.UUID, keep: uuid.UUID | None = None) -> None:
    """End every live session of a user, but `keep` (the one that asked, on a password change)."""
    statement = update(AuthSession).where(
        AuthSession.user_id == user_id, AuthSession.ended_at.is_(None)
    )
    if keep is not None:
        statement = statement.where(AuthSession.id != keep)
    db.session.execute(
        statement.values(ended_at=utcnow()).execution_options(synchronize_session=False)
    )
    db.session.commit()


def session_id_from_cookies(
    access_token: str | None, refresh_token: str | None
) -> uuid.UUID | None:
    """The session a logout names: by a genuine access token (even an expired one), else by a
    refresh token whose MAC checks out."""
    if access_token:
        claims = tokens.read_access_token(_secret(), access_token)
        if claims is not None:
            return claims.session_id
    parsed = tokens.parse_refresh_token(refresh_token) if refresh_token else None
    if parsed is None:
        return None
    session = db.session.get(AuthSession, parsed[0])
    if session is None:
        return None
    expected = tokens.refresh_token_for(_secret(), parsed[0], parsed[1], session.refresh_seed)
    return session.id if tokens.same_secret(refresh_token, expected) else None
