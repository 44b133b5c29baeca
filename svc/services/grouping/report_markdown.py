"""A report as Markdown (docs/api.md §8.10): for a chat, a tracker or an AI assistant. What a
tracker's issue says (svc.services.trackers.integrations.content_of: facts, console errors, failed
requests, the last actions, links), headed by the tracking id, title and status. Never more
than the report shows (its logs were redacted when it was filed); whatever the reporter wrote
is escaped (svc.integrations.render.markdown_text), so that it reads as text wherever the
Markdown is rendered (no link, image, mention or heading of theirs)."""

from dataclasses import replace

from svc.integrations import render
from svc.models import User
from svc.services.reporting import reports
from svc.services.trackers import integrations


def of_report(user: User, reference: str) -> tuple[str, str]:
    """(tracking id, the Markdown) of a report the user can see."""
    report = reports.get_for(user, reference)
    content = integrations.content_of(report)
    content = replace(content, facts=[("Status", report.status), *content.facts])
    heading = f"# {report.tracking_id}: {render.markdown_text(report.title, single_line=True)}"
    return report.tracking_id, f"{heading}\n\n{render.markdown(content)}"
