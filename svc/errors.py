"""Every error the service answers is JSON `{"detail": ...}`; this module is the one place that
decides how. Services, storage and auth raise a `DomainError` (not found, conflict, invalid…),
whose class says its status; the API layer may raise `APIError` with a status of its own (or a
marshmallow `ValidationError`). The handlers registered here turn them, and everything
Flask/Werkzeug/SQLAlchemy raise, into a response.
"""

import logging
from typing import Any

from flask import Flask, g, has_request_context, jsonify, request
from limits.errors import StorageError
from marshmallow import ValidationError
from sqlalchemy.exc import OperationalError
from werkzeug.exceptions import HTTPException

from svc.extensions import db

log = logging.getLogger(__name__)

RETRY_AFTER_UNAVAILABLE = "5"

# Short, stable messages for the statuses Werkzeug raises itself.
_HTTP_DETAIL = {
    400: "Bad request",
    401: "Authentication required",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    413: "Request body too large",
    415: "Unsupported media type",
    429: "Too many requests",
}


class APIError(Exception):
    """An error with its HTTP status; `errors` (422 only) maps field names to messages."""

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        errors: dict[str, list[str]] | None = None,
        headers: dict[str, str] | None = None,
    ):
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.errors = errors
        self.headers = headers or {}


class DomainError(APIError):
    """What the services, storage and auth raise: the kind of failure, never a status. Which
    status each kind is, is decided here, by its class."""

    status_code: int = 400

    def __init__(self, detail: str, **kwargs):
        super().__init__(self.status_code, detail, **kwargs)


class BadRequest(DomainError):
    """A request the service cannot act on, e.g. a used or expired reset link."""

    status_code = 400


class Unauthorized(DomainError):
    status_code = 401


class AccountDeactivated(Unauthorized):
    """A deactivated account's password, sessions and tokens are all refused alike."""

    def __init__(self):
        super().__init__("This account is deactivated; ask an administrator of this svc")


class Forbidden(DomainError):
    status_code = 403


class NotFound(DomainError):
    status_code = 404


class Conflict(DomainError):
    status_code = 409


class TooLarge(DomainError):
    status_code = 413


class UnsupportedMedia(DomainError):
    status_code = 415


class Invalid(DomainError):
    """Input that passed its schema but breaks a rule of the service; `errors` by field."""

    status_code = 422

    def __init__(self, errors: dict[str, list[str]]):
        super().__init__("Validation failed", errors=errors)


class StorageUnavailable(DomainError):
    """The upload disk is full or read-only: the client is told to come back."""

    status_code = 503

    def __init__(self, detail: str):
        super().__init__(detail, headers={"Retry-After": "30"})


class ProjectChanged(DomainError):
    """The project a report was being filed for changed meanwhile (its settings, its key, or it
    is gone): nothing was stored. The ingest's guard checks the key afresh and files once more
    (svc.auth.guard); only a project changed twice within one request answers this."""

    status_code = 503

    def __init__(self):
        super().__init__(
            "The project changed while the report was filed; nothing was stored, send it again",
            headers={"Retry-After": "1"},
        )


class TrackerRefused(DomainError):
    """An issue tracker would not do what was asked (docs/api.md §15): its words, as a bad
    gateway, since the fault is upstream of svc."""

    status_code = 502


class TrackerCheckFailed(DomainError):
    """'Test connection' failed: the tracker's words, as a validation failure of the
    integration's settings."""

    status_code = 422


class TooManyGuesses(DomainError):
    """An account's second factor was guessed at too often: it waits (`Retry-After`)."""

    status_code = 429

    def __init__(self, detail: str, retry_after: int):
        super().__init__(detail, headers={"Retry-After": str(retry_after)})


class HoneypotHit(DomainError):
    """A report whose honeypot field is filled in (docs/api.md §8.1): nothing is stored."""

    def __init__(self):
        super().__init__("Rejected")


def unauthorized(detail: str = "Authentication required") -> Unauthorized:
    return Unauthorized(detail)


def not_found(detail: str = "Not found") -> NotFound:
    return NotFound(detail)


def field_error(field: str, message: str) -> Invalid:
    return Invalid({field: [message]})


def flatten_errors(messages: Any, prefix: str = "") -> dict[str, list[str]]:
    """marshmallow nests the errors of nested fields; the API keys them dotted (docs/api.md §1.1):
    settings.webhook_url."""
    if isinstance(messages, list):
        return {prefix or "_schema": [str(m) for m in messages]}
    flat: dict[str, list[str]] = {}
    for key, value in messages.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict):
            flat.update(flatten_errors(value, path))
        else:
            flat.setdefault(path, []).extend(str(m) for m in value)
    return flat


def size_in_words(size: int) -> str:
    """A byte limit as people read it, exact: '10 MiB (10485760 bytes)'."""
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit} ({size} bytes)"
    return f"{size} bytes"


def only_where_waiting_helps(response):
    """Retry-After on a 429 or a 503 alone, and a 503's the service's own. Flask-Limiter adds
    its window's to every answer of a limited endpoint (a 413 said "Retry-After: 50", an upload
    refused while the store was down 0 to 60 s); registered before the limiter, this runs
    after it."""
    if response.status_code not in (429, 503):
        response.headers.pop("Retry-After", None)
    elif "svc_retry_after" in g:
        response.headers["Retry-After"] = g.svc_retry_after
    return response


def error_response(
    status: int, detail: str, errors: dict | None = None, headers: dict[str, str] | None = None
):
    body: dict[str, Any] = {"detail": detail}
    if errors is not None:
        body["errors"] = errors
    response = jsonify(body)
    response.status_code = status
    response.headers.update(headers or {})
    if status in (429, 503) and "Retry-After" in response.headers and has_request_context():
        g.svc_retry_after = response.headers["Retry-After"]  # for only_where_waiting_helps
    return response


def register_error_handlers(app: Flask) -> None:
    @app.errorhandler(APIError)
    def handle_api_error(error: APIError):
        return error_response(error.status, error.detail, error.errors, error.headers)

    @app.errorhandler(ValidationError)
    def handle_validation_error(error: ValidationError):
        return error_response(422, "Validation failed", flatten_errors(error.messages))

    @app.errorhandler(HTTPException)
    def handle_http_exception(error: HTTPException):
        status = error.code or 500
        detail = _HTTP_DETAIL.get(status) or error.name
        if status == 429:
            detail = f"Too many requests: limit of {error.description} exceeded"
        if status == 413 and request.max_content_length:
            detail = (
                f"Request body too large: the limit is {size_in_words(request.max_content_length)}"
            )
        response = error_response(status, detail)
        if status == 405 and error.valid_methods:
            response.headers["Allow"] = ", ".join(error.valid_methods)
        return response

    @app.errorhandler(OperationalError)
    @app.errorhandler(StorageError)  # the rate limits' counters (svc.rate_limits), or Redis
    def handle_database_unavailable(error: OperationalError | StorageError):
        # Unreachable, read-only or full database: the transaction is rolled back, nothing stays
        # half-written, and the client is told to come back.
        cause = error.orig if isinstance(error, OperationalError) else error.storage_error
        log.error("database unavailable: %s", cause)
        db.session.rollback()
        return error_response(
            503,
            "Service unavailable: the database cannot be reached or written to; try again shortly",
            headers={"Retry-After": RETRY_AFTER_UNAVAILABLE},
        )

    @app.errorhandler(Exception)
    def handle_unexpected(error: Exception):
        log.exception("unhandled error")
        db.session.rollback()
        return error_response(500, "Internal server error")
