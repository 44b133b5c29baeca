"""Invitations: the only way into a project (docs/api.md §7.1). An owner invites an e-mail
address with a role; the link, valid for 7 days, either adds a signed-in user with that address
or creates the account (also when registration is closed: an invitation is the way in).

A row is a pending invitation: accepting or revoking deletes it. Its token is stored hashed;
the link is shown once, to the owner who invited (so it can be passed on when mail is off), and
mailed to the invitee.
"""

import uuid
from datetime import timedelta

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError

from svc import audit
from svc.auth import tokens
from svc.config import public_url, setting
from svc.errors import Conflict, Forbidden, field_error, not_found
from svc.extensions import db
from svc.mail import outbox
from svc.models import OWNER, VIEWER, Invitation, Membership, User
from svc.models.base import new_id, utcnow
from svc.services import projects
from svc.services.identity import users
from svc.services.projects import ProjectAccess

LIFETIME = timedelta(days=7)
TOKEN_LENGTH = 43  # base62: 256 bits
NOT_FOUND = "This invitation is invalid, used, revoked or expired: ask for a new one"
ALREADY_INVITED = "This address is already invited: resend the invitation instead"


def invite(user: User, project_id: uuid.UUID, email: str, role: str) -> tuple[Invitation, str]:
    """A new invitation and its link; 409 when the address is a member or already invited."""
    project = projects.access(user, project_id, at_least=OWNER).project
    email = users.normalize_email(email)
    if setting("SVC_PASSWORD_LOGIN") == "off" and not users.domain_allowed(email):
        # Single sign-on is the only way in, and it would refuse this address.
        raise field_error("email", "Addresses at this domain cannot sign in to this svc.")
    member = db.session.scalar(
        select(Membership.user_id)
        .join(Membership.user)
        .where(Membership.project_id == project_id, User.email == email)
    )
    if member is not None:
        raise Conflict("This address belongs to a member of the project already")
    invitation = Invitation(
        id=new_id(),
        project=project,
        project_id=project.id,
        email=email,
        role=role,
        invited_by_id=user.id,
    )
    db.session.add(invitation)
    url = _renew_and_mail(invitation, user)
    _record(audit.INVITATION_CREATED, user, invitation)
    try:
        db.session.commit()
    except IntegrityError:  # an invitation for the address, pending or just made concurrently
        db.session.rollback()
        raise Conflict(ALREADY_INVITED) from None
    return invitation, url


def pending(user: User, project_id: uuid.UUID) -> list[Invitation]:
    """A project's pending invitations, newest first; expired ones too, for resending."""
    projects.access(user, project_id, at_least=OWNER)
    return list(
        db.session.scalars(
            select(Invitation)
            .where(Invitation.project_id == project_id)
            .order_by(Invitation.created_at.desc(), Invitation.id)
        )
    )


def revoke(user: User, invitation_id: uuid.UUID) -> None:
    invitation = _owned_invitation(user, invitation_id)
    _record(audit.INVITATION_REVOKED, user, invitation)
    db.session.delete(invitation)
    db.session.commit()


def resend(user: User, invitation_id: uuid.UUID) -> tuple[Invitation, str]:
    """A new link and seven more days; the old link stops working."""
    invitation = _owned_invitation(user, invitation_id)
    url = _renew_and_mail(invitation, user)
    _record(audit.INVITATION_RESENT, user, invitation)
    db.session.commit()
    return invitation, url


def _record(action: str, user: User, invitation: Invitation) -> None:
    """The address and role, never the link."""
    audit.record(
        action,
        user,
        ("invitation", invitation.id),
        project_id=invitation.project_id,
        email=invitation.email,
        role=invitation.role,
    )


def _owned_invitation(user: User, invitation_id: uuid.UUID) -> Invitation:
    """404 unless the user has a role in the invitation's project, 403 unless it is owner."""
    invitation = db.session.get(Invitation, invitation_id)
    if invitation is None or not projects.has_role(invitation.project_id, user.id, VIEWER):
        raise not_found("Invitation not found")
    projects.access(user, invitation.project_id, at_least=OWNER)
    return invitation


