"""Every file the service keeps, in one object store (docs/storage.md): a folder on local disk or
an S3-compatible bucket, chosen by SVC_STORAGE_URL.

An upload is received into a spool file first (streamed, sniffed, its size checked) and handed
to the store only once it is complete and known to be an image; the store writes its key in one
step (a rename, an S3 PUT or completed multipart upload), so a crash, a full disk, an
unreachable store or a rejected upload never leaves a key pointing at half an object.
"""

import errno
import hashlib
import io
import logging
import os
import re
import secrets
import tempfile
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol
from urllib.parse import urlsplit

from flask import current_app

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
KEY_PATTERN = re.compile(r"^[A-Za-z0-9_-]{32}\.(png|jpg|gif|webp|json\.gz|zip|csv\.gz|ndjson\.gz)$")
# A replay (docs/replay.md): gzipped JSON, stored and served as it is; a reproduction's trace
# (docs/repro-kit.md) is Playwright's zip; an export job's file (docs/api.md §8.3.1) gzipped.
REPLAY_TYPE = "application/gzip"
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


@dataclass(frozen=True)
class S3Options:
    endpoint_url: str | None = None
    region: str = "us-east-1"
    addressing: str = "auto"
    presigned_downloads: bool = False

    @classmethod
    def from_settings(cls, config) -> "S3Options":
        """The SVC_S3_* settings of an app's config."""
        return cls(
            endpoint_url=config["SVC_S3_ENDPOINT_URL"],
            region=config["SVC_S3_REGION"],
            addressing=config["SVC_S3_ADDRESSING"],
            presigned_downloads=config["SVC_S3_PRESIGNED_DOWNLOADS"],
        )


class ObjectStore(Protocol):
    """What the service asks of a store. Keys are the service's own (`is_key`)."""

    kind: str  # "folder" or "s3"
    location: str  # the SVC_STORAGE_URL that names it
    spool_dir: Path  # where an upload is received before `put_file`
    # Whether the spool file itself becomes the object (a rename): then it must be on disk
    # (fsync) before its row is written; a store that copies it elsewhere needs no fsync.
    keeps_spool_file: bool

    def put_file(self, key: str, path: Path, content_type: str) -> None:
        """Store the complete file at `path` under `key` (the file is gone afterwards)."""

    def put_stream(self, key: str, stream: BinaryIO, content_type: str) -> None: ...

    def open(self, key: str) -> BinaryIO | None:
        """The object's bytes to read, or None when there is no such object."""

    def size_of(self, key: str) -> int | None: ...

    def local_path(self, key: str) -> Path | None:
        """The object's file when it is one on this host's disk (served with ranges)."""

    def download_url(self, key: str, content_type: str) -> str | None:
        """A presigned URL valid for 60 s, when the store is set to hand those out."""

    def delete(self, keys: Iterable[str]) -> None:
        """Delete the objects (a missing one counts as deleted); StorageUnavailable unless the
        store confirmed every one."""

    def is_empty(self) -> bool: ...

    def check(self) -> None:
        """Raise StorageUnavailable unless the store can be reached and written."""


@dataclass(frozen=True)
class Download:
    """How to answer for a stored object: a file on this host, bytes streamed from the store, or
    a presigned URL to send the client to."""

    content_type: str
    size: int | None
    path: Path | None = None
    stream: BinaryIO | None = None
    url: str | None = None


def download(store: "ObjectStore", key: str, content_type: str, size: int | None):
    """What the store offers for `key`, the store's own way first; None when it holds nothing.
    The caller checks who may have it before."""
    found = {"content_type": content_type, "size": size}
    if url := store.download_url(key, content_type):
        return Download(**found, url=url)
    if path := store.local_path(key):
        return Download(**found, path=path)
    if stream := store.open(key):
        return Download(**found, stream=stream)
    return None


def current_store() -> ObjectStore:
    """The store of the app in context (made once, in create_app)."""
    return current_app.extensions["svc.store"]


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


