"""SQLAlchemy models only: columns, relationships, indexes. No commits, no HTTP."""

from svc.models.users import AuthSession, PersonalAccessToken, User

__all__ = ["AuthSession", "PersonalAccessToken", "User"]
