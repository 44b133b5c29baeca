"""The object store as a folder on local disk: `<folder>/<first two characters>/<key>`, an
upload received in `<folder>/.incoming` and renamed into place (the same file system, so the
rename is atomic)."""

import errno
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

from svc import storage


class FolderStore:
    kind = "folder"
    keeps_spool_file = True

    def __init__(self, folder: Path):
        self.folder = folder
        self.location = f"file://{folder.resolve()}"
        self.spool_dir = folder / ".incoming"

    def path(self, key: str) -> Path | None:
        """Where the file of `key` lives; None for anything that is not a key we make."""
        return self.folder / key[:2] / key if storage.is_key(key) else None

    def put_file(self, key: str, path: Path, content_type: str) -> None:
        final = self.path(key)
        final.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, final)

    def put_stream(self, key: str, stream: BinaryIO, content_type: str) -> None:
        self.spool_dir.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=self.spool_dir)
        try:
            with os.fdopen(fd, "wb") as target:
                shutil.copyfileobj(stream, target, storage.CHUNK_BYTES)
                target.flush()
                os.fsync(target.fileno())
            self.put_file(key, Path(temporary), content_type)
        finally:
            storage.remove_file(Path(temporary))

    def open(self, key: str) -> BinaryIO | None:
        path = self.path(key)
        try:
            return open(path, "rb") if path else None
        except FileNotFoundError:
            return None

    def size_of(self, key: str) -> int | None:
        path = self.path(key)
        return path.stat().st_size if path and path.is_file() else None

    def local_path(self, key: str) -> Path | None:
        path = self.path(key)
        return path if path and path.is_file() else None

    def download_url(self, key: str, content_type: str) -> str | None:
        return None

    def delete(self, keys: Iterable[str]) -> None:
        for key in keys:
            if path := self.path(key):
                try:
                    path.unlink(missing_ok=True)
                except OSError as exc:
                    raise storage.storage_unavailable("not writable") from exc

    def is_empty(self) -> bool:
        return not (self.folder.is_dir() and any(p.is_file() for p in self.folder.rglob("*")))

    def check(self) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise storage.storage_unavailable() from exc
        if not os.access(self.folder, os.W_OK):
            raise storage.storage_unavailable() from OSError(errno.EACCES, str(self.folder))
