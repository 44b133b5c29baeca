"""Screenshot upload (the widget) and serving (the team): contract section 7."""

from flask import Blueprint, current_app, request, send_file

from svc.api.cors import widget_cors
from svc.api.decorators import api_key_and_address, described, rate_limited, response
from svc.auth.guard import api_key_required, current_caller, current_project, login_required
from svc.errors import APIError, field_error
from svc.schemas.reports import ScreenshotOut
from svc.services import screenshots

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
    request.max_content_length = current_app.config["SVC_MAX_SCREENSHOT_BYTES"] + MULTIPART_OVERHEAD
    upload = request.files.get("file")
    if upload is None:
        raise field_error("file", "Missing data for required field.")
    return screenshots.upload(current_project(), upload.stream)


@bp.get("/screenshots/<key>")
@login_required
@described(
    responses={
        "200": {"description": "The image", "content": {kind: _BINARY for kind in IMAGE_TYPES}}
    }
)
def get_screenshot(key: str):
    """A screenshot of one of the caller's projects, with its real content type."""
    path, content_type = screenshots.open_for(current_caller().user, key)
    answer = send_file(
        path, mimetype=content_type, conditional=True, max_age=SCREENSHOT_CACHE_SECONDS
    )
    answer.cache_control.private = True
    answer.cache_control.public = False
    answer.headers["Content-Security-Policy"] = "default-src 'none'; sandbox"
    return answer
