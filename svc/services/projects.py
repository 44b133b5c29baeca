"""Projects and teams (docs/api.md §7): who may see and change what, tracking prefixes, keys."""

import re
import unicodedata
import uuid
from dataclasses import dataclass

from sqlalchemy import case, func, select
from sqlalchemy.exc import IntegrityError

from svc import audit
from svc.auth import tokens
from svc.errors import Conflict, Forbidden, not_found
from svc.extensions import db
from svc.models import (
    MEMBER,
    OWNER,
    VIEWER,
    Membership,
    Project,
    Report,
    User,
    role_at_least,
)
from svc.models.base import new_id, utcnow
from svc.services import widget
from svc.services.reporting import screenshots
from svc.webhooks import signing
from svc.wire import camelcase

FALLBACK_PREFIX = "BUG"
MAX_PREFIX_LENGTH = 10
_CREATE_ATTEMPTS = 5


@dataclass(frozen=True)
class ProjectAccess:
    """A project as one caller sees it: with the caller's role in it."""

    project: Project
    role: str

    @property
    def widget_settings(self) -> dict:
        """Every widget setting in force, for the schema that dumps this."""
        return widget.settings_in_force(self.project)


# --- tracking prefixes ---------------------------------------------------------------------------


def derive_tracking_prefix(name: str) -> str:
    """Initials of the name's words when there are two or more, else its first three letters and
    digits; ASCII only, uppercased; BUG when that is shorter than 2 or starts with a digit."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    words = re.findall(r"[A-Za-z0-9]+", ascii_name)
    if len(words) >= 2:
        candidate = "".join(word[0] for word in words)
    else:
        candidate = "".join(words)[:3]
    candidate = candidate.upper()[:MAX_PREFIX_LENGTH]
    if len(candidate) < 2 or not candidate[0].isalpha():
        return FALLBACK_PREFIX
    return candidate


def _first_free_prefix(base: str) -> str:
    """`base`, else base2, base3, ... (shortening base where the number would not fit)."""
    taken = set(
        db.session.scalars(
            select(Project.tracking_prefix).where(
                Project.tracking_prefix.startswith(base[: MAX_PREFIX_LENGTH - 2])
            )
        )
    )
    if base not in taken:
        return base
    number = 2
    while True:
        suffix = str(number)
        candidate = base[: MAX_PREFIX_LENGTH - len(suffix)] + suffix
        if candidate not in taken:
            return candidate
        number += 1


def _prefix_taken(prefix: str, except_project: uuid.UUID | None = None) -> bool:
    statement = select(Project.id).where(Project.tracking_prefix == prefix)
    if except_project is not None:
        statement = statement.where(Project.id != except_project)
    return db.session.scalar(statement) is not None


def _prefix_conflict(prefix: str) -> Conflict:
    return Conflict(f"Tracking prefix {prefix} is already taken")


# --- access --------------------------------------------------------------------------------------


def ids_of(user: User, project_id: uuid.UUID | None = None):
    """A SELECT of the ids of the user's projects, or of the one given if it is one of them."""
    chosen = select(Membership.project_id).where(Membership.user_id == user.id)
    if project_id is not None:
        chosen = chosen.where(Membership.project_id == project_id)
    return chosen


def access(user: User, project_id: uuid.UUID, *, at_least: str = VIEWER) -> ProjectAccess:
    """The project if the user has a role in it: 404 for anyone else (existence is not leaked),
    403 for a role below `at_least` (docs/api.md §7)."""
    membership = db.session.get(Membership, (project_id, user.id))
    if membership is None:
        raise not_found("Project not found")
    if not role_at_least(membership.role, at_least):
        raise Forbidden(_NEEDS[at_least])
    return ProjectAccess(membership.project, membership.role)


def has_role(project_id: uuid.UUID, user_id: uuid.UUID, at_least: str) -> bool:
    """Whether someone else (an assignee, say) holds at least that role in the project."""
    membership = db.session.get(Membership, (project_id, user_id))
    return membership is not None and role_at_least(membership.role, at_least)


