"""What a change to a report sets off, written once, as svc.services.reporting.fanout's EFFECTS is
for a new report. Every writer (a member's PATCH, a tracker's delivery, the reporter's status page)
calls `update` or `commented` in its own transaction, before its commit; what differs between
them is said by the `Source` it passes, never by a copy of these lines.

A status change: the fields, `updated_at`, the overview's counters, a report.updated webhook,
the activity, the linked issues' close or reopen, the reporter's mail (and its duplicates'
reporters'), the assignee's notification. A comment: the activity, a report.commented webhook,
the mentioned members' and the reporter's mails (a public one: its duplicates' reporters' too).
"""

import uuid
from dataclasses import dataclass

from svc.models import SEVERITY_RANK, Comment, Report, User
from svc.models.activity import CHANGED, COMMENTED, REOPENED, REPORTER
from svc.models.base import utcnow
from svc.services.reporters import reporter_mails
from svc.services.reporting import activity, stats
from svc.services.team import notifications
from svc.services.trackers import tracker_calls
from svc.webhooks import delivery, payloads
from svc.wire import camelcase


@dataclass(frozen=True)
class Source:
    """Who changed a report, and so what the change sets off."""

    # The member who made it; None for the reporter and for a tracker.
    user: User | None = None
    # How it came, for the activity: REPORTER, or the tracker's kind.
    via: str | None = None
    # The integration it came from: its issue already says so, and is not told back.
    integration_id: uuid.UUID | None = None

    @property
    def reporter(self) -> bool:
        """The reporter, on their status page: their "Still happening?" is an activity of its
        own kind that the assignee hears of (no member made it), and they get no mail of
        what they did themselves."""
        return self.via == REPORTER


def member(user: User) -> Source:
    return Source(user=user)


def tracker(integration) -> Source:
    return Source(via=integration.kind, integration_id=integration.id)


BY_REPORTER = Source(via=REPORTER)


def update(report: Report, changes: dict, source: Source, also: dict | None = None) -> dict:
    """Set the fields that differ ({snake_case field: value}) and set off what that does.
    What changed, as {"<camelCaseField>": {"from": old, "to": new}} (empty when nothing did,
    and then nothing is set off). `also`: changes the caller made itself, in that form (a
    report marked a duplicate: svc.services.grouping.duplicates), told with the rest."""
    before = stats.Counted.of(report)
    changed = dict(also or {})
    for field, value in changes.items():
        old = getattr(report, field)
        if old != value:
            changed[camelcase(field)] = {"from": old, "to": value}
            setattr(report, field, value)
    if not changed:
        return changed
    report.severity_rank = SEVERITY_RANK[report.severity]
    report.updated_at = utcnow()
    stats.recount(report, before)
    delivery.record(report.project, payloads.UPDATED, report, changed)
    kind = REOPENED if source.reporter else CHANGED
    activity.record(report, source.user, kind, changed, via=source.via)
    if "status" in changed:
        old = changed["status"]["from"]
        tracker_calls.status_changed(
            report, old, report.status, except_integration=source.integration_id
        )
        if source.reporter:
            notifications.report_reopened(report)
        elif "duplicateOf" not in changed:
            # A report merged into another or taken out of it: its reporter hears of the
            # primary's resolution instead, and its status page says it was merged.
            reporter_mails.status_changed(report, old, report.status)
    if "assigneeId" in changed:
        notifications.report_assigned(report, report.assignee_id, source.user)
    return changed


def commented(
    report: Report, comment: Comment, source: Source, mentioned: set[uuid.UUID] = frozenset()
) -> None:
    """A new comment's effects; `mentioned`: the members it names (a member's comment only)."""
    activity.record(report, source.user, COMMENTED, comment_id=comment.id, via=source.via)
    delivery.record(report.project, payloads.COMMENTED, report, comment=comment)
    if source.user is not None:
        notifications.report_mentioned(report, mentioned, source.user)
    if not source.reporter:
        reporter_mails.commented(report, comment)
