"""SQLAlchemy models only: columns, relationships, indexes (and the search index no model
declares: svc.models.search_index). No commits, no HTTP."""

import types

from svc.models.activity import ActivityEntry, Comment
from svc.models.audit import AuditEntry
from svc.models.events import ReportEvent
from svc.models.exports import ExportJob
from svc.models.integrations import ExternalIssue, Integration, IntegrationCall, TrackerEvent
from svc.models.limits import RateLimitCounter
from svc.models.mail import OutgoingMail, ReporterMailCount
from svc.models.notifications import Notification
from svc.models.projects import (
    DEFAULT_REPORTER_UPDATES,
    DEFAULT_REPRO,
    DEFAULT_RETENTION,
    MAX_RETENTION_DAYS,
    MEMBER,
    OWNER,
    REPORTER_EVENTS,
    ROLES,
    VIEWER,
    Invitation,
    Membership,
    Project,
    ReporterOptOut,
    role_at_least,
)
from svc.models.reports import (
    CATEGORIES,
    DONE_STATUSES,
    SEVERITIES,
    SEVERITY_RANK,
    STATUSES,
    IdempotencyKey,
    ObjectDeletion,
    Report,
    ReportDetail,
    ReportDuplicate,
    ReportSignature,
    Screenshot,
    failed_request,
    tracking_id_of,
)
from svc.models.reproductions import Reproduction
from svc.models.scheduler import InstanceMarker, SchedulerLease
from svc.models.stats import ReportDay, ReportHours, ReportTally
from svc.models.users import (
    AuthSession,
    PasswordReset,
    PasswordResetRequest,
    PendingSignIn,
    PersonalAccessToken,
    RecoveryCode,
    SecondFactor,
    User,
)
from svc.models.webhooks import WebhookDelivery

# Tables and indexes in the database that no model declares: APScheduler creates and owns its job
# store; the search indexes (FTS5 tables; PostgreSQL's generated search column and its pg_trgm
# index) are written by hand in migrations 7c1e4a9d2b35, b4f81d2c6e07 and e2b7c4a1f9d3, as there
# is no portable way to declare them. See svc.services.reporting.search.
JOBSTORE_TABLE = "apscheduler_jobs"
SEARCH_TABLES = frozenset(
    {
        "report_search_rows",
        "reports_fts",
        "reports_fts_config",
        "reports_fts_data",
        "reports_fts_docsize",
        "reports_fts_idx",
    }
)
SEARCH_INDEXES = frozenset({"ix_reports_search_text_trgm"})
SEARCH_COLUMNS = frozenset({"search_text"})


def declared_by_models(obj, name, type_, reflected, compare_to) -> bool:
    """Alembic's include_object: whether autogenerate (and the models-vs-migrations test) should
    compare this object with the models."""
    if type_ == "table":
        return name != JOBSTORE_TABLE and name not in SEARCH_TABLES
    if type_ == "column":
        return name not in SEARCH_COLUMNS
    return not (type_ == "index" and name in SEARCH_INDEXES)


# The package's interface is what it imports above: a new model needs its import, not a second
# listing (pyproject.toml lets ruff see these imports as re-exports).
__all__ = sorted(
    name
    for name, value in globals().items()
    if not name.startswith("_") and not isinstance(value, types.ModuleType)
)
