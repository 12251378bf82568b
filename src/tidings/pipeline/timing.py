"""When a source is fetched next and how healthy it is: pure functions of now.

Shared by the pipeline (which writes the outcome of each run) and the scheduler
(which plans rounds). SPEC section 5, R-SCHED-3, R-SCHED-4, R-RSS-7.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

from tidings.model import Health
from tidings.net import parse_retry_after

BACKOFF_CAP_MIN = 360
BUDGET_RETRY_MIN = 15
LEASE_MIN = 10
DEGRADED_AFTER = 1
FAILING_AFTER = 5
#: a caching hint delays a source by at most a day: a far-future Expires is a slip
HINT_CAP_MIN = 24 * 60


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


def caching_not_before(
    headers: Mapping[str, str], now: datetime, ttl_min: int | None = None,
) -> datetime | None:
    """The latest instant a response's caching hints ask us to wait for (R-RSS-7).

    Cache-Control max-age (less Age; it overrides Expires), Expires, Retry-After
    and the feed's own TTL. The result only ever pushes the next fetch later
    (see ``next_after_success``) and is capped at a day, so a bogus header
    cannot silence a source.
    """
    h = {k.lower(): v for k, v in headers.items()}
    hints: list[datetime] = []
    max_age = _max_age(h.get("cache-control", ""))
    if max_age is not None:
        hints.append(now + timedelta(seconds=max_age - _int_or_zero(h.get("age"))))
    elif (expires := _http_date(h.get("expires"))) is not None:
        hints.append(expires)
    if (retry := parse_retry_after(h.get("retry-after", ""), now)) is not None:
        hints.append(retry)
    if ttl_min:
        hints.append(now + timedelta(minutes=ttl_min))
    latest = max(hints, default=now)
    if latest <= now:
        return None
    return min(latest, now + timedelta(minutes=HINT_CAP_MIN))


def _max_age(cache_control: str) -> int | None:
    directives = [d.strip().lower() for d in cache_control.split(",")]
    if "no-store" in directives or "no-cache" in directives:
        return None
    for d in directives:
        name, _, value = d.partition("=")
        if name.strip() == "max-age" and value.strip().strip('"').isdigit():
            return int(value.strip().strip('"'))
    return None


def _int_or_zero(value: str | None) -> int:
    return int(value) if value and value.strip().isdigit() else 0


def _http_date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)
