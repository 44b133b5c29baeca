"""CORS for the widget's endpoints only (contract section 9): report creation and screenshot
upload, their preflights, and their error responses. No other endpoint sends CORS headers."""

from collections.abc import Callable

from flask import Flask, current_app, g, request

ALLOW_HEADERS = "Content-Type, X-API-Key, Idempotency-Key"
EXPOSE_HEADERS = "Location, Retry-After"
PREFLIGHT_MAX_AGE = "600"


def widget_cors(view: Callable) -> Callable:
    """Mark a view as called by the widget from other origins."""
    view.widget_cors = True
    return view


def _widget_rules(app: Flask) -> frozenset[str]:
    if "svc.widget_rules" not in app.extensions:
        app.extensions["svc.widget_rules"] = frozenset(
            rule.rule
            for rule in app.url_map.iter_rules()
            if getattr(app.view_functions[rule.endpoint], "widget_cors", False)
        )
    return app.extensions["svc.widget_rules"]


def _allow_origin() -> str:
    """`*`, or the request's own origin when its project lists allowed origins and it is one."""
    project = g.get("project")
    origin = request.headers.get("Origin", "")
    if (
        project is not None
        and project.allowed_origins
        and origin.rstrip("/").lower() in project.allowed_origins
    ):
        return origin
    return "*"


def add_cors_headers(response):
    rule = request.url_rule
    if rule is None or rule.rule not in _widget_rules(current_app):
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
        headers["Access-Control-Allow-Methods"] = "POST, OPTIONS"
        headers["Access-Control-Allow-Headers"] = ALLOW_HEADERS
        headers["Access-Control-Max-Age"] = PREFLIGHT_MAX_AGE
    return response
