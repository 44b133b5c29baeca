"""CORS for the widget's endpoints only (docs/api.md §10 and §7.3): report creation,
screenshot upload and the widget's configuration, their preflights, and their error responses.
No other endpoint sends CORS headers."""

from collections.abc import Callable

from flask import Flask, current_app, g, request

from svc.auth import api_keys

ALLOW_HEADERS = "Content-Type, X-API-Key, Idempotency-Key"
EXPOSE_HEADERS = "Location, Retry-After"
PREFLIGHT_MAX_AGE = "600"


def widget_cors(view: Callable) -> Callable:
    """Mark a view as called by the widget from other origins."""
    view.widget_cors = True
    return view


def _widget_rules(app: Flask) -> dict[str, str]:
    """Each widget path with the methods a preflight may allow there: those of its widget
    views only (GET /api/v1/reports shares the path of POST, but not its CORS)."""
    if "svc.widget_rules" not in app.extensions:
        methods: dict[str, set[str]] = {}
        for rule in app.url_map.iter_rules():
            if getattr(app.view_functions[rule.endpoint], "widget_cors", False):
                methods.setdefault(rule.rule, set()).update(rule.methods - {"HEAD", "OPTIONS"})
        app.extensions["svc.widget_rules"] = {
            path: ", ".join([*sorted(allowed), "OPTIONS"]) for path, allowed in methods.items()
        }
    return app.extensions["svc.widget_rules"]


def _allow_origin() -> str:
    """`*`, or the request's own origin when its project lists allowed origins and it is one."""
    project = g.get("project")
    origin = request.headers.get("Origin")
    listed = project is not None and project.allowed_origins and origin
    return origin if listed and api_keys.origin_allowed(project, origin) else "*"


def add_cors_headers(response):
    rule = request.url_rule
    allowed_methods = None if rule is None else _widget_rules(current_app).get(rule.rule)
    if allowed_methods is None:
        return response
    view = current_app.view_functions.get(request.endpoint)
    preflight = request.method == "OPTIONS"
    if not preflight and not getattr(view, "widget_cors", False):
        return response  # e.g. GET /api/v1/reports shares the path of POST, but not its CORS
    headers = response.headers
    headers["Access-Control-Allow-Origin"] = "*" if preflight else _allow_origin()
    if headers["Access-Control-Allow-Origin"] != "*":
        headers.add("Vary", "Origin")
    headers["Access-Control-Expose-Headers"] = EXPOSE_HEADERS
    if preflight:
        headers["Access-Control-Allow-Methods"] = allowed_methods
        headers["Access-Control-Allow-Headers"] = ALLOW_HEADERS
        headers["Access-Control-Max-Age"] = PREFLIGHT_MAX_AGE
    return response
