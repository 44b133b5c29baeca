"""The overview of the caller's reports (docs/api.md §8.4)."""

from flask import Blueprint

from svc.api.decorators import query, response
from svc.auth.guard import current_user, login_required
from svc.schemas.stats import StatsOut, StatsQuery
from svc.services.reporting import stats

bp = Blueprint("stats", __name__, url_prefix="/api/v1/stats")


@bp.get("")
@login_required
@query(StatsQuery())
@response(StatsOut(), errors=(404,))
def overview(params):
    """Open reports by status, severity and category; created and resolved per day over the
    last `days` (UTC); the median hours from filed to resolved of those resolved then."""
    return stats.overview(current_user(), params.get("project_id"), params["days"])
