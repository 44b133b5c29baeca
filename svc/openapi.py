"""The OpenAPI 3 description, built by apispec from the app's own routes and schemas.

Nothing is described twice: a view's decorators (`svc.api.decorators`, `svc.auth.guard`) record its
credentials, body, query and response schemas, and the error statuses follow from those:
credentials -> 401 (and 403 for CSRF on unsafe methods), a body -> 400/413/415/422, a query -> 422,
a path id -> 404, a rate limit -> 429.
"""

import re

from flask import Flask
from werkzeug.routing import Rule

from svc.schemas.base import ErrorOut

TITLE = "svc: bug-report collection service"
VERSION = "1.0.0"
_CONVERTER = re.compile(r"<(?:(?P<converter>[a-z]+):)?(?P<name>\w+)>")
_DOCUMENTED_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
_SECURITY_SCHEMES = {
    "session": {"type": "apiKey", "in": "cookie", "name": "svc_access_token"},
    "pat": {
        "type": "http",
        "scheme": "bearer",
        "description": "A personal access token, svc_pat_...",
    },
    "api_key": {
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
        "description": "A project's API key, svc_pub_...",
    },
    "pending_sign_in": {
        "type": "apiKey",
        "in": "cookie",
        "name": "svc_pending_sign_in",
        "description": "A password sign-in waiting for its second factor (docs/api.md §3.1)",
    },
}
_ERROR_TEXT = {
    400: "Malformed JSON body",
    401: "Missing, invalid, expired or revoked credential",
    403: "Forbidden (CSRF token missing or wrong on a cookie-authenticated write, or not allowed)",
    404: "No such resource for this caller",
    409: "Conflict with existing data",
    413: "Body too large",
    414: "Request line too long (gunicorn's limit, 4094 bytes)",
    415: "Unsupported content type",
    422: "Validation failed; `errors` maps field names to messages",
    429: "Rate limit hit; see Retry-After",
    431: "Request headers too large (gunicorn's limits)",
    502: "An issue tracker refused or could not be reached; `detail` has its words",
    503: (
        "Database or object store unavailable, or the project changed while a report was "
        "filed; see Retry-After"
    ),
}


def _openapi_path(rule: str) -> tuple[str, list[dict]]:
    parameters = []

    def replace(match: re.Match) -> str:
        schema = {"type": "string"}
        if match["converter"] == "uuid":
            schema["format"] = "uuid"
        parameters.append({"name": match["name"], "in": "path", "required": True, "schema": schema})
        return "{" + match["name"] + "}"

    return _CONVERTER.sub(replace, rule), parameters


def _error_statuses(view, method: str, has_path_parameters: bool) -> set[int]:
    # gunicorn refuses these before any view (svc.gunicorn_worker makes them JSON).
    statuses = {414, 431, *getattr(view, "documented_errors", ())}
    credentials = getattr(view, "accepted_credentials", ())
    if credentials:
        statuses.add(401)
    if (
        ("session" in credentials and method != "GET")
        or hasattr(view, "documented_role")
        or hasattr(view, "needs_admin")
    ):
        statuses.add(403)
    if hasattr(view, "body_schema"):
        statuses.update({400, 413, 415, 422})
    if hasattr(view, "query_schema"):
        statuses.add(422)
    if has_path_parameters:
        statuses.add(404)
    if getattr(view, "rate_limited", False):
        statuses.add(429)
    if credentials or hasattr(view, "body_schema"):
        statuses.add(503)
    return statuses


def _operation(view, method: str, parameters: list[dict]) -> dict:
    summary = (view.__doc__ or view.__name__).strip().splitlines()[0]
    status = getattr(view, "response_status", 200)
    schema = getattr(view, "response_schema", None)
    responses: dict = {}
    if schema is None and status != 204 and not hasattr(view, "response_status"):
        responses[str(status)] = {
            "description": "OK",
            "content": {"application/json": {"schema": {"type": "object"}}},
        }
    elif schema is None:
        responses[str(status)] = {"description": "No content"}
    else:
        also = getattr(view, "alternative_statuses", ())
        own_schemas = also if isinstance(also, dict) else {}
        for success in (status, *also):
            responses[str(success)] = {
                "description": "OK",
                "content": {"application/json": {"schema": own_schemas.get(success, schema)}},
            }
    for error in sorted(_error_statuses(view, method, bool(parameters))):
        responses[str(error)] = {
            "description": _ERROR_TEXT[error],
            "content": {"application/json": {"schema": "Error"}},
        }
    operation: dict = {
        "summary": summary,
        "operationId": f"{view.__name__}",
        "responses": responses,
    }
    if parameters:
        operation["parameters"] = parameters
    if hasattr(view, "query_schema"):
        operation.setdefault("parameters", []).append({"in": "query", "schema": view.query_schema})
    if hasattr(view, "body_schema"):
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": view.body_schema}},
        }
    credentials = getattr(view, "accepted_credentials", ())
    # "public" among others: credentials are optional, which OpenAPI writes as {}.
    operation["security"] = [{name: []} if name != "public" else {} for name in credentials]
    extra = getattr(view, "openapi_extra", {})
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(operation.get(key), dict):
            operation[key] = {**operation[key], **value}
        else:
            operation[key] = value
    return operation


def is_api_rule(rule: Rule) -> bool:
    """Every route but the browser's pages: the dashboard's and the reporter's HTML pages, the
    static assets, and single sign-on's trip to the provider and back (redirects and HTML,
    docs/api.md §3.2)."""
    browsers = ("dashboard.", "reporter_pages.", "sso.")
    return rule.endpoint != "static" and not rule.endpoint.startswith(browsers)


def build_description(app: Flask) -> dict:
    # Imported here: built once, at the first request for it, and apispec would otherwise sit
    # in every process (docs/performance.md, "Memory").
    from apispec import APISpec
    from apispec.ext.marshmallow import MarshmallowPlugin

    spec = APISpec(
        title=TITLE, version=VERSION, openapi_version="3.0.3", plugins=[MarshmallowPlugin()]
    )
    spec.components.schema("Error", schema=ErrorOut)
    for name, scheme in _SECURITY_SCHEMES.items():
        spec.components.security_scheme(name, scheme)
    paths: dict[str, dict] = {}
    for rule in sorted(app.url_map.iter_rules(), key=lambda r: r.rule):
        if not is_api_rule(rule):
            continue
        view = app.view_functions[rule.endpoint]
        path, parameters = _openapi_path(rule.rule)
        for method in _DOCUMENTED_METHODS:
            if method in rule.methods:
                paths.setdefault(path, {})[method.lower()] = _operation(view, method, parameters)
    for path, operations in paths.items():
        spec.path(path=path, operations=operations)
    return spec.to_dict()


def api_description(app: Flask) -> dict:
    """Built once per app: routes do not change after start-up."""
    if "svc.openapi" not in app.extensions:
        app.extensions["svc.openapi"] = build_description(app)
    return app.extensions["svc.openapi"]
