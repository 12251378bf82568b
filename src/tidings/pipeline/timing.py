"""When a source is fetched next and how healthy it is: pure functions of now.

Shared by the pipeline (which writes the outcome of each run) and the scheduler
(which plans rounds). SPEC section 5, R-SCHED-3, R-SCHED-4, R-RSS-7.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tidings.errors import ConfigError, TidingsError
from tidings.model import CostClass, Health, Source
from tidings.pipeline.config import parse_config
from tidings.readers import get_reader, kind_of
from tidings.readers.base import BatchReader

BACKOFF_CAP_MIN = 360
BUDGET_RETRY_MIN = 15
LEASE_MIN = 10
DEGRADED_AFTER = 1
FAILING_AFTER = 5
#: the days R-SCHED-5 averages a source's output over
ADAPT_WINDOW_DAYS = 7


@dataclass(frozen=True, slots=True)
class Clamp:
    """Interval bounds in minutes for one cost class."""

    low: int
    high: int


#: R-SCHED-5: free 15-60; paid list <= 120; paid render 60-120; hot signal <= 180
COST_CLAMPS: Mapping[CostClass, Clamp] = {
    CostClass.FREE: Clamp(15, 60),
    CostClass.PAID_LIST: Clamp(15, 120),
    CostClass.PAID_RENDER: Clamp(60, 120),
    CostClass.HOT_SIGNAL: Clamp(15, 180),
}
#: X sources sharing one batched query follow the batch, not their own output
BATCH_CADENCE_EDITORIAL = 30
BATCH_CADENCE_HOT = 60
#: classes whose interval is set by their first check rather than the next daily
#: recomputation: every call of theirs is paid for (see :func:`first_check_interval`)
ADAPT_ON_FIRST_CHECK: frozenset[CostClass] = frozenset({CostClass.PAID_LIST})


def next_after_success(
    now: datetime, interval_min: int, not_before: datetime | None = None,
) -> datetime:
    """Next fetch after a good run; caching hints may only push it later (R-RSS-7)."""
    planned = now + timedelta(minutes=interval_min)
    if not_before is not None and not_before > planned:
        return not_before
    return planned


def is_batched(source: Source) -> bool:
    """A source read in a batch with others, of a kind that follows the batch's cadence
    (``Kind.batch_cadence``): its reader's ``batch_key`` says whether it is batched
    (an X account with a watermark, R-X-2); a config that no longer validates is not."""
    try:
        if not kind_of(source.kind).batch_cadence:
            return False
        reader = get_reader(source.kind)
        return isinstance(reader, BatchReader) and reader.batch_key(
            source, parse_config(source.kind, source.config)) is not None
    except TidingsError:
        return False


def adaptive_interval(
    cost_class: CostClass, items_per_day: float, *, batched: bool = False,
) -> int:
    """Minutes between fetches: about three fetches per new item, clamped by cost.

    target = 1440 / (items per day x 3); a silent source gets the class's upper
    bound, a busy one its lower bound (R-SCHED-5).
    """
    if batched:
        return BATCH_CADENCE_HOT if cost_class is CostClass.HOT_SIGNAL else BATCH_CADENCE_EDITORIAL
    clamp = COST_CLAMPS[cost_class]
    if items_per_day <= 0 or not math.isfinite(items_per_day):
        return clamp.high
    target = 1440 / (items_per_day * 3)
    return int(min(max(round(target), clamp.low), clamp.high))


def first_check_interval(source: Source, created: int) -> int | None:
    """The interval a paid source keeps after its first good check, or None to keep its own.

    The daily recomputation counts items by the day they were stored, so right
    after a first check it would compute ``created / 7`` per day: the first check
    brings in what the account published lately (a WeChat first check keeps
    exactly the last 7 days, R-WX-2). Applying R-SCHED-5 at once spares a paid
    account the hours of polling at its starting cadence until 04:20; ``source``
    is the source as the check left it (an X account with a watermark follows
    its batch).
    """
    if source.last_success_at is not None or source.cost_class not in ADAPT_ON_FIRST_CHECK:
        return None
    return adaptive_interval(source.cost_class, created / ADAPT_WINDOW_DAYS,
                             batched=is_batched(source))


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
