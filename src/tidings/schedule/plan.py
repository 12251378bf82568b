"""Scheduling decisions as pure functions of ``now`` (R-SCHED-1, R-SCHED-5).

The runner and the cluster worker only do I/O around these: which sources a
tick takes, what interval a source deserves after a week of output, when the
daily and weekly jobs fire. Keeping them pure lets the tests walk a fake clock
through days of schedule in microseconds. Per-run outcomes (backoff, budget,
health, caching hints, and the R-SCHED-5 formula a paid source's first check
applies) live in :mod:`tidings.pipeline.timing`, because the pipeline writes them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, time, timedelta, tzinfo

from tidings.dates import EPOCH
from tidings.errors import ConfigError
from tidings.model import Source
from tidings.pipeline.timing import ADAPT_WINDOW_DAYS, adaptive_interval, is_batched

#: at most this many sources are picked per tick (R-SCHED-1)
MAX_PER_TICK = 40
TICK_SECONDS = 60.0
#: the daily interval recomputation, local time (R-SCHED-5)
ADAPT_AT = time(4, 20)
#: the weekly health report: Monday morning, local time (R-OPS-3)
REPORT_WEEKDAY = 0
REPORT_AT = time(9, 0)




# ------------------------------------------------------------------ due picking


def due_key(source: Source) -> tuple[int, datetime, str]:
    """Sort key of a due source: starred first, then the longest overdue, then id.

    Priority wins only among sources that are due, so it decides who gets in
    when a tick is full; it never makes a source run before its time.
    """
    return (-source.priority, source.next_fetch_at or EPOCH, source.id)


def is_due(source: Source, now: datetime) -> bool:
    if source.muted_reason:
        return False
    return source.next_fetch_at is None or source.next_fetch_at <= now


def pick_due(
    sources: Iterable[Source], now: datetime, limit: int = MAX_PER_TICK,
) -> list[Source]:
    """The sources one tick takes, in the order storage must return them.

    Chosen by :func:`due_key`, then started longest-overdue first. This is the
    reference the SQL of ``Storage.claim_due_sources`` is tested against; the
    runner itself asks storage, which picks and leases atomically.
    """
    if limit <= 0:
        return []
    chosen = sorted((s for s in sources if is_due(s, now)), key=due_key)[:limit]
    return sorted(chosen, key=lambda s: (s.next_fetch_at or EPOCH, -s.priority, s.id))


def tick_capacity(in_flight: int, concurrency: int, per_tick: int = MAX_PER_TICK) -> int:
    """How many sources a tick may claim: never more than free worker slots.

    Claiming more than can start would let leases run out while sources wait.
    """
    return max(0, min(per_tick, concurrency - in_flight))


# ----------------------------------------------------------- adaptive intervals


def mean_per_day(daily_counts: Sequence[int], days: int = ADAPT_WINDOW_DAYS) -> float:
    """Mean new items per day over the window; missing days count as zero."""
    if days <= 0:
        raise ConfigError("the adaptive window must be at least one day")
    return sum(daily_counts[-days:]) / days


def plan_intervals(
    sources: Iterable[Source], daily_counts: Mapping[str, Sequence[int]],
) -> dict[str, int]:
    """New ``interval_min`` per source id, only for the sources whose interval changes."""
    changes: dict[str, int] = {}
    for source in sources:
        mean = mean_per_day(daily_counts.get(source.id, ()))
        interval = adaptive_interval(source.cost_class, mean, batched=is_batched(source))
        if interval != source.interval_min:
            changes[source.id] = interval
    return changes


# --------------------------------------------------------------- wall-clock jobs


def parse_hhmm(text: str) -> time:
    """``"04:20"`` -> ``time(4, 20)``; anything else is a ConfigError."""
    try:
        hours, minutes = text.strip().split(":")
        return time(int(hours), int(minutes))
    except ValueError as exc:
        raise ConfigError(f"not a time of day (HH:MM): {text!r}") from exc


def next_daily(now: datetime, at: time, tz: tzinfo) -> datetime:
    """The first ``at`` local time strictly after ``now``, in UTC."""
    local = now.astimezone(tz)
    candidate = datetime.combine(local.date(), at, tzinfo=tz)
    if candidate <= local:
        candidate = datetime.combine(local.date() + timedelta(days=1), at, tzinfo=tz)
    return candidate.astimezone(UTC)


def next_weekly(now: datetime, weekday: int, at: time, tz: tzinfo) -> datetime:
    """The first ``weekday`` (Monday = 0) at ``at`` local time strictly after ``now``."""
    local = now.astimezone(tz)
    for days in range(8):
        day = local.date() + timedelta(days=days)
        candidate = datetime.combine(day, at, tzinfo=tz)
        if day.weekday() == weekday and candidate > local:
            return candidate.astimezone(UTC)
    raise ConfigError(f"weekday must be 0..6, not {weekday}")
