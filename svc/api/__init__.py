"""One blueprint per resource. Views parse with a schema, call a service, dump with a schema."""

from flask import Flask

from svc.api import (
    admin,
    auth,
    comments,
    deliveries,
    invitations,
    meta,
    notifications,
    projects,
    reports,
    stats,
    tokens,
    uploads,
    widget,
)
from svc.api.cors import add_cors_headers

BLUEPRINTS = (
    meta.bp,
    auth.bp,
    tokens.bp,
    widget.bp,
    projects.bp,
    invitations.bp,
    admin.bp,
    notifications.bp,
    deliveries.bp,
    reports.bp,
    comments.bp,
    stats.bp,
    uploads.bp,
)


def register_blueprints(app: Flask) -> None:
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)
    app.after_request(add_cors_headers)
