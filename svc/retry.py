"""The retry rule of every outbox (webhook deliveries, mails, calls to trackers): one pure
function, which svc.outbox.settled applies for all three. Imports nothing of svc."""

from collections.abc import Sequence
from datetime import datetime, timedelta


def next_attempt(
    now: datetime,
    attempt_number: int,
    delays: Sequence[float],
    final: bool = False,
    at_least: float = 0,
) -> datetime | None:
    """When to make a failed attempt again: after `delays[attempt_number - 1]` seconds (at
    least `at_least`, what a 429's Retry-After asked), or None when it has failed for good:
    its retries are spent, or it is `final` (a 401, 404 or 422 that no retry can mend)."""
    if final or attempt_number > len(delays):
        return None
    return now + timedelta(seconds=max(delays[attempt_number - 1], at_least))
