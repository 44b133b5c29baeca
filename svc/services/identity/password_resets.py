"""Password reset by e-mail (docs/api.md §3): a single-use link valid for an hour, whose
token is stored hashed. Asking answers the same whether or not the address has an account;
using it ends every session and revokes every personal access token of the user."""

from datetime import timedelta

from sqlalchemy import delete, select, update

from svc import audit, database
from svc.auth import passwords, pats, sessions, tokens
from svc.config import public_url
from svc.errors import BadRequest
from svc.extensions import db
from svc.mail import outbox
from svc.models import PasswordReset, PasswordResetRequest, User
from svc.models.base import utcnow
from svc.services.identity.users import normalize_email, spend_reset_links

LIFETIME = timedelta(hours=1)
TOKEN_LENGTH = 43  # base62: 256 bits
INVALID_LINK = "This reset link is invalid, used or expired: ask for a new one"


def request_reset(email: str) -> None:
    """Record the ask, and nothing else: the same work for an address with an account as for
    one without, so that the answer's time tells nobody which it was (the link is made and
    mailed by `handle_requests`, in the scheduler)."""
    db.session.add(PasswordResetRequest(email=normalize_email(email)[:320]))
    db.session.commit()


def handle_requests(limit: int = 100) -> int:
    """Mail a link for each waiting request whose address has an active account; drop the
    rest. Each request is taken by a conditional delete in the transaction that makes its link,
    so that two scheduler processes never mail two. How many were handled."""
    database.begin_read_only(db.session())  # the poll, every second, takes no write lock
    waiting = db.session.scalars(
        select(PasswordResetRequest.id).order_by(PasswordResetRequest.created_at).limit(limit)
    ).all()
    db.session.commit()
    handled = 0
    for request_id in waiting:
        email = db.session.execute(
            delete(PasswordResetRequest)
            .where(PasswordResetRequest.id == request_id)
            .returning(PasswordResetRequest.email)
        ).scalar()
        if email is None:  # another process took it
            db.session.rollback()
            continue
        handled += 1
        user = db.session.scalar(select(User).where(User.email == email))
        if user is not None and user.active:
            send_reset_link(user)
        else:
            db.session.commit()
    db.session.commit()
    return handled


def send_reset_link(user: User) -> None:
    """A new link, mailed; earlier links of the user keep working until they expire, or until
    one of them (or a password change) sets a new password."""
    value = tokens.random_base62(TOKEN_LENGTH)
    db.session.add(
        PasswordReset(
            user_id=user.id,
            token_hash=tokens.sha256_hex(value),
            expires_at=utcnow() + LIFETIME,
        )
    )
    link = public_url(f"/reset-password/{value}")
    outbox.queue(
        user.email,
        "Reset your svc password",
        f"Hello {user.name},\n\n"
        f"someone (we hope you) asked to reset the password of your svc account. Choose a new "
        f"password here, within the hour:\n\n{link}\n\n"
        "The link works once. If you did not ask, ignore this mail: your password stays as "
        "it is.",
    )
    db.session.commit()


def reset(value: str, new_password: str) -> User:
    """Set the password through a live link; 400 for an unknown, used or expired one."""
    now = utcnow()
    used = db.session.execute(
        update(PasswordReset)
        .where(
            PasswordReset.token_hash == tokens.sha256_hex(value),
            PasswordReset.used_at.is_(None),
            PasswordReset.expires_at > now,
        )
        .values(used_at=now)
        .returning(PasswordReset.user_id)
    ).first()
    if used is None:
        db.session.rollback()
        raise BadRequest(INVALID_LINK)
    user = db.session.get(User, used.user_id)
    set_password(user, new_password)
    return user


def set_password(user: User, new_password: str, *, by_operator: bool = False) -> None:
    """A new password that nobody who had the old one may ride on: every session of the user
    ends and every personal access token is revoked (a reset, or the operator's
    `flask --app svc set-password`)."""
    user.password_hash = passwords.hash_password(new_password)
    via = "operator" if by_operator else "link"
    audit.record(audit.PASSWORD_RESET, None if by_operator else user, ("user", user.id), via=via)
    pats.revoke_all_of(user.id)
    spend_reset_links(user.id)
    db.session.commit()
    sessions.end_sessions_of(user.id)
