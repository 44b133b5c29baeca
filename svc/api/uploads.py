"""Screenshot and replay upload (the widget) and serving (the team): docs/api.md §9 and §18."""

from flask import Blueprint, Response, current_app, request
from werkzeug.exceptions import RequestEntityTooLarge

from svc.api.cors import widget_cors
from svc.api.decorators import api_key_and_address, described, rate_limited, response
from svc.api.downloads import stored
from svc.auth.guard import api_key_required, current_project, current_user, login_required
from svc.errors import APIError, TooLarge, field_error, size_in_words
from svc.schemas.reports import ScreenshotOut
from svc.services.reporting import replays, screenshots

bp = Blueprint("uploads", __name__, url_prefix="/api/v1")

# Room for the multipart envelope around a file of the maximum size.
MULTIPART_OVERHEAD = 64 * 1024
SCREENSHOT_CACHE_SECONDS = 3600
IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")
_BINARY = {"schema": {"type": "string", "format": "binary"}}


@bp.post("/upload/screenshot")
@widget_cors
@rate_limited("SVC_RATE_LIMIT_INGEST", key_func=api_key_and_address)
@api_key_required
@response(ScreenshotOut(), 201, errors=(413, 415, 422, 503))
@described(
    requestBody={
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {"file": {"type": "string", "format": "binary"}},
                }
            }
        },
    }
)
def upload_screenshot():
    """Upload a PNG, JPEG, WebP or GIF (multipart field `file`); pass the key as screenshot_url."""
    if request.mimetype != "multipart/form-data":
        raise APIError(415, "Upload the image as multipart/form-data in a field named file")
    limit = current_app.config["SVC_MAX_SCREENSHOT_BYTES"]
    request.max_content_length = limit + MULTIPART_OVERHEAD
    try:
        upload = request.files.get("file")
    except RequestEntityTooLarge:
        raise TooLarge(f"Screenshot too large: the limit is {size_in_words(limit)}") from None
    if upload is None:
        raise field_error("file", "Missing data for required field.")
    return screenshots.upload(current_project(), upload.stream)


@bp.get("/screenshots/<key>")
@login_required
@described(
    responses={
        "200": {"description": "The image", "content": {kind: _BINARY for kind in IMAGE_TYPES}},
        "302": {"description": "SVC_S3_PRESIGNED_DOWNLOADS: the image's URL, valid for 60 s"},
    }
)
def get_screenshot(key: str):
    """A screenshot of one of the caller's projects, with its real content type (or a 302 to
    a presigned URL, with SVC_S3_PRESIGNED_DOWNLOADS)."""
    found = screenshots.download_for(current_user(), key)
    answer = stored(found, max_age=SCREENSHOT_CACHE_SECONDS)
    answer.headers["Content-Security-Policy"] = "default-src 'none'; sandbox"
    return answer


@bp.post("/upload/replay")
@widget_cors
@rate_limited("SVC_RATE_LIMIT_INGEST", key_func=api_key_and_address)
@api_key_required
@response(ScreenshotOut(), 201, errors=(413, 422, 503))
@described(
    requestBody={
        "required": True,
        "content": {"application/gzip": {"schema": {"type": "string", "format": "binary"}}},
    }
)
def upload_replay():
    """Upload a replay: a gzipped JSON array of rrweb events; pass the key as replay_key."""
    request.max_content_length = replays.MAX_INFLATED_BYTES
    return replays.upload(current_project(), request.get_data(cache=False))


@bp.get("/replays/<key>")
@login_required
@described(
    responses={
        "200": {
            "description": "The replay's rrweb events, a JSON array, sent gzip-encoded",
            "content": {"application/json": {"schema": {"type": "array", "items": {}}}},
        }
    }
)
def get_replay(key: str):
    """A replay of one of the caller's projects (Content-Encoding: gzip)."""
    answer = Response(replays.read_for(current_user(), key), mimetype="application/json")
    answer.headers["Content-Encoding"] = "gzip"
    answer.headers["Cache-Control"] = "private, max-age=3600"
    answer.headers["Content-Security-Policy"] = "default-src 'none'; sandbox"
    return answer
