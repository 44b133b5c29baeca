"""Business rules as plain functions. They take what they need as arguments (never the request),
commit their own transactions, and raise `svc.errors.APIError` for rule violations."""

from flask import current_app


def setting(name: str):
    """A parsed SVC_* setting of the running app."""
    return current_app.config[name]
