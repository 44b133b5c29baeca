"""Personal access tokens: issue, list, revoke, and the check behind `Authorization: Bearer`."""

import uuid
from datetime import timedelta

from sqlalchemy import delete, select

from svc import audit, database
from svc.auth import tokens
from svc.errors import not_found, unauthorized
from svc.extensions import db
from svc.models import PersonalAccessToken, User
from svc.models.base import utcnow

# What a token may be limited to (contract v6 §24). No scope: everything its user may do.
READ = "reports:read"  # read anything its user may read; change nothing
WRITE = "reports:write"  # and change reports (status, comments, assignee, duplicates)
SCOPES = (READ, WRITE)
# A token's use is recorded once a minute at most: a script's requests then only read, and on
# SQLite do not queue for the write lock behind the widget's reports (docs/api.md §6).
LAST_USE_RESOLUTION = timedelta(minutes=1)


def issue(
    user: User, name: str, expires_in_days: int, scopes: list[str] | None = None
) -> PersonalAccessToken:
    """A new token; its `value` exists only on the returned instance, never in storage."""
    value = tokens.new_pat()
    token = PersonalAccessToken(
        user_id=user.id,
        name=name.strip(),
        token_hash=tokens.sha256_hex(value),
        token_hint=value[: tokens.TOKEN_HINT_LENGTH],
        expires_at=utcnow() + timedelta(days=expires_in_days),
        scopes=" ".join(sorted(set(scopes))) if scopes else None,
    )
    db.session.add(token)
    db.session.flush()
    audit.record(audit.TOKEN_CREATED, user, ("token", token.id), name=token.name)
    db.session.commit()
    token.value = value
    return token


def list_for(user: User) -> list[PersonalAccessToken]:
    return list(
        db.session.scalars(
            select(PersonalAccessToken)
            .where(PersonalAccessToken.user_id == user.id)
            .order_by(PersonalAccessToken.created_at.desc(), PersonalAccessToken.id)
        )
    )


def revoke(user: User, token_id: uuid.UUID) -> None:
    name = db.session.execute(
        delete(PersonalAccessToken)
        .where(PersonalAccessToken.id == token_id, PersonalAccessToken.user_id == user.id)
        .returning(PersonalAccessToken.name)
    ).scalar()
    if name is None:
        db.session.rollback()
        raise not_found("Token not found")
    audit.record(audit.TOKEN_REVOKED, user, ("token", token_id), name=name)
    db.session.commit()


def revoke_all_of(user_id: uuid.UUID) -> None:
    """In the caller's transaction: every token of the user stops working at its commit."""
    db.session.execute(delete(PersonalAccessToken).where(PersonalAccessToken.user_id == user_id))


def may_write_reports(token: PersonalAccessToken) -> bool:
    return token.scopes is None or WRITE in token.scopes.split()


def authenticate(value: str) -> User:
    """The creator of a live token; 401 for a malformed, unknown, revoked or expired one."""
    return db.session.get(User, live_token(value).user_id)


def live_token(value: str) -> PersonalAccessToken:
    """The live token of that value (its use recorded, to the minute); 401 for a malformed,
    unknown, revoked or expired one."""
    if not tokens.is_well_formed_pat(value):
        raise unauthorized("Invalid personal access token")
    database.begin_read_only(db.session())
    token = db.session.scalar(
        select(PersonalAccessToken).where(
            PersonalAccessToken.token_hash == tokens.sha256_hex(value)
        )
    )
    if token is None:
        raise unauthorized("Invalid or revoked personal access token")
    now = utcnow()
    if token.expires_at <= now:
        raise unauthorized("Personal access token expired")
    if token.last_used_at is None or now - token.last_used_at >= LAST_USE_RESOLUTION:
        db.session.commit()  # the read's transaction: the write takes the write lock in its own
        token.last_used_at = now
        db.session.commit()
    return token