def storage_unavailable(why: str = "full or not writable") -> StorageUnavailable:
    return StorageUnavailable(
        f"Service unavailable: the upload storage is {why}; try again shortly"
    )


def open_store(url: str, instance_path: str, s3: S3Options | None = None) -> ObjectStore:
    """The store SVC_STORAGE_URL names: `s3://bucket[/prefix]`, `file:///path` or a path
    (relative to the instance folder). ValueError for anything else."""
    if url.startswith("s3://"):
        from svc.storage.s3 import S3Store  # boto3 is loaded only by an installation on S3

        parts = urlsplit(url)
        if not parts.netloc:
            raise ValueError("an s3:// URL names a bucket: s3://bucket[/prefix]")
        return S3Store(url, parts.netloc, parts.path.strip("/"), Path(instance_path), s3)
    from svc.storage.folder import FolderStore

    if url.startswith("file://"):
        path = urlsplit(url).path
        if not path.startswith("/"):
            raise ValueError("a file:// URL takes an absolute path: file:///var/lib/svc/uploads")
    elif "://" in url:
        raise ValueError("expected s3://bucket[/prefix], file:///absolute/path or a folder")
    else:
        path = url
    return FolderStore(Path(instance_path, path))


def new_key(extension: str) -> str:
    return f"{secrets.token_urlsafe(24)}.{extension}"


@contextmanager
def _unavailable_when_disk_fails():
    """A full, read-only or unreadable disk (the spool's, a folder store's) is the store being
    unavailable (503), not an error of the service."""
    try:
        yield
    except OSError as exc:
        if exc.errno in _UNAVAILABLE_ERRNOS:
            raise storage_unavailable() from exc
        raise


def save_image(store: ObjectStore, stream: BinaryIO, max_bytes: int) -> StoredImage:
    """Receive an uploaded file and store it: UnsupportedMedia unless it is an image, TooLarge
    past `max_bytes`, StorageUnavailable when the spool or the store cannot take it."""
    temporary = None
    try:
        with _unavailable_when_disk_fails():
            store.spool_dir.mkdir(parents=True, exist_ok=True)
            head = stream.read(CHUNK_BYTES)
            kind = sniff_image(head)
            if kind is None:
                raise UnsupportedMedia("Only PNG, JPEG, WebP and GIF images are accepted")
            content_type, extension = kind
            fd, temporary = tempfile.mkstemp(dir=store.spool_dir)
            size = 0
            with os.fdopen(fd, "wb") as target:
                chunk = head
                while chunk:
                    size += len(chunk)
                    if size > max_bytes:
                        raise TooLarge(
                            f"Screenshot too large: the limit is {size_in_words(max_bytes)}"
                        )
                    target.write(chunk)
                    chunk = stream.read(CHUNK_BYTES)
                target.flush()
                if store.keeps_spool_file:
                    os.fsync(target.fileno())
            key = new_key(extension)
            store.put_file(key, Path(temporary), content_type)
            return StoredImage(key=key, content_type=content_type, size=size)
    finally:
        if temporary is not None:
            remove_file(Path(temporary))


def save_bytes(store: ObjectStore, data: bytes, extension: str, content_type: str) -> StoredImage:
    """Store a file the service made itself (a replay) under a new key of its own form."""
    key = new_key(extension)
    with _unavailable_when_disk_fails():
        store.put_stream(key, io.BytesIO(data), content_type)
    return StoredImage(key=key, content_type=content_type, size=len(data))


def sha256_of(stream: BinaryIO, copy_to: BinaryIO | None = None) -> tuple[int, str]:
    """(size, SHA-256) of what `stream` holds, read to its end (and written to `copy_to`) and
    closed."""
    digest, size = hashlib.sha256(), 0
    with stream:
        while chunk := stream.read(CHUNK_BYTES):
            digest.update(chunk)
            size += len(chunk)
            if copy_to is not None:
                copy_to.write(chunk)
    return size, digest.hexdigest()


def remove_file(path: Path) -> None:
    # Called after the database has let go of the file: failing here must not fail the request.
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError:
        log.warning("could not remove %s", path, exc_info=True)
