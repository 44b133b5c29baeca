"""`flask --app svc backup` and `restore`: one archive holds the database as a SQLite file, the
objects of the store (screenshots), and a manifest of counts and checksums that the restore
checks before it writes anything (docs/operations.md)."""

import hashlib
import io
import json
import os
import shutil
import tarfile
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from flask import current_app
from sqlalchemy import select

from svc import audit, storage
from svc.extensions import db
from svc.models import Screenshot
from svc.models.base import utcnow
from svc.operations import tables
from svc.operations.tables import OperationFailed

FORMAT = 1
MANIFEST = "manifest.json"
DATABASE_FILE = "database.sqlite3"
OBJECTS_DIR = "objects"
# What archives written before the object store called their files; restore reads both.
EARLIER_OBJECTS_DIR = "screenshots"
_READ_BYTES = 1024 * 1024


@dataclass
class Backup:
    path: Path
    manifest: dict
    missing_objects: list[str] = field(default_factory=list)


def backup(destination: str) -> Backup:
    """Write an archive of the installation while it runs. `destination` is the archive's
    path, or a folder to put `svc-backup-<time>.tar.gz` in. The archive appears whole or not
    at all."""
    path = _archive_path(Path(destination))
    with tempfile.TemporaryDirectory(prefix=".svc-backup-", dir=path.parent) as staging:
        snapshot = Path(staging) / DATABASE_FILE
        revision = _snapshot(snapshot)
        manifest = {
            "format": FORMAT,
            "created_at": utcnow().isoformat(),
            "source": db.engine.dialect.name,
            "revision": revision,
            "tables": _summary_of_file(snapshot),
            "database": {"file": DATABASE_FILE, "sha256": _sha256(snapshot)},
            "objects": {},
        }
        missing = _write_archive(path, snapshot, manifest)
    return Backup(path, manifest, missing)


def _archive_path(destination: Path) -> Path:
    if destination.is_dir():
        stamp = utcnow().strftime("%Y%m%dT%H%M%SZ")
        return destination / f"svc-backup-{stamp}.tar.gz"
    if not destination.parent.is_dir():
        raise OperationFailed(f"{destination.parent} is not a folder")
    if destination.exists():
        raise OperationFailed(f"{destination} exists already; choose a new name")
    return destination


def _snapshot(target: Path) -> str:
    """The installation's database, as of one moment, into a SQLite file; its revision."""
    if db.engine.dialect.name == "sqlite":
        tables.snapshot_sqlite(Path(db.engine.url.database), target)
        with tables.open_database(tables.sqlite_url(target)).connect() as connection:
            return tables.revision_of(connection)
    return _snapshot_postgresql(target)


def _snapshot_postgresql(target: Path) -> str:
    """Every table read in one read-only snapshot transaction (the service goes on writing),
    written to a SQLite file migrated to the same revision, then compared with that snapshot."""
    engine = tables.open_database(tables.sqlite_url(target))
    try:
        with db.engine.connect() as source:
            source = source.execution_options(isolation_level="REPEATABLE READ")
            source.exec_driver_sql("SET TRANSACTION READ ONLY")
            revision = tables.revision_of(source)
            tables.migrate(engine, revision)
            moved = tables.tables_to_move(source)
            with engine.begin() as copy:
                tables.copy_rows(source, copy, moved)
            expected = tables.summary(source, moved)
        with engine.connect() as copy:
            wrong = tables.differences(expected, tables.summary(copy, moved))
    finally:
        engine.dispose()
    if wrong:
        raise OperationFailed("the copy differs from the database: " + "; ".join(wrong))
    return revision


def _summary_of_file(path: Path) -> dict[str, dict]:
    engine = tables.open_database(tables.sqlite_url(path))
    try:
        with engine.connect() as connection:
            return tables.summary(connection, tables.tables_to_move(connection))
    finally:
        engine.dispose()


