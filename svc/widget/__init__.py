"""The embeddable widget: one plain JavaScript file (no build step, no third-party code),
served at /widget.js for any site to load with one script tag (docs/widget.md)."""

import hashlib
import json
from functools import cache
from pathlib import Path

from flask import Blueprint, Response, request, send_file

from svc import i18n
from svc.errors import not_found

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
    return public(answer)


@cache
def _words(language: str) -> tuple[bytes, str]:
    body = json.dumps(i18n.widget_words(language), ensure_ascii=False, separators=(",", ":"))
    encoded = body.encode()
    return encoded, hashlib.sha256(encoded).hexdigest()[:32]


@bp.get("/widget-<locale>.json")
def words(locale: str):
    """The widget's words in the language that serves a BCP 47 tag (English for one svc does
    not speak), cached as the script is: the widget loads them for a reporter who is not
    reading English (docs/widget.md, "Languages")."""
    tag = i18n.usable(locale)
    if tag is None:
        raise not_found("Not a language tag")
    body, etag = _words(i18n.language_of(tag))
    answer = Response(body, mimetype="application/json")
    answer.set_etag(etag)
    return public(answer).make_conditional(request)


def public(answer: Response) -> Response:
    """Public and cacheable, for any origin: the widget (and its replay recorder, svc.replay)
    runs on the customer's pages."""
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
words.openapi_extra = {
    "responses": {
        "200": {
            "description": "The widget's messages in the language that serves the tag",
            "content": {"application/json": {"schema": {"type": "object"}}},
        },
        "304": {"description": "Not modified (If-None-Match matched the ETag)"},
        "404": {"description": "Not a language tag"},
    }
}
