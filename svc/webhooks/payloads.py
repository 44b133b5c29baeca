"""What a delivery sends: the JSON event of contract section 8, or a chat message made from it."""

import json
import uuid

from svc.schemas.base import iso_timestamp
from svc.webhooks.formats import DISCORD, SLACK

CREATED = "report.created"
UPDATED = "report.updated"
_CHAT_TITLE_LIMIT = 150


def _plain(value):
    return str(value) if isinstance(value, uuid.UUID) else value


def event_payload(event: str, report, at, changes: dict | None = None) -> str:
    """The serialised body of a json-format delivery; its bytes are what is signed and sent."""
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
        data["changes"] = {
            field: {"from": _plain(change["from"]), "to": _plain(change["to"])}
            for field, change in (changes or {}).items()
        }
    return json.dumps(
        {"event": event, "timestamp": iso_timestamp(at), "data": data}, separators=(",", ":")
    )


def chat_line(payload: dict, public_url: str | None) -> str:
    """One line for a team channel: tracking id, severity, category, title; for updates what
    changed; a link when the public address is configured."""
    data = payload["data"]
    title = data["title"]
    if len(title) > _CHAT_TITLE_LIMIT:
        title = title[: _CHAT_TITLE_LIMIT - 1] + "…"
    if payload["event"] == CREATED:
        line = f"New report {data['trackingId']} [{data['severity']}, {data['category']}]: {title}"
    else:
        changed = ", ".join(
            f"{field} {change['from']} → {change['to']}"
            for field, change in data.get("changes", {}).items()
        )
        line = f"Updated {data['trackingId']} [{data['severity']}, {data['category']}]: {title}" + (
            f" ({changed})" if changed else ""
        )
    if public_url:
        line += f" {public_url.rstrip('/')}/reports/{data['trackingId']}"
    return line


def body_for(payload_json: str, webhook_format: str, public_url: str | None) -> bytes:
    """The bytes to POST for a delivery in the given format."""
    if webhook_format == SLACK:
        return json.dumps({"text": chat_line(json.loads(payload_json), public_url)}).encode()
    if webhook_format == DISCORD:
        return json.dumps({"content": chat_line(json.loads(payload_json), public_url)}).encode()
    return payload_json.encode()
