"""A project's webhook delivery log (every role) and redelivery (members and owners; contract
sections 8 and 12). The delivery itself: svc.webhooks.delivery."""

import uuid

from svc.models import MEMBER, User
from svc.services import projects
from svc.services.listing import Page, Shown, with_tracking_ids
from svc.webhooks import delivery


def page_for(user: User, project_id: uuid.UUID, page: int, page_size: int) -> Page:
    """The project's deliveries, newest first."""
    projects.access(user, project_id)
    items, total = delivery.page_for(project_id, page, page_size)
    return Page(items=with_tracking_ids(items), total=total, page=page, page_size=page_size)


def redeliver(user: User, project_id: uuid.UUID, delivery_id: uuid.UUID) -> Shown:
    """A new cycle of attempts for the same delivery id, due now (members and owners)."""
    projects.access(user, project_id, at_least=MEMBER)
    return with_tracking_ids([delivery.redeliver(project_id, delivery_id)])[0]
