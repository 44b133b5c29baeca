import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, String, false, true
from sqlalchemy.orm import Mapped, mapped_column

from svc.extensions import db
from svc.models.base import UTCDateTime, new_id, utcnow


class User(db.Model):
    __tablename__ = "users"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(100))
    # Stored lower-cased and trimmed, so the unique index is case-insensitive in effect.
    email: Mapped[str] = mapped_column(String(320), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    # The instance's administrators (docs/api.md §5): the first user, and whoever an
    # admin or `flask --app svc make-admin` makes one.
    is_admin: Mapped[bool] = mapped_column(default=False, server_default=false())
    # A deactivated account cannot sign in; its sessions and tokens are refused at once.
    active: Mapped[bool] = mapped_column(default=True, server_default=true())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_sign_in_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class AuthSession(db.Model):
    """A signed-in browser. Access tokens name it, so ending it ends them at once.

    The refresh token is never stored: it is an HMAC over (id, generation, refresh_seed) keyed
    with the secret key, so neither the database nor the key alone can produce one. `generation`
    counts rotations; the token of generation - 1 is the "just-replaced" one of the grace window.
    """

    __tablename__ = "auth_sessions"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    refresh_seed: Mapped[str] = mapped_column(String(64))
    generation: Mapped[int] = mapped_column(default=0)
    rotated_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The access token handed out with the current generation, so that a refresh inside the
    # grace window can answer with the very same pair.
    access_jti: Mapped[str] = mapped_column(String(32))
    access_expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class PersonalAccessToken(db.Model):
    __tablename__ = "personal_access_tokens"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(100))
    # SHA-256 of the full value: the value has 200+ bits of entropy, so a slow hash buys nothing.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    token_hint: Mapped[str] = mapped_column(String(12))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    # The full value, set only on the instance that `svc.auth.pats.issue` returns, so that
    # creation can show it once. Not a column: it is never stored.
    value = None


class PasswordReset(db.Model):
    """A "forgot password" link: single use, valid for an hour. Only a hash of its token is
    stored, as for personal access tokens."""

    __tablename__ = "password_resets"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class PasswordResetRequest(db.Model):
    """A "Forgot password?" as it was asked. The request writes this row and nothing else,
    whatever the address, so that its answer takes the same time for any; the scheduler looks
    the address up and mails a link if it has an active account (svc.services.password_resets)."""

    __tablename__ = "password_reset_requests"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    email: Mapped[str] = mapped_column(String(320))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)
