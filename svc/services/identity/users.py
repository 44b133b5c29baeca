"""Accounts: registration, credentials check, password change."""

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from svc import audit
from svc.auth import passwords, sessions
from svc.auth.sessions import SessionTokens
from svc.config import setting
from svc.errors import AccountDeactivated, Conflict, Forbidden, field_error, unauthorized
from svc.extensions import db
from svc.models import AuthSession, PasswordReset, User
from svc.models.base import new_id, utcnow

INVALID_LOGIN = "Invalid email or password"
EMAIL_TAKEN = "Email already registered"


def normalize_email(email: str) -> str:
    return email.strip().lower()


def no_users_yet() -> bool:
    return db.session.scalar(select(User.id).limit(1)) is None


def registration_allowed() -> bool:
    """Closed registration still lets the very first user in, so a new install can be set up."""
    return setting("SVC_REGISTRATION") == "open" or no_users_yet()


def add_user(name: str, email: str, password: str | None, *, by_operator: bool = False) -> User:
    """A new account in the current transaction; 409 when the e-mail is taken. Its creator is
    the person it is for, or the operator (`flask --app svc create-user`). Without a password
    (made by single sign-on) no password signs into it."""
    email = normalize_email(email)
    if db.session.scalar(select(User.id).where(User.email == email)) is not None:
        raise Conflict(EMAIL_TAKEN)
    user = User(
        id=new_id(),
        name=name.strip(),
        email=email,
        password_hash=passwords.hash_password(password) if password is not None else "",
        is_admin=no_users_yet(),  # the first user administers the instance
    )
    db.session.add(user)
    audit.record(audit.ACCOUNT_CREATED, None if by_operator else user, ("user", user.id))
    return user


def commit_new_account() -> None:
    """Commit a transaction that adds an account, as a 409 when a concurrent request
    registered the address between add_user's check and this insert."""
    try:
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        raise Conflict(EMAIL_TAKEN) from None


def create_user(name: str, email: str, password: str, *, by_operator: bool = False) -> User:
    """Create an account; 409 when the e-mail is taken. Used by register and the CLI."""
    user = add_user(name, email, password, by_operator=by_operator)
    commit_new_account()
    return user


PASSWORDS_OFF = "Password sign-in is off here: sign in with single sign-on"


def domain_allowed(email: str) -> bool:
    """Whether single sign-on lets the address in (SVC_OIDC_ALLOWED_DOMAINS, when set)."""
    allowed = setting("SVC_OIDC_ALLOWED_DOMAINS")
    return not allowed or email.rsplit("@", 1)[1] in allowed


def passwords_allowed() -> None:
    """SVC_PASSWORD_LOGIN=off: only single sign-on signs in or creates accounts (403)."""
    if setting("SVC_PASSWORD_LOGIN") == "off":
        raise Forbidden(PASSWORDS_OFF)


def sign_in_methods() -> dict:
    """What the sign-in page offers (SVC_PASSWORD_LOGIN, SVC_REGISTRATION, SVC_OIDC_*)."""
    sso = None
    if setting("SVC_OIDC_ISSUER"):
        sso = {"name": setting("SVC_OIDC_NAME") or "single sign-on", "url": "/sso/login"}
    return {
        "password": setting("SVC_PASSWORD_LOGIN") == "on",
        "registration": "open" if registration_allowed() else "closed",
        "single_sign_on": sso,
    }


def register(name: str, email: str, password: str) -> User:
    passwords_allowed()
    if not registration_allowed():
        raise Forbidden("Registration is closed; ask an administrator for an account")
    return create_user(name, email, password)


def authenticate(email: str, password: str) -> User:
    """The user these credentials belong to; 401 with the same text (and time) whether or not the
    e-mail exists."""
    passwords_allowed()
    email = normalize_email(email)
    user = db.session.scalar(select(User).where(User.email == email))
    if user is None or not user.password_hash:  # none, or made by single sign-on
        passwords.spend_verify_time(password)
        record_failed_sign_in(user, email, "unknown address" if user is None else "no password")
        raise unauthorized(INVALID_LOGIN)
    if not passwords.verify_password(user.password_hash, password):
        record_failed_sign_in(user, email, "wrong password")
        raise unauthorized(INVALID_LOGIN)
    if not user.active:
        record_failed_sign_in(user, email, "deactivated")
        raise AccountDeactivated()
    if passwords.needs_rehash(user.password_hash):
        user.password_hash = passwords.hash_password(password)
        db.session.commit()
    return user


def record_failed_sign_in(user: User | None, email: str | None, reason: str, **detail) -> None:
    """A refused sign-in (password, second factor, single sign-on) in the audit log, committed
    now: the refusal that follows writes nothing more."""
    if email:
        detail["email"] = email[:254]
    target = ("user", user.id if user else None)
    audit.record(audit.SIGN_IN_FAILED, None, target, reason=reason, **detail)
    db.session.commit()


def sign_in(user: User, method: str = "password") -> SessionTokens:
    """A new session for the user (svc.auth.sessions), recorded with how they signed in."""
    audit.record(audit.SIGN_IN, user, ("user", user.id), method=method)
    return sessions.start_session(user)


def sign_out(session_id) -> None:
    """End the session, if it is still live; recorded with it."""
    session = db.session.get(AuthSession, session_id)
    if session is None or session.ended_at is not None:
        db.session.rollback()
        return
    user = sessions.user_of(session)
    audit.record(audit.SIGN_OUT, user, ("user", user.id))
    sessions.end_session(session_id)


def spend_reset_links(user_id) -> None:
    """Every unused reset link of the user stops working: a link mailed before a password
    changed must not reset it again."""
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
    audit.record(audit.PASSWORD_CHANGED, user, ("user", user.id))
    db.session.commit()
    sessions.end_sessions_of(user.id, keep=keep_session)
