"""`flask --app svc storage copy-to URL`: every object the database references, from the store
in force into another (docs/storage.md, "Moving to S3"). Nothing is deleted from the source; a
second run copies what is missing and checks the rest again."""

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from flask import current_app
from sqlalchemy import select

from svc import storage
from svc.errors import StorageUnavailable
from svc.extensions import db
from svc.models import Screenshot
from svc.operations.tables import OperationFailed


@dataclass
class Copied:
    target: str
    copied: int = 0
    present: int = 0  # there already, and equal in size and SHA-256
    missing: list[str] = field(default_factory=list)  # referenced, but not in the source


def copy_to(url: str) -> Copied:
    source = storage.current_store()
    try:
        target = storage.open_store(
            url, current_app.instance_path, storage.S3Options.from_settings(current_app.config)
        )
    except ValueError as exc:
        raise OperationFailed(f"not a store: {url}: {exc}") from None
    if target.location == source.location:
        raise OperationFailed(f"{url} is the store in force; name another one")
    copied = Copied(target.location)
    keys = db.session.execute(select(Screenshot.key, Screenshot.content_type).order_by("key"))
    try:
        target.check()
        with tempfile.TemporaryDirectory(
            prefix=".svc-objects-", dir=current_app.instance_path
        ) as staging:
            spooled = Path(staging) / "object"
            for key, content_type in keys:
                _copy_one(source, target, key, content_type, spooled, copied)
    except StorageUnavailable as exc:
        raise OperationFailed(f"{exc.detail} ({url})") from None
    return copied


def _copy_one(source, target, key: str, content_type: str, spooled: Path, copied: Copied):
    """One object: read from the source once (its size and SHA-256 on the way), sent unless
    the target has it equal already, then read back from the target and compared."""
    stream = source.open(key)
    if stream is None:
        copied.missing.append(key)
        return
    with open(spooled, "wb") as file:
        expected = storage.sha256_of(stream, copy_to=file)
    if target.size_of(key) == expected[0] and _read_back(target, key) == expected:
        copied.present += 1
        return
    with open(spooled, "rb") as file:
        target.put_stream(key, file, content_type)
    found = _read_back(target, key)
    if found != expected:
        raise OperationFailed(
            f"the copy of {key} differs: {found[0]} bytes, SHA-256 {found[1][:12]}... against "
            f"{expected[0]} bytes, {expected[1][:12]}..."
        )
    copied.copied += 1


def _read_back(target, key: str) -> tuple[int, str]:
    stream = target.open(key)
    return storage.sha256_of(stream) if stream else (0, "")
