"""Decorators that keep views thin: parse the request with a schema, dump the answer with one.

They also record what they do on the view (`body_schema`, `response_schema`, ...), which is how
`svc.openapi` describes every endpoint without a second source of truth. Apply them below the
credential decorator, so that the order of checks is 401, 403, then 415, 413, 400, 422.
"""

from collections.abc import Callable
from functools import wraps

from flask import current_app, request
from marshmallow import Schema

from svc import json_codec, rate_limits
from svc.auth.guard import current_user
from svc.errors import APIError
from svc.extensions import client_network
from svc.rate_limits import rate_limited  # noqa: F401  (the views take it from here)

JSON_MIMETYPE = "application/json"
# docs/api.md §1.1: deeper bodies are refused before anything reads them.
MAX_JSON_LEVELS = 64
TOO_DEEP = f"Request body nests deeper than {MAX_JSON_LEVELS} levels"


def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


def read_json_object(kind: type = dict) -> dict | list:
    """The request body as a JSON object (or, with kind=list, an array): 415, 413 or 400 when it
    cannot be one, or when it nests deeper than MAX_JSON_LEVELS."""
    if request.mimetype != JSON_MIMETYPE:
        raise APIError(415, "Request body must be JSON (Content-Type: application/json)")
    raw = request.get_data(cache=True)  # 413 past MAX_CONTENT_LENGTH
    try:
        payload = json_codec.loads(raw, parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError):
        raise APIError(400, "Request body is not valid JSON") from None
    except RecursionError:  # deeper than even the parser goes
        raise APIError(400, TOO_DEEP) from None
    if json_codec.nested_deeper_than(payload, MAX_JSON_LEVELS):
        raise APIError(400, TOO_DEEP)
    if not isinstance(payload, kind):
        raise APIError(400, f"Request body must be a JSON {'array' if kind is list else 'object'}")
    return payload


def body(schema: Schema) -> Callable:
    """Load the JSON body with `schema` and pass the result as the view's first argument; a
    `many` schema takes an array."""

    def decorator(view):
        @wraps(view)
        def wrapper(*args, **kwargs):
            payload = read_json_object(list if schema.many else dict)
            return view(schema.load(payload), *args, **kwargs)

        wrapper.body_schema = schema
        return wrapper

    return decorator


def query(schema: Schema) -> Callable:
    """Load the query string with `schema` and pass the result as the first argument."""

    def decorator(view):
        @wraps(view)
        def wrapper(*args, **kwargs):
            return view(schema.load(request.args.to_dict()), *args, **kwargs)

        wrapper.query_schema = schema
        return wrapper

    return decorator


def response(
    schema: Schema | None,
    status: int = 200,
    *,
    errors: tuple[int, ...] = (),
    also: tuple[int, ...] | dict[int, Schema] = (),
) -> Callable:
    """Dump what the view returns with `schema` (None: an empty 204-style answer).

    The view may also return (value, headers) or (value, headers, status), the status being one
    of `also`; `also` as {status: schema} dumps that status's answer with its own schema.
    `errors` names the statuses beyond those implied by the other decorators (e.g. 409) for the
    API description.
    """
    own_schemas = also if isinstance(also, dict) else {}

    def decorator(view):
        @wraps(view)
        def wrapper(*args, **kwargs):
            result = view(*args, **kwargs)
            headers, answer_status = {}, status
            if isinstance(result, tuple):
                result, headers, *rest = result
                answer_status = rest[0] if rest else status
            if schema is None:
                return current_app.response_class(status=answer_status, headers=headers)
            return own_schemas.get(answer_status, schema).dump(result), answer_status, headers

        wrapper.response_schema = schema
        wrapper.response_status = status
        wrapper.alternative_statuses = also
        wrapper.documented_errors = errors
        return wrapper

    return decorator


def api_key_and_address() -> str:
    """Rate-limit key of the widget endpoints: one abusive client cannot starve a project's other
    reporters, nor one project another. The key itself is hashed, never stored."""
    api_key = request.headers.get("X-API-Key", "")
    return f"{rate_limits.key_part(api_key)}|{client_network()}"


def signed_in_user() -> str:
    """Rate-limit key of what a signed-in user does, whichever address or session it comes
    from; the limit must then sit below the credential check."""
    return f"user|{current_user().id}"


def documents_role(role: str) -> Callable:
    """Record the least project role (docs/api.md §7) the endpoint needs. The service
    enforces it, as only it knows the project (a report's is known once the report is read);
    this is what the API description says and what the role tests, generated from the route
    table, hold the service to. Endpoints without it are open to every role."""

    def decorator(view):
        view.documented_role = role
        return view

    return decorator


def described(**openapi) -> Callable:
    """Extra OpenAPI fields for what the other decorators cannot tell, e.g. a multipart body
    (`requestBody=...`) or a binary answer (`responses=...`); merged into the operation."""

    def decorator(view):
        view.openapi_extra = openapi
        return view

    return decorator
