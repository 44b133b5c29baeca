"""A project's webhook delivery log and redelivery, for its owner and members (contract
section 8). The delivery itself: svc.webhooks.delivery."""

import uuid

from svc.models import User, WebhookDelivery
from svc.services import projects
from svc.services.listing import Page
from svc.webhooks import delivery


def page_for(user: User, project_id: uuid.UUID, page: int, page_size: int) -> Page:
    """The project's deliveries, newest first."""
    projects.access(user, project_id)
    items, total = delivery.page_for(project_id, page, page_size)
    return Page(items=items, total=total, page=page, page_size=page_size)


def redeliver(user: User, project_id: uuid.UUID, delivery_id: uuid.UUID) -> WebhookDelivery:
    """A new cycle of attempts for the same delivery id, due now."""
    projects.access(user, project_id)
    return delivery.redeliver(project_id, delivery_id)
