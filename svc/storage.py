"""Screenshots on local disk: save (streamed, sniffed), locate, delete.

A file is written under a temporary name and renamed into place only once it is complete and
known to be an image, so a crash, a full disk or a rejected upload never leaves a half-written
file where a key points.
"""

import errno
import logging
import os
import re
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from svc.errors import StorageUnavailable, TooLarge, UnsupportedMedia, size_in_words

log = logging.getLogger(__name__)

CHUNK_BYTES = 64 * 1024
# (content type, file extension) by the bytes a file starts with.
_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png", "png"),
    (b"\xff\xd8\xff", "image/jpeg", "jpg"),
    (b"GIF87a", "image/gif", "gif"),
    (b"GIF89a", "image/gif", "gif"),
)
KEY_PATTERN = re.compile(r"^[A-Za-z0-9_-]{32}\.(png|jpg|gif|webp)$")
_UNAVAILABLE_ERRNOS = {
    errno.ENOSPC,
    errno.EROFS,
    errno.EDQUOT,
    errno.EACCES,
    errno.EPERM,
    errno.EIO,
}


@dataclass(frozen=True)
class StoredImage:
    key: str
    content_type: str
    size: int


def sniff_image(head: bytes) -> tuple[str, str] | None:
    """(content type, extension) of a PNG, JPEG, GIF or WebP file from its first bytes."""
    for signature, content_type, extension in _SIGNATURES:
        if head.startswith(signature):
            return content_type, extension
    if len(head) >= 12 and head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp", "webp"
    return None


def is_key(key: str) -> bool:
    """Whether `key` is of the form the service gives an upload's file."""
    return bool(KEY_PATTERN.fullmatch(key))


def path_for(upload_dir: str, key: str) -> Path | None:
    """Where the file of `key` lives; None for anything that is not a key we make."""
    if not is_key(key):
        return None
    return Path(upload_dir) / key[:2] / key


def storage_unavailable() -> StorageUnavailable:
    return StorageUnavailable(
        "Service unavailable: the upload storage is full or not writable; try again shortly"
    )


def save_image(stream: BinaryIO, upload_dir: str, max_bytes: int) -> StoredImage:
    """Copy an uploaded file to disk: UnsupportedMedia unless it is an image, TooLarge past
    `max_bytes`, StorageUnavailable when the disk cannot take it."""
    incoming = Path(upload_dir) / ".incoming"
    temporary = None
    try:
        incoming.mkdir(parents=True, exist_ok=True)
        head = stream.read(CHUNK_BYTES)
        kind = sniff_image(head)
        if kind is None:
            raise UnsupportedMedia("Only PNG, JPEG, WebP and GIF images are accepted")
        content_type, extension = kind
        fd, temporary = tempfile.mkstemp(dir=incoming)
        size = 0
        with os.fdopen(fd, "wb") as target:
            chunk = head
            while chunk:
                size += len(chunk)
                if size > max_bytes:
                    raise TooLarge(f"Screenshot too large: the limit is {size_in_words(max_bytes)}")
                target.write(chunk)
                chunk = stream.read(CHUNK_BYTES)
            target.flush()
            os.fsync(target.fileno())
        key = f"{secrets.token_urlsafe(24)}.{extension}"
        final = path_for(upload_dir, key)
        final.parent.mkdir(exist_ok=True)
        os.replace(temporary, final)
        temporary = None
        return StoredImage(key=key, content_type=content_type, size=size)
    except OSError as exc:
        if exc.errno in _UNAVAILABLE_ERRNOS:
            raise storage_unavailable() from exc
        raise
    finally:
        if temporary is not None:
            _remove(Path(temporary))


def delete_images(upload_dir: str, keys) -> None:
    """Remove the files of `keys`; a file already gone is not an error."""
    for key in keys:
        path = path_for(upload_dir, key)
        if path is not None:
            _remove(path)


def _remove(path: Path) -> None:
    # Called after the database has let go of the file: failing here must not fail the request.
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError:
        log.warning("could not remove %s", path, exc_info=True)
