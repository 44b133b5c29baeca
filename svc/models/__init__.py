"""SQLAlchemy models only: columns, relationships, indexes. No commits, no HTTP."""

from svc.models.projects import MEMBER, OWNER, Membership, Project
from svc.models.reports import (
    CATEGORIES,
    SEVERITIES,
    SEVERITY_RANK,
    STATUSES,
    IdempotencyKey,
    Report,
    ReportDetail,
    Screenshot,
)
from svc.models.users import AuthSession, PersonalAccessToken, User
from svc.models.webhooks import WebhookDelivery

__all__ = [
    "CATEGORIES",
    "MEMBER",
    "OWNER",
    "SEVERITIES",
    "SEVERITY_RANK",
    "STATUSES",
    "AuthSession",
    "IdempotencyKey",
    "Membership",
    "PersonalAccessToken",
    "Project",
    "Report",
    "ReportDetail",
    "Screenshot",
    "User",
    "WebhookDelivery",
]
