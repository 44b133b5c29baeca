"""Issue trackers (docs/integrations.md): a project's integrations, the issues its reports have
in them, the outbox of calls to make, and the tracker's deliveries received."""

import uuid
from datetime import datetime

from sqlalchemy import JSON, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from svc.extensions import db
from svc.models.base import UTCDateTime, new_id, same_as_created, utcnow

GITHUB = "github"
GITLAB = "gitlab"
JIRA = "jira"
LINEAR = "linear"
KINDS = (GITHUB, GITLAB, JIRA, LINEAR)

# What svc asks of a tracker in the background (IntegrationCall.action).
CREATE = "create"
CLOSE = "close"
REOPEN = "reopen"

# A linked issue's state, as svc last knew it.
OPEN = "open"
CLOSED = "closed"


class Integration(db.Model):
    """One tracker a project's reports go to: where, with which token (encrypted, by
    svc.secrets), which new reports get an issue of their own, and whether states are synced."""

    __tablename__ = "integrations"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    kind: Mapped[str] = mapped_column(String(16))
    name: Mapped[str] = mapped_column(String(100))
    config: Mapped[dict] = mapped_column(JSON)
    token_encrypted: Mapped[str] = mapped_column(Text)
    # Checks the tracker's calls to svc (its signature, or GitLab's token); shown once, and
    # encrypted as the token is: with it, anyone could sign a delivery.
    webhook_secret_encrypted: Mapped[str] = mapped_column(Text)
    # {"severities": [...], "categories": [...]}: empty lists match any; None: no auto-create.
    auto_create: Mapped[dict | None] = mapped_column(JSON(none_as_null=True))
    sync_status: Mapped[bool] = mapped_column(default=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_error: Mapped[str | None] = mapped_column(String(500))


class ExternalIssue(db.Model):
    """A report's issue in a tracker. `remote_id` is the tracker's stable id (it survives a
    Jira issue's move and a repository's rename); `key` and `url` are refreshed from events."""

    __tablename__ = "external_issues"
    __table_args__ = (
        UniqueConstraint("integration_id", "report_id"),
        Index("ix_external_issues_integration_remote", "integration_id", "remote_id"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    report_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("reports.id", ondelete="CASCADE"), index=True
    )
    integration_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("integrations.id", ondelete="CASCADE")
    )
    kind: Mapped[str] = mapped_column(String(16))
    remote_id: Mapped[str] = mapped_column(String(200))
    key: Mapped[str] = mapped_column(String(200))
    url: Mapped[str] = mapped_column(String(1000))
    # What a call about the issue addresses (GitHub's API URL of the issue, GitLab's
    # "<project id>/<iid>"); the stable id for Jira and Linear.
    address: Mapped[str] = mapped_column(String(1000))
    state: Mapped[str] = mapped_column(String(16), default=OPEN)
    # Why the last close or reopen did not reach the tracker; None once one did.
    last_error: Mapped[str | None] = mapped_column(String(500))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=same_as_created)


class IntegrationCall(db.Model):
    """The outbox of calls to a tracker (create an issue for a new report, close or reopen a
    linked one), written in the transaction of what called for it, and the record of its
    attempts, as svc.models.webhooks.WebhookDelivery is for webhooks."""

    __tablename__ = "integration_calls"
    __table_args__ = (
        Index("ix_integration_calls_due", "status", "next_attempt_at"),
        Index("ix_integration_calls_integration_created", "integration_id", "created_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    integration_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("integrations.id", ondelete="CASCADE")
    )
    # No foreign key: the log keeps the call of a report deleted since (which is not made).
    report_id: Mapped[uuid.UUID] = mapped_column()
    action: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16))
    attempts: Mapped[int] = mapped_column(default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_status_code: Mapped[int | None]
    last_error: Mapped[str | None] = mapped_column(String(500))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=same_as_created)


class TrackerEvent(db.Model):
    """A delivery a tracker made to svc, kept by its delivery id so that a repeated one is
    applied once; the integration's page lists the last ones."""

    __tablename__ = "tracker_events"
    __table_args__ = (
        UniqueConstraint("integration_id", "delivery_id"),
        UniqueConstraint(
            "integration_id", "body_sha256", name="uq_tracker_events_integration_body"
        ),
        Index("ix_tracker_events_integration_received", "integration_id", "received_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    integration_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("integrations.id", ondelete="CASCADE")
    )
    delivery_id: Mapped[str] = mapped_column(String(200))
    # A delivery's id is not signed: the same body sent again under a new id is applied once.
    body_sha256: Mapped[str | None] = mapped_column(String(64))
    received_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # What svc made of it, in words: "WS-12 resolved (PROJ-7 closed)", "ignored: ...".
    outcome: Mapped[str] = mapped_column(String(300))