_NEEDS = {
    MEMBER: "Viewers can only read this project",
    OWNER: "Only the project's owners can do this",
}


# --- projects ------------------------------------------------------------------------------------


def create(user: User, name: str, tracking_prefix: str | None = None) -> ProjectAccess:
    if tracking_prefix is not None and _prefix_taken(tracking_prefix):
        raise _prefix_conflict(tracking_prefix)
    base = tracking_prefix or derive_tracking_prefix(name)
    for _ in range(_CREATE_ATTEMPTS):
        project = Project(
            id=new_id(),
            name=name,
            tracking_prefix=tracking_prefix or _first_free_prefix(base),
            api_key=tokens.new_api_key(),
            webhook_secret=signing.new_webhook_secret(),
            allowed_origins=[],
        )
        project.memberships.append(Membership(user_id=user.id, role=OWNER))
        db.session.add(project)
        audit.record(audit.PROJECT_CREATED, user, ("project", project.id), project_id=project.id)
        try:
            db.session.commit()
            return ProjectAccess(project, OWNER)
        except IntegrityError:
            # A concurrent creation took the prefix between our check and our insert.
            db.session.rollback()
            if tracking_prefix is not None:
                raise _prefix_conflict(tracking_prefix) from None
    raise Conflict("Could not find a free tracking prefix; give one explicitly")


def list_for(user: User) -> list[ProjectAccess]:
    rows = db.session.execute(
        select(Project, Membership.role)
        .join(Membership, Membership.project_id == Project.id)
        .where(Membership.user_id == user.id)
        .order_by(func.lower(Project.name), Project.created_at, Project.id)
    )
    return [ProjectAccess(project, role) for project, role in rows]


def update(user: User, project_id: uuid.UUID, changes: dict) -> ProjectAccess:
    """Apply a PATCH: `settings` is merged, keys not sent keep their values."""
    project_access = access(user, project_id, at_least=OWNER)
    project = project_access.project
    new_values = {key: value for key, value in changes.items() if key != "settings"}
    new_values.update(changes.get("settings", {}))
    if "retention" in new_values:
        new_values["retention"] = {
            **project.retention_in_force,
            **new_values["retention"],
        }
    if "reporter_updates" in new_values:
        new_values["reporter_updates"] = {
            **project.reporter_updates_in_force,
            **new_values["reporter_updates"],
        }
    if "repro" in new_values:
        new_values["repro"] = {**project.repro_in_force, **new_values["repro"]}
    if "widget" in new_values:
        new_values["widget_settings"] = widget.merged(project, new_values.pop("widget"))
    prefix = new_values.get("tracking_prefix")
    if prefix is not None and prefix != project.tracking_prefix:
        if has_reports(project):
            raise Conflict("The tracking prefix cannot change once the project has reports")
        if _prefix_taken(prefix, except_project=project.id):
            raise _prefix_conflict(prefix)
    changed = []
    for field, value in new_values.items():
        if getattr(project, field) != value:
            setattr(project, field, value)
            changed.append(field)
    if changed:
        project.updated_at = utcnow()
        # The names of what changed, never the values: a webhook URL may hold a chat's token.
        audit.record(
            audit.PROJECT_UPDATED,
            user,
            ("project", project.id),
            project_id=project.id,
            fields=sorted(camelcase(field) for field in changed),
        )
        try:
            db.session.commit()
        except IntegrityError:
            db.session.rollback()
            raise _prefix_conflict(prefix) from None
    return project_access


def has_reports(project: Project) -> bool:
    return (
        db.session.scalar(select(Report.id).where(Report.project_id == project.id).limit(1))
        is not None
    )