def address_of(invitation_id: uuid.UUID) -> str | None:
    """The address an invitation goes to (for the per-address limit), or None."""
    return db.session.scalar(select(Invitation.email).where(Invitation.id == invitation_id))


def _renew_and_mail(invitation: Invitation, inviter: User) -> str:
    value = tokens.random_base62(TOKEN_LENGTH)
    invitation.token_hash = tokens.sha256_hex(value)
    invitation.expires_at = utcnow() + LIFETIME
    url = public_url(f"/invite/{value}")
    project_name = invitation.project.name
    outbox.queue(
        invitation.email,
        f"{inviter.name} invites you to {project_name} on svc",
        f"Hello,\n\n{inviter.name} ({inviter.email}) invites you to work on the bug reports of "
        f"{project_name} as {_a_role(invitation.role)}. Accept within 7 days:\n\n{url}\n\n"
        "If you have no svc account yet, the link creates one for this address. If you did "
        "not expect this, ignore the mail: nothing happens without you.",
    )
    return url


def _a_role(role: str) -> str:
    return {OWNER: "an owner", VIEWER: "a viewer"}.get(role, "a member")


# --- the invitee's side --------------------------------------------------------------------------


def lookup(value: str) -> Invitation:
    """The live invitation a link's token names; 404 for any other."""
    invitation = db.session.scalar(
        select(Invitation).where(
            Invitation.token_hash == tokens.sha256_hex(value), Invitation.expires_at > utcnow()
        )
    )
    if invitation is None:
        raise not_found(NOT_FOUND)
    return invitation


def account_exists(invitation: Invitation) -> bool:
    return db.session.scalar(select(User.id).where(User.email == invitation.email)) is not None


def accept_as(user: User, value: str) -> ProjectAccess:
    """A signed-in user takes the invitation: it must be addressed to them (403 otherwise).
    Someone already in the project keeps the role they have."""
    invitation = lookup(value)
    if invitation.email != user.email:
        raise Forbidden(
            f"This invitation is for {invitation.email}; you are signed in as {user.email}"
        )
    membership = _join(invitation, user)
    db.session.commit()
    return ProjectAccess(membership.project, membership.role)


def accept_with_new_account(value: str, name: str, password: str) -> tuple[User, ProjectAccess]:
    """Create the account for the invited address and add it to the project, in one
    transaction; 409 when the address has an account already (sign in, then accept), 403 when
    password sign-in is off (sign in with single sign-on, then accept)."""
    users.passwords_allowed()
    invitation = lookup(value)
    if account_exists(invitation):
        raise Conflict(f"{invitation.email} has an account already: sign in, then accept")
    user = users.add_user(name, invitation.email, password)
    db.session.flush()
    membership = _join(invitation, user)
    users.commit_new_account()
    return user, ProjectAccess(membership.project, membership.role)


def _join(invitation: Invitation, user: User) -> Membership:
    """Use up the invitation (a conditional delete, so two accepts cannot both use it) and give
    the user the membership."""
    used = db.session.execute(
        delete(Invitation)
        .where(Invitation.id == invitation.id, Invitation.token_hash == invitation.token_hash)
        .execution_options(synchronize_session=False)
    ).rowcount
    if not used:
        db.session.rollback()
        raise not_found(NOT_FOUND)
    membership = db.session.get(Membership, (invitation.project_id, user.id))
    if membership is None:
        membership = Membership(
            project_id=invitation.project_id, user_id=user.id, role=invitation.role
        )
        db.session.add(membership)
        db.session.flush()
        audit.record(
            audit.MEMBER_JOINED,
            user,
            ("user", user.id),
            project_id=invitation.project_id,
            role=invitation.role,
            invitation=str(invitation.id),
        )
    return membership
