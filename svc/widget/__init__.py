"""The embeddable widget: one plain JavaScript file (no build step, no third-party code),
served at /widget.js for any site to load with one script tag (docs/widget.md)."""

import hashlib
from functools import cache
from pathlib import Path

from flask import Blueprint, send_file

bp = Blueprint("widget", __name__)

SCRIPT = Path(__file__).resolve().parent / "widget.js"
# The URL carries no version, so a browser keeps the script a day and then revalidates it with
# the ETag (a 304 costs a few bytes); a new release reaches every page within a day.
CACHE_CONTROL = "public, max-age=86400, stale-while-revalidate=604800"


@cache
def script_etag() -> str:
    return hashlib.sha256(SCRIPT.read_bytes()).hexdigest()[:32]


@bp.get("/widget.js")
def script():
    """The widget script, public and cacheable, for any origin."""
    answer = send_file(
        SCRIPT, mimetype="text/javascript", etag=script_etag(), conditional=True, max_age=None
    )
    answer.headers["Cache-Control"] = CACHE_CONTROL
    answer.headers["Access-Control-Allow-Origin"] = "*"
    # A host page that isolates itself (Cross-Origin-Embedder-Policy) may still load it.
    answer.headers["Cross-Origin-Resource-Policy"] = "cross-origin"
    return answer


# For the API description (svc.openapi), which reads what svc.api.decorators.described records.
script.openapi_extra = {
    "responses": {
        "200": {
            "description": "The widget",
            "content": {"text/javascript": {"schema": {"type": "string"}}},
        },
        "304": {"description": "Not modified (If-None-Match matched the ETag)"},
    }
}