def _write_archive(path: Path, snapshot: Path, manifest: dict) -> list[str]:
    """The archive, beside its final name until it is whole; the objects the snapshot names
    but the store no longer has (a report deleted since) are left out and returned."""
    partial = path.with_name(path.name + ".partial")
    store = storage.current_store()
    copy = snapshot.with_name("object")
    missing = []
    try:
        # Owner-only from its first byte: it holds password hashes, API keys and secrets.
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with open(descriptor, "wb") as file, tarfile.open(fileobj=file, mode="w:gz") as archive:
            archive.add(snapshot, DATABASE_FILE)
            for key in _object_keys(snapshot):
                source = store.open(key)
                if source is None:
                    missing.append(key)
                    continue
                with source, open(copy, "wb") as target:  # one object on disk at a time
                    shutil.copyfileobj(source, target, _READ_BYTES)
                manifest["objects"][key] = _sha256(copy)
                archive.add(copy, f"{OBJECTS_DIR}/{key}")
            manifest["missing_objects"] = missing
            _add_bytes(archive, MANIFEST, json.dumps(manifest, indent=2).encode())
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return missing


def _object_keys(snapshot: Path) -> list[str]:
    engine = tables.open_database(tables.sqlite_url(snapshot))
    try:
        with engine.connect() as connection:
            return list(connection.scalars(select(Screenshot.key).order_by(Screenshot.key)))
    finally:
        engine.dispose()


