"""Export jobs (docs/api.md §8.3.1): an export too large for one answer, written by the
scheduler into the object store, gzipped, a batch at a time, with its progress; its requester
downloads it until it expires a day later, when the file and the row go.

The job reads the rows as the synchronous export does (svc.services.reporting.export: the same
filters, fields and order, memory flat whatever the count) and writes them to a temporary file
in the instance folder, then into the store. A job whose scheduler died is failed when its lease
ends; it is never run twice.
"""

import gzip
import logging
import os
import tempfile
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from pathlib import Path

from flask import current_app
from sqlalchemy import delete, insert, select, update

from svc import database, outbox, storage
from svc.errors import Conflict, not_found
from svc.extensions import db
from svc.models import VIEWER, ExportJob, ObjectDeletion, User
from svc.models.base import utcnow
from svc.models.exports import DONE, FAILED, QUEUED, RUNNING
from svc.services import projects
from svc.services.reporting import export, screenshots

log = logging.getLogger(__name__)
KEEP = timedelta(days=1)
# A job under way longer than this is taken for abandoned (10,000,000 reports at the measured
# rate take about ten minutes).
LEASE = timedelta(hours=2)
# The progress is written every this many reports.
PROGRESS_EVERY = 10_000
TYPES = {"csv": "text/csv", "ndjson": "application/x-ndjson"}


def request(user: User, project_id: uuid.UUID, kind: str, query: dict) -> ExportJob:
    """Queue an export of the project's reports the filters choose (anyone of the project)."""
    projects.access(user, project_id, at_least=VIEWER)
    query = {**query, "project_id": project_id}
    export.record(user, query)
    now = utcnow()
    job = ExportJob(
        id=uuid.uuid4(),
        user_id=user.id,
        project_id=project_id,
        format=kind,
        filters=_stored(query),
        status=QUEUED,
        created_at=now,
        expires_at=now + KEEP,
    )
    db.session.add(job)
    db.session.commit()
    return job


def get_for(user: User, job_id: uuid.UUID) -> ExportJob:
    """One of the user's own export jobs, until it expires; else 404."""
    job = db.session.get(ExportJob, job_id)
    if job is None or job.user_id != user.id or job.expires_at <= utcnow():
        raise not_found("Export not found")
    return job


def download_for(user: User, job_id: uuid.UUID) -> tuple[ExportJob, storage.Download]:
    """One of the user's own exports, done, and how to answer with its file; else 404, or 409
    while it is not done."""
    job = get_for(user, job_id)
    if job.status != DONE:
        raise Conflict(f"The export is {job.status}, not done")
    found = storage.download(storage.current_store(), job.key, "application/gzip", job.size)
    if found is None:
        raise not_found("Export not found")
    return job, found


def filename(job: ExportJob) -> str:
    return f"svc-reports-{job.created_at:%Y-%m-%d}.{job.format}.gz"


# --- the scheduler's ----------------------------------------------------------------------------


def run_next() -> uuid.UUID | None:
    """Write the oldest queued export; its id (None when none waits)."""
    fail_abandoned()
    job_id = outbox.claim_queued(ExportJob, now=utcnow(), lease=LEASE)
    if job_id is not None:
        _write(job_id)
    return job_id


def _write(job_id: uuid.UUID) -> None:
    job = db.session.get(ExportJob, job_id)
    user = db.session.get(User, job.user_id)
    query, kind = _query_of(job.filters), job.format
    db.session.commit()
    descriptor, temporary = tempfile.mkstemp(
        prefix="export-", suffix=".gz", dir=current_app.instance_path
    )
    os.close(descriptor)
    path = Path(temporary)
    try:
        database.begin_read_only(db.session())
        total = export.count(user, query)
        _progress(job_id, total=total, written=0)
        written = 0

        def counted(items):
            nonlocal written
            for item in items:
                written += 1
                if written % PROGRESS_EVERY == 0:
                    _progress(job_id, written=written)
                yield item

        items = counted(export.rows(user, query))
        chunks = export.csv_text(items) if kind == "csv" else export.ndjson(items)
        _compressed(chunks, path)
        db.session.commit()
        store = storage.current_store()
        key = storage.new_key(f"{kind}.gz")
        with path.open("rb") as stream:
            store.put_stream(key, stream, "application/gzip")
        if not _finish(job_id, DONE, written=written, key=key, size=path.stat().st_size):
            store.delete([key])  # the job went meanwhile (its project was deleted)
    except Exception as problem:  # the job fails; the scheduler goes on
        db.session.rollback()
        log.exception("export %s failed", job_id)
        _finish(job_id, FAILED, error=str(problem)[:500] or type(problem).__name__)
    finally:
        storage.remove_file(path)


def _compressed(chunks, path: Path) -> None:
    """The chunks gzipped into `path`, compressed in a thread of its own while the next chunk
    is made (zlib lets go of the GIL); at most one chunk waits. Level 1: the job's time, not
    the file's size, is what grows with an install (docs/performance.md)."""
    with gzip.open(path, "wb", compresslevel=1) as out, ThreadPoolExecutor(1) as compressor:
        pending = None
        for chunk in chunks:
            data = chunk.encode()
            if pending is not None:
                pending.result()
            pending = compressor.submit(out.write, data)
        if pending is not None:
            pending.result()


def _progress(job_id: uuid.UUID, **values) -> bool:
    """On a connection of its own: the job's read transaction stays open meanwhile. Whether the
    job is still there."""
    with db.engine.begin() as connection:
        changed = connection.execute(
            update(ExportJob).where(ExportJob.id == job_id).values(**values)
        )
    return changed.rowcount == 1


def _finish(job_id: uuid.UUID, status: str, **values) -> bool:
    return _progress(job_id, status=status, finished_at=utcnow(), lease_until=None, **values)


def fail_abandoned(now=None) -> int:
    now = now or utcnow()
    failed = db.session.execute(
        update(ExportJob)
        .where(ExportJob.status == RUNNING, ExportJob.lease_until < now)
        .values(status=FAILED, error="the scheduler stopped before the end", finished_at=now)
        .execution_options(synchronize_session=False)
    ).rowcount
    db.session.commit()
    return failed


def forget_expired(now=None) -> int:
    """The hourly job's: expired exports go, their files after (svc.services.reporting.
    screenshots.remove_files, retried until the store confirms)."""
    now = now or utcnow()
    expired = db.session.execute(
        select(ExportJob.id, ExportJob.key).where(ExportJob.expires_at <= now)
    ).all()
    if not expired:
        db.session.rollback()
        return 0
    keys = [key for _, key in expired if key]
    if keys:
        db.session.execute(
            insert(ObjectDeletion), [{"key": key, "created_at": now} for key in keys]
        )
    db.session.execute(delete(ExportJob).where(ExportJob.id.in_([i for i, _ in expired])))
    db.session.commit()
    screenshots.remove_files(keys)
    return len(expired)


# --- the filters, kept as JSON ------------------------------------------------------------------

_TIMES = ("created_after", "created_before")


def _stored(query: dict) -> dict:
    return {
        name: value.isoformat()
        if isinstance(value, datetime)
        else str(value)
        if isinstance(value, uuid.UUID)
        else value
        for name, value in query.items()
    }


def _query_of(filters: dict) -> dict:
    query = dict(filters)
    for name in _TIMES:
        if name in query:
            query[name] = datetime.fromisoformat(query[name])
    query["project_id"] = uuid.UUID(query["project_id"])
    if query.get("assignee") not in (None, "me", "none"):
        query["assignee"] = uuid.UUID(query["assignee"])
    return query
