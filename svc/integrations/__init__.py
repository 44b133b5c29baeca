"""Issue trackers (docs/api.md §15, docs/integrations.md): one module per kind behind one
interface (create, set_state, check, verify, delivery_id, read_event), a body renderer per
markup. The calls go through the webhooks' outbound guard; the outbox that drives them is
svc.services.integrations'."""

from types import ModuleType

from svc.integrations import github, gitlab, jira, linear

TRACKERS: dict[str, ModuleType] = {
    "github": github,
    "gitlab": gitlab,
    "jira": jira,
    "linear": linear,
}
