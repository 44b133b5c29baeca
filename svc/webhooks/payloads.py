"""What a delivery sends: the JSON event of docs/api.md §12, or a chat message made from it."""

import json
import re
import uuid
from collections.abc import Callable

from svc.config import report_path
from svc.webhooks.formats import DISCORD, SLACK
from svc.wire import iso_timestamp, one_line

CREATED = "report.created"
UPDATED = "report.updated"
COMMENTED = "report.commented"
REPRODUCED = "report.reproduced"
# Titles and changed values are cut in chat lines: a changed description can hold 20,000
# characters, and Discord refuses a message of more than 2,000.
_CHAT_TEXT_LIMIT = 150


def _plain(value):
    return str(value) if isinstance(value, uuid.UUID) else value


def event_payload(
    event: str, report, at, changes: dict | None = None, comment=None, reproduction=None
) -> str:
    """The serialised body of a json-format delivery; its bytes are what is signed and sent.
    `report.commented` carries the comment, `report.reproduced` the run (docs/api.md §12)."""
    data = {
        "id": str(report.id),
        "projectId": str(report.project_id),
        "trackingId": report.tracking_id,
        "title": report.title,
        "description": report.description,
        "severity": report.severity,
        "category": report.category,
        "status": report.status,
        "reporterIdentifier": report.reporter_identifier,
        "createdAt": iso_timestamp(report.created_at),
        "updatedAt": iso_timestamp(report.updated_at),
    }
    if event == UPDATED:
        data["assigneeId"] = _plain(report.assignee_id)
        merged_into = report.duplicate_of  # docs/api.md §8.11
        data["duplicateOf"] = merged_into and {
            "id": str(merged_into["id"]),
            "trackingId": merged_into["tracking_id"],
        }
        data["changes"] = {
            field: {"from": _plain(change["from"]), "to": _plain(change["to"])}
            for field, change in (changes or {}).items()
        }
    if event == COMMENTED:
        author = comment.author
        data["comment"] = {
            "id": str(comment.id),
            "author": {"id": str(author.id), "name": author.name} if author else None,
            "body": comment.body,
        }
    if event == REPRODUCED:
        asked = reproduction.requested_by
        data["reproduction"] = {
            "id": str(reproduction.id),
            "verdict": reproduction.verdict,
            "evidence": reproduction.evidence,
            "failedStep": reproduction.failed_step,
            "requestsBlocked": reproduction.requests_blocked,
            "durationMs": reproduction.duration_ms,
            "startedAt": iso_timestamp(reproduction.started_at),
            "finishedAt": iso_timestamp(reproduction.finished_at),
            "requestedBy": {"id": str(asked.id), "name": asked.name} if asked else None,
        }
    return json.dumps(
        {"event": event, "timestamp": iso_timestamp(at), "data": data}, separators=(",", ":")
    )


def chat_line(payload: dict, public_url: str | None, escape: Callable[[str], str]) -> str:
    """One line for a team channel: tracking id, severity, category, title; for updates what
    changed; a link when the public address is configured. What a reporter or a team member
    wrote goes through `escape`, so that it reads as text in the channel, never as markup."""
    data = payload["data"]
    title = escape(_one_line(data["title"]))
    if payload["event"] == CREATED:
        line = f"New report {data['trackingId']} [{data['severity']}, {data['category']}]: {title}"
    elif payload["event"] == COMMENTED:
        comment = data["comment"]
        author = escape(_one_line(comment["author"]["name"])) if comment["author"] else "someone"
        line = (
            f"{author} commented on {data['trackingId']} ({title}): "
            f"{escape(_one_line(comment['body']))}"
        )
    elif payload["event"] == REPRODUCED:
        said = data["reproduction"]["verdict"].replace("_", " ")
        line = f"Run on staging, {data['trackingId']} ({title}): {said}"
    else:
        changed = ", ".join(
            f"{field} {escape(_one_line(change['from']))} → {escape(_one_line(change['to']))}"
            for field, change in data.get("changes", {}).items()
        )
        line = f"Updated {data['trackingId']} [{data['severity']}, {data['category']}]: {title}" + (
            f" ({changed})" if changed else ""
        )
    if public_url:
        line += f" {public_url.rstrip('/')}{report_path(data['trackingId'])}"
    return line


def _one_line(value) -> str:
    return one_line(value, _CHAT_TEXT_LIMIT)


def slack_text(text: str) -> str:
    """Slack's own escaping: `<!channel>` and `<https://evil|https://good>` stay text."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_DISCORD_MARKUP = re.compile(r"([\\*_~`|<>\[\]()#@])")


def discord_text(text: str) -> str:
    """A backslash before every character Discord reads as markdown, a masked link or a
    mention: `[good](evil)`, `@everyone` and `**` stay text."""
    return _DISCORD_MARKUP.sub(r"\\\1", text)


def body_for(payload_json: str, webhook_format: str, public_url: str | None) -> bytes:
    """The bytes to POST for a delivery in the given format."""
    if webhook_format == SLACK:
        line = chat_line(json.loads(payload_json), public_url, str)
        return json.dumps({"text": slack_text(line)}).encode()
    if webhook_format == DISCORD:
        line = chat_line(json.loads(payload_json), public_url, discord_text)
        # No mention of anyone pings, whatever the text says.
        return json.dumps({"content": line, "allowed_mentions": {"parse": []}}).encode()
    return payload_json.encode()
