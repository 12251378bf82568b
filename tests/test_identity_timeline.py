"""Timeline rules (R-DEDUP-7, R-INGEST-4)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tidings.identity import (
    BACKFILL_HOURS,
    FUTURE_TOLERANCE,
    is_backfill,
    is_historical,
    trusted_published,
)
from tidings.identity.timeline import PUBLIC_PROMISE_HOURS

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
H = timedelta(hours=1)


def test_constants_keep_the_public_promise() -> None:
    assert BACKFILL_HOURS == 48
    assert BACKFILL_HOURS <= PUBLIC_PROMISE_HOURS == 72
    assert FUTURE_TOLERANCE == H


@pytest.mark.parametrize(
    ("published", "trusted"),
    [
        (None, False),
        (NOW - 1000 * H, True),
        (NOW, True),
        (NOW + H, True),
        (NOW + H + timedelta(seconds=1), False),
        (NOW + 24 * H, False),
    ],
)
def test_trusted_published(published: datetime | None, trusted: bool) -> None:
    result = trusted_published(published, NOW)
    assert result == (published if trusted else None)


def test_naive_times_are_read_as_utc() -> None:
    naive = datetime(2025, 3, 1, 14, 0)
    assert trusted_published(naive, NOW) is None
    assert trusted_published(datetime(2025, 3, 1, 13, 0), NOW) == NOW + H
    assert is_backfill(datetime(2025, 2, 1), NOW)


@pytest.mark.parametrize(
    ("age_hours", "declared", "expected"),
    [
        (0, None, False),
        (47, None, False),
        (48, None, False),
        (48.01, None, True),
        (500, None, True),
        (-5, None, False),  # discovered before its claimed time
        (1, True, False),  # a declaration does not push a fresh dated item out
        (100, False, True),  # nor keep an old one in "today"
        (100, True, True),
    ],
)
def test_is_backfill_with_a_date(age_hours: float, declared: bool | None, expected: bool) -> None:
    published = NOW - timedelta(hours=age_hours)
    assert is_backfill(published, NOW, declared) is expected


@pytest.mark.parametrize(("declared", "expected"), [(None, False), (False, False), (True, True)])
def test_is_backfill_without_a_date(declared: bool | None, expected: bool) -> None:
    assert is_backfill(None, NOW, declared) is expected


def test_is_historical() -> None:
    assert not is_historical(False, None, NOW)
    assert not is_historical(False, NOW - 500 * H, NOW)
    assert is_historical(True, None, NOW)
    assert is_historical(True, NOW - 49 * H, NOW)
    # declared backfill but published recently: stored as backfill, still makes heat
    assert not is_historical(True, NOW - 2 * H, NOW)
