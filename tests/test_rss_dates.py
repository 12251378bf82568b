"""R-RSS-5: feed dates, table-driven."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tidings.readers.rss import parse_date


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


CASES = [
    # RFC 822 and its variants
    ("Tue, 02 Jan 2024 10:30:00 +0100", False, utc(2024, 1, 2, 9, 30)),
    ("Tue, 02 Jan 2024 10:30:00 GMT", False, utc(2024, 1, 2, 10, 30)),
    ("Tue, 2 Jan 2024 10:30:00 UT", False, utc(2024, 1, 2, 10, 30)),
    ("Tue, 02 Jan 2024 10:30:00 Z", False, utc(2024, 1, 2, 10, 30)),
    ("02 Jan 2024 10:30 GMT", False, utc(2024, 1, 2, 10, 30)),  # no seconds, no weekday
    ("Tue, 02 Jan 24 10:30:00 GMT", False, utc(2024, 1, 2, 10, 30)),  # two-digit year
    ("Sat, 02 Jan 99 10:30:00 GMT", False, utc(1999, 1, 2, 10, 30)),
    ("Mon, 5 Feb 2024 9:05:00 EST", False, utc(2024, 2, 5, 14, 5)),
    ("Mon, 05 Feb 2024 09:05:00 PDT", False, utc(2024, 2, 5, 16, 5)),
    ("Mon, 05 Feb 2024 09:05:00 CST", False, utc(2024, 2, 5, 15, 5)),  # RFC 822: US Central
    ("Mon, 05 Feb 2024 09:05:00 CST", True, utc(2024, 2, 5, 1, 5)),  # Chinese feed: UTC+8
    ("Mon, 05 Feb 2024 09:05:00 +08:00", False, utc(2024, 2, 5, 1, 5)),
    ("Monday, 05 February 2024 09:05:00 -0500", False, utc(2024, 2, 5, 14, 5)),
    ("Tue, 02 Jan 2024 10:30:00 +0000 (UTC)", False, utc(2024, 1, 2, 10, 30)),
    ("Tue, 02 Jan 2024", False, utc(2024, 1, 2)),
    # Chinese weekday names imply China time for CST
    ("星期一, 15 Jan 2024 08:00:00 CST", False, utc(2024, 1, 15, 0, 0)),
    ("周一, 15 Jan 2024 08:00:00 +0800", False, utc(2024, 1, 15, 0, 0)),
    ("週三, 17 Jan 2024 08:00:00 GMT", False, utc(2024, 1, 17, 8, 0)),
    ("2024年1月14日 09:30", False, utc(2024, 1, 14, 1, 30)),
    ("2024年01月14日", False, utc(2024, 1, 13, 16, 0)),
    # ISO 8601
    ("2024-03-05T07:08:09+09:00", False, utc(2024, 3, 4, 22, 8, 9)),
    ("2024-03-05T07:08:09Z", False, utc(2024, 3, 5, 7, 8, 9)),
    ("2024-03-05T07:08:09.123456Z", False, utc(2024, 3, 5, 7, 8, 9, 123456)),
    ("2024-03-05 07:08:09", False, utc(2024, 3, 5, 7, 8, 9)),
    ("2024-03-05", False, utc(2024, 3, 5)),
    ("20240305T070809Z", False, utc(2024, 3, 5, 7, 8, 9)),
    ("2024-03-05T07:08+0100", False, utc(2024, 3, 5, 6, 8)),
    # fallbacks (dateutil)
    ("March 5, 2024 7:08 PM", False, utc(2024, 3, 5, 19, 8)),
    # no date at all
    ("", False, None),
    ("   ", False, None),
    ("not a date", False, None),
    ("Tue, 32 Jan 2024 10:30:00 GMT", False, None),
]


@pytest.mark.parametrize(("raw", "china", "expected"), CASES)
def test_parse_date(raw: str, china: bool, expected: datetime | None) -> None:
    got = parse_date(raw, cst_china=china)
    assert got == expected
    if got is not None:
        assert got.tzinfo is UTC or got.utcoffset().total_seconds() == 0  # type: ignore[union-attr]


def test_none_is_no_date() -> None:
    assert parse_date(None) is None


@pytest.mark.parametrize("raw", ["1", "10:30", "Monday", "5 March"])
def test_partial_dates_are_not_completed_from_today(raw: str) -> None:
    assert parse_date(raw) is None
