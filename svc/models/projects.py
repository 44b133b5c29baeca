import uuid
from datetime import datetime

from sqlalchemy import JSON, ForeignKey, String, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from svc.extensions import db
from svc.models.base import UTCDateTime, new_id, same_as_created, utcnow
from svc.models.users import User

# The widget's settings: where its button may sit, and what a project has until its owner
# changes a setting (svc.services.widget.settings_in_force overlays the changes).
WIDGET_POSITIONS = ("bottom-right", "bottom-left", "top-right", "top-left")
WIDGET_DEFAULTS = {
    "primary_color": "#2563eb",
    "button_text": "Report a bug",
    "modal_title": "Report a bug",
    "logo_url": None,
    "position": "bottom-right",
    "enable_screenshot": True,
    "enable_session_recording": True,
    "show_watermark": False,
    "capture_console": True,
    "capture_network": True,
    "capture_actions": True,
    # Headers and bodies of requests (docs/repro-kit.md): off until an owner turns them on.
    "capture_network_details": False,
    # A DOM replay of the last seconds before a report (docs/replay.md): off until turned on.
    "enable_replay": False,
    "replay_seconds": 60,
    # The replay masks every text of the page but [data-svc-unmask]'s (docs/replay.md).
    "replay_mask_all_text": True,
    # The reporters' language (docs/widget.md, "Languages"): each reporter's own, or one tag
    # for every reporter of the project.
    "locale": "auto",
    # The attribute a page's test ids are in (docs/repro-kit.md): the widget records it, the
    # generated test finds elements by it (Playwright's testIdAttribute).
    "test_id_attribute": "data-testid",
}

OWNER = "owner"
MEMBER = "member"
VIEWER = "viewer"
# Least to most: each role may do everything the ones before it may (docs/api.md §7).
ROLES = (VIEWER, MEMBER, OWNER)


def role_at_least(role: str, least: str) -> bool:
    return ROLES.index(role) >= ROLES.index(least)


# A project keeps every report until its owner sets `days` (docs/api.md §7.4).
DEFAULT_RETENTION = {"days": None, "statuses": ["resolved", "closed"]}
# What reporters are mailed about (docs/reporter-updates.md): off until an owner turns it on.
REPORTER_EVENTS = ("received", "resolved", "public_comment")
DEFAULT_REPORTER_UPDATES = {"enabled": False, "events": list(REPORTER_EVENTS)}
MAX_RETENTION_DAYS = 3650
# Reproductions (docs/repro-kit.md, "The runner"): nothing runs until an owner names the staging
# origin.
DEFAULT_REPRO = {"origin": None, "auto": False, "timeout_seconds": 60}


class Project(db.Model):
    __tablename__ = "projects"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(100))
    # Unique in the instance, like a Jira project key, so a tracking id names one report.
    tracking_prefix: Mapped[str] = mapped_column(String(10), unique=True)
    # Kept in clear: it is publishable (it ships inside the widget) and it keys X-Svc-Signature.
    api_key: Mapped[str] = mapped_column(String(64), unique=True)
    webhook_secret: Mapped[str] = mapped_column(String(64))
    webhook_url: Mapped[str | None] = mapped_column(String(2048))
    # None: detected from the URL each time it is needed (see svc.webhooks.formats).
    webhook_format: Mapped[str | None] = mapped_column(String(16))
    allowed_origins: Mapped[list[str]] = mapped_column(JSON, default=list)
    # Only what the owner changed; svc.services.widget fills in the defaults when it is read, so
    # a default can improve without rewriting every project.
    widget_settings: Mapped[dict] = mapped_column(JSON, default=dict, server_default="{}")
    # {days, statuses} as the owner set it; None: the defaults (retention_in_force).
    retention: Mapped[dict | None] = mapped_column(JSON(none_as_null=True))
    # {enabled, events} as the owner set it; None: the defaults (reporter_updates_in_force).
    reporter_updates: Mapped[dict | None] = mapped_column(JSON(none_as_null=True))
    # {origin, auto, timeout_seconds} as the owner set it; None: the defaults (repro_in_force).
    repro: Mapped[dict | None] = mapped_column(JSON(none_as_null=True))
    # The counter behind tracking numbers: incremented in each report's own transaction, so the
    # numbers of a project are 1..n without holes, also under concurrent creation.
    last_report_number: Mapped[int] = mapped_column(default=0, server_default="0")
    # How many reports the project holds now, kept beside the counter in the same transactions,
    # so that an unfiltered list's total is a sum over projects, not a count over every report.
    report_count: Mapped[int] = mapped_column(default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=same_as_created)
    # One more at every UPDATE of the row but a report's numbering (which keeps it): the ingest
    # files against the project as its process last read it, and its numbering UPDATE checks
    # this (svc.auth.api_keys, svc.services.reporting.intake).
    version: Mapped[int] = mapped_column(
        default=0, server_default="0", onupdate=text("version + 1")
    )

    memberships: Mapped[list["Membership"]] = relationship(
        back_populates="project", cascade="all, delete-orphan", passive_deletes=True
    )

    # The settings in force: the owner's where set, else the defaults (kept out of the row, so
    # that a default can improve without rewriting every project). The one place that says so.
    @property
    def retention_in_force(self) -> dict:
        return self.retention or DEFAULT_RETENTION

    @property
    def reporter_updates_in_force(self) -> dict:
        """Whether reporters get mails and status pages at all (`enabled`), and which mails."""
        return self.reporter_updates or DEFAULT_REPORTER_UPDATES

    @property
    def repro_in_force(self) -> dict:
        """Where the report's steps are run (`origin`), whether every new report's are, how long."""
        return {**DEFAULT_REPRO, **(self.repro or {})}


class Membership(db.Model):
    """A user's place in a project: `owner`, `member` or `viewer` (ROLES)."""

    __tablename__ = "project_members"

    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    role: Mapped[str] = mapped_column(String(10))
    added_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # Which new reports of the project the person hears of by mail (models.notifications
    # NEW_REPORT_CHOICES); None: the default of their role, which follows a change of role.
    notify_new_reports: Mapped[str | None] = mapped_column(String(20))

    project: Mapped[Project] = relationship(back_populates="memberships")
    user: Mapped[User] = relationship(lazy="joined")


class Invitation(db.Model):
    """A pending invitation to a project (docs/api.md §7.1). Accepting or revoking deletes
    it, so a row is a pending invitation; only a hash of its token is stored, as for personal
    access tokens. One per address and project: inviting again means resending."""

    __tablename__ = "invitations"
    __table_args__ = (UniqueConstraint("project_id", "email"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    # Normalised like User.email (svc.services.identity.users.normalize_email).
    email: Mapped[str] = mapped_column(String(320))
    role: Mapped[str] = mapped_column(String(10))
    invited_by_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL")
    )
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)

    project: Mapped[Project] = relationship()
    invited_by: Mapped[User | None] = relationship(lazy="joined")


class ReporterOptOut(db.Model):
    """A reporter's address that gets no more mails about the project: their one-click
    unsubscribe (docs/reporter-updates.md)."""

    __tablename__ = "reporter_opt_outs"

    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    # Lower-cased, as the mails are addressed.
    email: Mapped[str] = mapped_column(String(320), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
