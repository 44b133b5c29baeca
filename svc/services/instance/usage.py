"""What a project and the instance take up (docs/api.md §7.4): reports, comments, stored
objects, the database on disk."""

import os
import uuid

from sqlalchemy import func, select, text

from svc.extensions import db
from svc.models import VIEWER, Comment, Project, Report, Screenshot, User
from svc.services import projects


def project_usage(user: User, project_id: uuid.UUID) -> dict:
    project = projects.access(user, project_id, at_least=VIEWER).project
    count, size = _objects(Screenshot.project_id == project_id)
    return {
        "reports": project.report_count,
        "comments": db.session.scalar(
            select(func.count())
            .select_from(Comment)
            .join(Report, Report.id == Comment.report_id)
            .where(Report.project_id == project_id)
        ),
        "objects": {"count": count, "bytes": size},
        "oldest_report_at": db.session.scalar(
            select(func.min(Report.created_at)).where(Report.project_id == project_id)
        ),
    }


def instance_usage() -> dict:
    objects = {
        project_id: {"count": count, "bytes": size or 0}
        for project_id, count, size in db.session.execute(
            select(Screenshot.project_id, func.count(), func.sum(Screenshot.size)).group_by(
                Screenshot.project_id
            )
        )
    }
    rows = [
        {
            "id": project.id,
            "name": project.name,
            "reports": project.report_count,
            "objects": objects.get(project.id, {"count": 0, "bytes": 0}),
        }
        for project in db.session.scalars(select(Project).order_by(Project.name))
    ]
    return {
        "projects": rows,
        "totals": {
            "reports": sum(row["reports"] for row in rows),
            "objects": {
                "count": sum(row["objects"]["count"] for row in rows),
                "bytes": sum(row["objects"]["bytes"] for row in rows),
            },
        },
        "database": {"bytes": _database_bytes()},
    }


def _objects(condition) -> tuple[int, int]:
    count, size = db.session.execute(
        select(func.count(), func.sum(Screenshot.size)).where(condition)
    ).one()
    return count, size or 0


def _database_bytes() -> int | None:
    """The database's size on disk: the SQLite file with its log, or what PostgreSQL says."""
    engine = db.engine
    if engine.dialect.name == "postgresql":
        return db.session.scalar(text("SELECT pg_database_size(current_database())"))
    if engine.dialect.name == "sqlite" and engine.url.database:
        files = [engine.url.database + suffix for suffix in ("", "-wal")]
        return sum(os.path.getsize(path) for path in files if os.path.exists(path))
    return None
