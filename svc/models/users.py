import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, LargeBinary, String, false, true
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
    # Single sign-on (docs/identity.md): "<issuer> <sub>" of the provider's account it is
    # linked to; an account made by single sign-on has no password (password_hash "").
    oidc_subject: Mapped[str | None] = mapped_column(String(600), unique=True)


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
    # What it may do (svc.auth.pats.SCOPES), space-separated; None: everything its user may.
    scopes: Mapped[str | None] = mapped_column(String(100))

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
    the address up and mails a link if it has an active account
    (svc.services.identity.password_resets)."""

    __tablename__ = "password_reset_requests"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    email: Mapped[str] = mapped_column(String(320))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)


class SecondFactor(db.Model):
    """A user's second factor (docs/identity.md): an authenticator app's TOTP secret, or a
    passkey. A TOTP factor counts once its first code was confirmed (`confirmed_at`)."""

    __tablename__ = "second_factors"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    kind: Mapped[str] = mapped_column(String(10))  # "totp" or "passkey"
    name: Mapped[str] = mapped_column(String(100))
    # TOTP: the shared secret, encrypted at rest (svc.secrets); the time step of the last code
    # accepted, so that a code works once (a conditional UPDATE,
    # svc.services.identity.second_factors).
    totp_secret: Mapped[str | None] = mapped_column(String(255))
    last_step: Mapped[int | None] = mapped_column()
    # Passkey: the credential's id (base64url), its public key (COSE) and signature counter.
    credential_id: Mapped[str | None] = mapped_column(String(1400), unique=True)
    public_key: Mapped[bytes | None] = mapped_column(LargeBinary)
    sign_count: Mapped[int] = mapped_column(default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    confirmed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class RecoveryCode(db.Model):
    """One of a user's 10 single-use recovery codes. 80 random bits each, so SHA-256 is enough:
    nobody can try 2^80 of them."""

    __tablename__ = "recovery_codes"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    code_hash: Mapped[str] = mapped_column(String(64))
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class PendingSignIn(db.Model):
    """A password sign-in waiting for its second factor (or, with SVC_REQUIRE_2FA, for the
    user to enrol one): five minutes, one success, a few wrong codes. Its cookie opens the
    second-factor endpoints and nothing else; only a hash of the cookie's value is stored."""

    __tablename__ = "pending_sign_ins"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # The WebAuthn challenge a passkey must sign (base64url), once asked for.
    challenge: Mapped[str | None] = mapped_column(String(128))
    # SVC_REQUIRE_2FA and no factor yet: the TOTP secret being enrolled (encrypted).
    enrolling_secret: Mapped[str | None] = mapped_column(String(255))
    failures: Mapped[int] = mapped_column(default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