def _add_bytes(archive: tarfile.TarFile, name: str, content: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(content)
    info.mtime = int(utcnow().timestamp())
    archive.addfile(info, io.BytesIO(content))


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while chunk := file.read(_READ_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass
class Restored:
    manifest: dict
    migrated_from: str | None


def restore(archive_path: str) -> Restored:
    """Restore an archive into this installation, which must be empty. The archive is read and
    checked whole (its members, every file's checksum, every table's count and checksum) before
    the installation is looked at, and nothing is written to it before both pass."""
    store = storage.current_store()
    with tempfile.TemporaryDirectory(
        prefix=".svc-restore-", dir=current_app.instance_path
    ) as staging:
        staging = Path(staging)
        manifest = _unpack(Path(archive_path), staging)
        _refuse_unless_empty(store)
        snapshot = staging / DATABASE_FILE
        migrated_from = tables.upgrade_snapshot(snapshot)
        if db.engine.dialect.name == "sqlite":
            _put_sqlite_file(snapshot)
        else:
            tables.copy_database(snapshot, db.engine)
        _put_objects(staging / OBJECTS_DIR, store, manifest["objects"])
    audit.record(
        audit.INSTANCE_RESTORED,
        None,
        ("instance", None),
        archive=Path(archive_path).name,
        backupCreatedAt=manifest["created_at"],
    )
    db.session.commit()
    return Restored(manifest, migrated_from)


def _refuse_unless_empty(store: storage.ObjectStore) -> None:
    if db.engine.dialect.name != "sqlite" or Path(db.engine.url.database).exists():
        tables.refuse_unless_empty(db.engine, "this installation")
    if not store.is_empty():
        raise OperationFailed(f"this installation is not empty: {store.location} holds files")


def _unpack(archive_path: Path, staging: Path) -> dict:
    """Copy the archive's files into staging and check them against its manifest.

    Never tarfile's extraction: its filters have been bypassed (CVE-2025-4517 on 3.11.7). Every
    member must be a regular file of a name a backup writes, and each is copied through
    extractfile() to a path built here from that checked name."""
    try:
        with tarfile.open(archive_path, "r:gz") as archive:
            members = archive.getmembers()  # reads to the end: a cut-short archive fails here
            targets = _staging_paths(archive_path, members, staging)
            (staging / OBJECTS_DIR).mkdir()
            for member, target in zip(members, targets, strict=True):
                with archive.extractfile(member) as source, open(target, "xb") as copy:
                    shutil.copyfileobj(source, copy, _READ_BYTES)
        manifest = _checked_manifest(archive_path, json.loads((staging / MANIFEST).read_bytes()))
    except (tarfile.ReadError, EOFError, zlib.error) as exc:
        why = "cut short" if isinstance(exc, EOFError) else "not a gzipped tar archive"
        raise OperationFailed(f"{archive_path} is not a readable svc backup: {why}") from None
    except (OSError, tarfile.TarError, ValueError) as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise OperationFailed(f"{archive_path} is not a readable svc backup: {why}") from None
    damaged = [
        name
        for name, expected in (
            (DATABASE_FILE, manifest["database"]["sha256"]),
            *((f"{OBJECTS_DIR}/{key}", sha) for key, sha in manifest["objects"].items()),
        )
        if not (staging / name).is_file() or _sha256(staging / name) != expected
    ]
    if damaged:
        raise OperationFailed(f"{archive_path} is damaged: {', '.join(damaged[:5])} differ")
    wrong = tables.differences(manifest["tables"], _summary_of_file(staging / DATABASE_FILE))
    if wrong:
        raise OperationFailed(f"{archive_path} is damaged: " + "; ".join(wrong))
    return manifest


def _staging_paths(archive_path: Path, members: list, staging: Path) -> list[Path]:
    """Where each member goes: manifest.json, database.sqlite3 and objects/<key> (or, from an
    archive of before the object store, screenshots/<key>) alone, as regular files, each once;
    any other member refuses the whole archive."""
    targets = []
    for member in members:
        name = member.name
        folder, _, key = name.partition("/")
        if name in (MANIFEST, DATABASE_FILE):
            target = staging / name
        elif folder in (OBJECTS_DIR, EARLIER_OBJECTS_DIR) and storage.is_key(key):
            target = staging / OBJECTS_DIR / key
        else:
            raise OperationFailed(f"{archive_path} is not an svc backup: it holds {name!r}")
        if not member.isreg():
            raise OperationFailed(f"{archive_path} is not an svc backup: {name!r} is not a file")
        if target in targets:
            raise OperationFailed(f"{archive_path} is not an svc backup: {name!r} is there twice")
        targets.append(target)
    for required in (MANIFEST, DATABASE_FILE):
        if staging / required not in targets:
            raise OperationFailed(f"{archive_path} is not an svc backup: no {required}")
    return targets


def _checked_manifest(archive_path: Path, manifest) -> dict:
    """The manifest, if it has every part restore reads, of the right kinds."""
    problem = None
    if isinstance(manifest, dict) and "objects" not in manifest:
        manifest["objects"] = manifest.pop(EARLIER_OBJECTS_DIR, None)
    if not isinstance(manifest, dict):
        problem = "the manifest is not an object"
    elif manifest.get("format") != FORMAT:
        problem = f"unknown backup format {manifest.get('format')!r}"
    elif not isinstance(manifest.get("tables"), dict) or not isinstance(
        manifest.get("created_at"), str
    ):
        problem = "the manifest has no tables or no time"
    elif not isinstance(manifest.get("database"), dict) or not isinstance(
        manifest["database"].get("sha256"), str
    ):
        problem = "the manifest has no checksum of the database"
    elif not isinstance(manifest.get("objects"), dict) or not all(
        storage.is_key(key) and isinstance(sha, str) for key, sha in manifest["objects"].items()
    ):
        problem = "the manifest names an object that is not one of svc's keys"
    if problem:
        raise OperationFailed(f"{archive_path}: {problem}")
    return manifest


def _put_sqlite_file(snapshot: Path) -> None:
    """The snapshot becomes the database file; the old file's log goes with it."""
    database = Path(db.engine.url.database)
    db.engine.dispose()
    arriving = database.with_name(database.name + ".restoring")
    shutil.copyfile(snapshot, arriving)
    for suffix in ("-wal", "-shm"):
        database.with_name(database.name + suffix).unlink(missing_ok=True)
    os.replace(arriving, database)


def _put_objects(source: Path, store: storage.ObjectStore, objects: dict[str, str]) -> None:
    for key in objects:
        with open(source / key, "rb") as file:
            kind = storage.sniff_image(file.read(16))
            file.seek(0)
            store.put_stream(key, file, kind[0] if kind else "application/octet-stream")
