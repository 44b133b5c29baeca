"""Issue trackers (docs/api.md §15, docs/integrations.md): one module per kind behind one
interface (svc.integrations.base.Tracker), a body renderer per markup. The calls go through
the webhooks' outbound guard; the outbox that drives them is svc.services.trackers.tracker_calls."""

from svc.integrations import github, gitlab, jira, linear
from svc.integrations.base import Tracker

TRACKERS: dict[str, Tracker] = {
    "github": github,
    "gitlab": gitlab,
    "jira": jira,
    "linear": linear,
}