def delete(user: User, project_id: uuid.UUID) -> None:
    """The project goes with its members, reports, screenshots (rows, then files) and keys."""
    project = access(user, project_id, at_least=OWNER).project
    keys = screenshots.keys_of_project(project.id)
    audit.record(
        audit.PROJECT_DELETED,
        user,
        ("project", project.id),
        project_id=project.id,
        name=project.name,
    )
    screenshots.forget(keys)  # the rows, and the deletion of their objects, recorded here
    db.session.delete(project)
    db.session.commit()
    screenshots.remove_files(keys)


def rotate_api_key(user: User, project_id: uuid.UUID) -> ProjectAccess:
    project_access = access(user, project_id, at_least=OWNER)
    project_access.project.api_key = tokens.new_api_key()
    project_access.project.updated_at = utcnow()
    audit.record(audit.API_KEY_ROTATED, user, ("project", project_id), project_id=project_id)
    db.session.commit()
    return project_access


def rotate_webhook_secret(user: User, project_id: uuid.UUID) -> ProjectAccess:
    project_access = access(user, project_id, at_least=OWNER)
    project_access.project.webhook_secret = signing.new_webhook_secret()
    project_access.project.updated_at = utcnow()
    audit.record(audit.WEBHOOK_SECRET_ROTATED, user, ("project", project_id), project_id=project_id)
    db.session.commit()
    return project_access


# --- members -------------------------------------------------------------------------------------


def list_members(user: User, project_id: uuid.UUID) -> list[Membership]:
    access(user, project_id)
    return list(
        db.session.scalars(
            select(Membership)
            .join(Membership.user)
            .where(Membership.project_id == project_id)
            # Owners first, then members, then viewers, each in the order they joined.
            .order_by(
                case({OWNER: 0, MEMBER: 1}, value=Membership.role, else_=2),
                Membership.added_at,
                User.email,
            )
        )
    )


def change_role(user: User, project_id: uuid.UUID, member_id: uuid.UUID, role: str) -> Membership:
    """An owner sets a member's role; the last owner cannot be demoted."""
    access(user, project_id, at_least=OWNER)
    membership, other_owners = _membership_and_other_owners(project_id, member_id)
    if membership.role == OWNER and role != OWNER and not other_owners:
        raise Conflict(LAST_OWNER)
    if membership.role != role:
        audit.record(
            audit.MEMBER_ROLE_CHANGED,
            user,
            ("user", member_id),
            project_id=project_id,
            **{"from": membership.role, "to": role},
        )
    membership.role = role
    db.session.commit()
    return membership


def remove_member(user: User, project_id: uuid.UUID, member_id: uuid.UUID) -> None:
    """An owner removes anyone; anyone may leave. The last owner can do neither."""
    access(user, project_id, at_least=VIEWER if member_id == user.id else OWNER)
    membership, other_owners = _membership_and_other_owners(project_id, member_id)
    if membership.role == OWNER and not other_owners:
        raise Conflict(LAST_OWNER)
    action = audit.MEMBER_LEFT if member_id == user.id else audit.MEMBER_REMOVED
    audit.record(action, user, ("user", member_id), project_id=project_id, role=membership.role)
    db.session.delete(membership)
    db.session.commit()


LAST_OWNER = "A project needs an owner: make someone else an owner first"


def _membership_and_other_owners(
    project_id: uuid.UUID, member_id: uuid.UUID
) -> tuple[Membership, int]:
    """The membership and how many other owners the project has, read while the project's row
    is locked, so two owners demoting each other at once cannot leave it with none (PostgreSQL;
    SQLite's writes are serial already)."""
    db.session.execute(select(Project.id).where(Project.id == project_id).with_for_update())
    membership = db.session.get(Membership, (project_id, member_id), populate_existing=True)
    if membership is None:
        raise not_found("Member not found")
    other_owners = db.session.scalar(
        select(func.count())
        .select_from(Membership)
        .where(
            Membership.project_id == project_id,
            Membership.role == OWNER,
            Membership.user_id != member_id,
        )
    )
    return membership, other_owners
