"""Accounts: registration, credentials check, password change."""

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from svc.auth import passwords, sessions
from svc.config import setting
from svc.errors import AccountDeactivated, Conflict, Forbidden, field_error, unauthorized
from svc.extensions import db
from svc.models import PasswordReset, User
from svc.models.base import utcnow

INVALID_LOGIN = "Invalid email or password"
EMAIL_TAKEN = "Email already registered"


def normalize_email(email: str) -> str:
    return email.strip().lower()


def no_users_yet() -> bool:
    return db.session.scalar(select(User.id).limit(1)) is None


def registration_allowed() -> bool:
    """Closed registration still lets the very first user in, so a new install can be set up."""
    return setting("SVC_REGISTRATION") == "open" or no_users_yet()


def add_user(name: str, email: str, password: str) -> User:
    """A new account in the current transaction; 409 when the e-mail is taken."""
    email = normalize_email(email)
    if db.session.scalar(select(User.id).where(User.email == email)) is not None:
        raise Conflict(EMAIL_TAKEN)
    user = User(
        name=name.strip(),
        email=email,
        password_hash=passwords.hash_password(password),
        is_admin=no_users_yet(),  # the first user administers the instance
    )
    db.session.add(user)
    return user


def commit_new_account() -> None:
    """Commit a transaction that adds an account, as a 409 when a concurrent request
    registered the address between add_user's check and this insert."""
    try:
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        raise Conflict(EMAIL_TAKEN) from None


def create_user(name: str, email: str, password: str) -> User:
    """Create an account; 409 when the e-mail is taken. Used by register and the CLI."""
    user = add_user(name, email, password)
    commit_new_account()
    return user


def register(name: str, email: str, password: str) -> User:
    if not registration_allowed():
        raise Forbidden("Registration is closed; ask an administrator for an account")
    return create_user(name, email, password)


def authenticate(email: str, password: str) -> User:
    """The user these credentials belong to; 401 with the same text (and time) whether or not the
    e-mail exists."""
    user = db.session.scalar(select(User).where(User.email == normalize_email(email)))
    if user is None:
        passwords.spend_verify_time(password)
        raise unauthorized(INVALID_LOGIN)
    if not passwords.verify_password(user.password_hash, password):
        raise unauthorized(INVALID_LOGIN)
    if not user.active:
        raise AccountDeactivated()
    if passwords.needs_rehash(user.password_hash):
        user.password_hash = passwords.hash_password(password)
        db.session.commit()
    return user


def spend_reset_links(user_id) -> None:
    """Every unused reset link of the user stops working: a link mailed before a password
    changed must not reset it again (contract v4)."""
    db.session.execute(
        update(PasswordReset)
        .where(PasswordReset.user_id == user_id, PasswordReset.used_at.is_(None))
        .values(used_at=utcnow())
    )


def change_password(
    user: User, current_password: str, new_password: str, keep_session=None
) -> None:
    """Set a new password and end every other session of the user."""
    if not passwords.verify_password(user.password_hash, current_password):
        raise field_error("current_password", "Current password is incorrect.")
    user.password_hash = passwords.hash_password(new_password)
    spend_reset_links(user.id)
    db.session.commit()
    sessions.end_sessions_of(user.id, keep=keep_session)
