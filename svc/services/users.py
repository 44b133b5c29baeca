"""Accounts: registration, credentials check, password change."""

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from svc.auth import passwords, sessions
from svc.config import setting
from svc.errors import Conflict, Forbidden, field_error, unauthorized
from svc.extensions import db
from svc.models import User

INVALID_LOGIN = "Invalid email or password"


def normalize_email(email: str) -> str:
    return email.strip().lower()


def registration_allowed() -> bool:
    """Closed registration still lets the very first user in, so a new install can be set up."""
    if setting("SVC_REGISTRATION") == "open":
        return True
    return db.session.scalar(select(User.id).limit(1)) is None


def create_user(name: str, email: str, password: str) -> User:
    """Create an account; 409 when the e-mail is taken. Used by register and the CLI."""
    email = normalize_email(email)
    if db.session.scalar(select(User.id).where(User.email == email)) is not None:
        raise Conflict("Email already registered")
    user = User(name=name.strip(), email=email, password_hash=passwords.hash_password(password))
    db.session.add(user)
    try:
        db.session.commit()
    except IntegrityError:  # registered by a concurrent request between the check and the insert
        db.session.rollback()
        raise Conflict("Email already registered") from None
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
    if passwords.needs_rehash(user.password_hash):
        user.password_hash = passwords.hash_password(password)
        db.session.commit()
    return user


def change_password(
    user: User, current_password: str, new_password: str, keep_session=None
) -> None:
    """Set a new password and end every other session of the user."""
    if not passwords.verify_password(user.password_hash, current_password):
        raise field_error("current_password", "Current password is incorrect.")
    user.password_hash = passwords.hash_password(new_password)
    db.session.commit()
    sessions.end_sessions_of(user.id, keep=keep_session)
