"""SQLAlchemy models only: columns, relationships, indexes. No commits, no HTTP."""

from svc.models.projects import MEMBER, OWNER, Membership, Project
from svc.models.users import AuthSession, PersonalAccessToken, User

__all__ = ["MEMBER", "OWNER", "AuthSession", "Membership", "PersonalAccessToken", "Project",
           "User"]
