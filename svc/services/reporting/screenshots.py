"""Screenshots (docs/api.md §9): upload tied to a project, serving to its team, clean-up."""

import logging
from datetime import timedelta
from typing import BinaryIO

from sqlalchemy import delete, insert, select

from svc import storage
from svc.config import setting
from svc.errors import StorageUnavailable, not_found
from svc.extensions import db
from svc.models import IdempotencyKey, Membership, ObjectDeletion, Project, Screenshot, User
from svc.models.base import utcnow

log = logging.getLogger(__name__)
ORPHAN_AGE = timedelta(hours=24)
DELETION_BATCH = 1000


def upload(project: Project, stream: BinaryIO) -> Screenshot:
    """Store an image for a project."""
    stored = storage.save_image(
        storage.current_store(), stream, setting("SVC_MAX_SCREENSHOT_BYTES")
    )
    return record(project, stored)


def record(project: Project, stored: storage.StoredImage) -> Screenshot:
    """The row of an object just stored (an image or a replay). The object is in the store
    before its row exists; if the row cannot be written the object goes again, so neither is
    left without the other."""
    screenshot = Screenshot(
        key=stored.key, project_id=project.id, content_type=stored.content_type, size=stored.size
    )
    db.session.add(screenshot)
    try:
        db.session.commit()
    except BaseException:
        db.session.rollback()
        try:
            storage.current_store().delete([stored.key])
        except StorageUnavailable:
            log.warning("an upload whose row failed stays in the store: %s", stored.key)
        raise
    return screenshot


def find_for(user: User, key: str) -> Screenshot:
    """A screenshot of one of the user's projects; else 404."""
    screenshot = db.session.scalar(
        select(Screenshot)
        .join(Membership, Membership.project_id == Screenshot.project_id)
        .where(Screenshot.key == key, Membership.user_id == user.id)
    )
    if screenshot is None:
        raise not_found("Screenshot not found")
    return screenshot


def download_for(user: User, key: str) -> storage.Download:
    """A screenshot of one of the user's projects (the access check first, whatever the store
    answers with); else 404."""
    screenshot = find_for(user, key)
    found = storage.download(storage.current_store(), key, screenshot.content_type, screenshot.size)
    if found is None:
        raise not_found("Screenshot not found")
    return found


def keys_of_reports(report_ids) -> list[str]:
    return list(
        db.session.scalars(select(Screenshot.key).where(Screenshot.report_id.in_(report_ids)))
    )


def keys_of_project(project_id) -> list[str]:
    return list(
        db.session.scalars(select(Screenshot.key).where(Screenshot.project_id == project_id))
    )


def forget(keys: list[str]) -> None:
    """Delete the rows of `keys` in the caller's transaction, and record their objects as to be
    deleted there too: the files go after it commits (`remove_files`), or, should the store be
    down or the process die first, when `retry_deletions` finds them."""
    if keys:
        db.session.execute(delete(Screenshot).where(Screenshot.key.in_(keys)))
        now = utcnow()
        db.session.execute(
            insert(ObjectDeletion), [{"key": key, "created_at": now} for key in keys]
        )


def remove_files(keys: list[str]) -> None:
    """Delete the objects `forget` recorded, once its transaction committed; each stays
    recorded until the store confirms it."""
    for start in range(0, len(keys), DELETION_BATCH):
        batch = keys[start : start + DELETION_BATCH]
        try:
            storage.current_store().delete(batch)
        except StorageUnavailable:
            log.warning("store unavailable: %d object(s) left to delete later", len(keys) - start)
            return
        db.session.execute(delete(ObjectDeletion).where(ObjectDeletion.key.in_(batch)))
        db.session.commit()


def retry_deletions() -> int:
    """The scheduler's: delete the objects still recorded (the store was down, or a process
    died between a commit and its deletion), oldest first; how many were recorded."""
    keys = list(
        db.session.scalars(
            select(ObjectDeletion.key).order_by(ObjectDeletion.created_at).limit(DELETION_BATCH)
        )
    )
    db.session.rollback()  # nothing is held while the store answers
    remove_files(keys)
    return len(keys)


def sweep(now=None) -> int:
    """Remove uploads no report took within a day, and forgotten Idempotency-Keys; returns how
    many screenshots went."""
    cutoff = (now or utcnow()) - ORPHAN_AGE
    keys = list(
        db.session.scalars(
            select(Screenshot.key).where(
                Screenshot.report_id.is_(None), Screenshot.created_at < cutoff
            )
        )
    )
    forget(keys)
    db.session.execute(delete(IdempotencyKey).where(IdempotencyKey.created_at < cutoff))
    db.session.commit()
    remove_files(keys)
    return len(keys)
