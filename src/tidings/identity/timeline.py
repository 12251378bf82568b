"""Timeline decisions (R-DEDUP-7, R-INGEST-4): which publish times we trust,
which items are backfill, which are historical. Pure; ``now`` is passed in.

All arguments are expected timezone-aware; a naive datetime is read as UTC so a
sloppy caller gets a sensible answer instead of a TypeError.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

__all__ = [
    "BACKFILL_HOURS",
    "BACKFILL_WINDOW",
    "FUTURE_TOLERANCE",
    "PUBLIC_PROMISE_HOURS",
    "is_backfill",
    "is_historical",
    "trusted_published",
]

#: An item first seen more than this long after its publish time is backfill.
BACKFILL_HOURS = 48
#: The public promise: the backfill window is never wider than this.
PUBLIC_PROMISE_HOURS = 72
if BACKFILL_HOURS > PUBLIC_PROMISE_HOURS:  # an assert would vanish under -O
    raise RuntimeError(f"BACKFILL_HOURS={BACKFILL_HOURS} breaks the 72 h public promise")

BACKFILL_WINDOW = timedelta(hours=BACKFILL_HOURS)
#: Claimed publish times further in the future than this are not trusted.
FUTURE_TOLERANCE = timedelta(hours=1)


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def trusted_published(published_at: datetime | None, now: datetime) -> datetime | None:
    """The publish time to store, or None when it claims to be > 1 h in the future.

    The caller keeps the raw claimed value in ``raw``; we only refuse to sort
    the timeline by a date that has not happened yet.
    """
    if published_at is None:
        return None
    published = _aware(published_at)
    if published - _aware(now) > FUTURE_TOLERANCE:
        return None
    return published


def _late(published_at: datetime, discovered_at: datetime) -> bool:
    return _aware(discovered_at) - _aware(published_at) > BACKFILL_WINDOW


def is_backfill(
    published_at: datetime | None,
    discovered_at: datetime,
    declared: bool | None = None,
) -> bool:
    """First seen more than 48 h after its (trusted) publish time.

    A declared history item (R-INGEST-4) follows the same rule: with a publish
    time, only the 48 h test decides (``declared`` neither forces an old item
    into "today" nor a fresh one out of it); without one, the declaration is
    all we know, so ``declared=True`` makes it backfill. An undated,
    undeclared item is new: we cannot prove otherwise.
    """
    if published_at is None:
        return declared is True
    return _late(published_at, discovered_at)


def is_historical(
    backfill: bool,
    published_at: datetime | None,
    discovered_at: datetime,
) -> bool:
    """Backfill and (no publish time, or discovered > 48 h after it).

    Historical items are stored and processed normally but add no heat
    (no cluster growth, no trending).
    """
    if not backfill:
        return False
    return published_at is None or _late(published_at, discovered_at)
