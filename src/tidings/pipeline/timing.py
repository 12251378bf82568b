"""When a source is fetched next and how healthy it is: pure functions of now.

Shared by the pipeline (which writes the outcome of each run) and the scheduler
(which plans rounds). SPEC section 5, R-SCHED-3, R-SCHED-4, R-RSS-7.
"""

from __future__ import annotations

from datetime import datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tidings.errors import ConfigError
from tidings.model import Health

BACKOFF_CAP_MIN = 360
BUDGET_RETRY_MIN = 15
LEASE_MIN = 10
DEGRADED_AFTER = 1
FAILING_AFTER = 5


def next_after_success(
    now: datetime, interval_min: int, not_before: datetime | None = None,
) -> datetime:
    """Next fetch after a good run; caching hints may only push it later (R-RSS-7)."""
    planned = now + timedelta(minutes=interval_min)
    if not_before is not None and not_before > planned:
        return not_before
    return planned


def backoff_minutes(interval_min: int, fail_count: int) -> int:
    """interval x (fail_count + 2), capped at 360 minutes; fail_count before this failure."""
    return min(interval_min * (fail_count + 2), BACKOFF_CAP_MIN)


def next_after_failure(
    now: datetime, interval_min: int, fail_count: int,
    retry_after: datetime | None = None,
) -> datetime:
    """Next fetch after a failed run; a server's Retry-After may push it later."""
    planned = now + timedelta(minutes=backoff_minutes(interval_min, fail_count))
    if retry_after is not None and retry_after > planned:
        return retry_after
    return planned


def next_after_budget(now: datetime) -> datetime:
    """Our own budget ran out: retry soon, the source did nothing wrong (R-SCHED-3)."""
    return now + timedelta(minutes=BUDGET_RETRY_MIN)


def health_for(fail_count: int) -> Health:
    """ok; degraded after 1 failure; failing after 5 in a row (R-SCHED-4)."""
    if fail_count >= FAILING_AFTER:
        return Health.FAILING
    if fail_count >= DEGRADED_AFTER:
        return Health.DEGRADED
    return Health.OK


def lease_until(now: datetime) -> datetime:
    """A picked source is pushed this far ahead at once, so a crash cannot double-run it."""
    return now + timedelta(minutes=LEASE_MIN)


def stale_runs_before(now: datetime) -> datetime:
    """Runs still "running" that started before this belong to a dead process
    (twice the lease: no live run lasts that long)."""
    return now - timedelta(minutes=2 * LEASE_MIN)


def local_zone(name: str) -> tzinfo:
    """The named IANA zone, or the system's own when ``name`` is empty."""
    if not name:
        local = datetime.now().astimezone().tzinfo
        return local if local is not None else ZoneInfo("UTC")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(f"setting 'timezone': unknown time zone {name!r}") from exc
