"""R-RSS-5: feed dates, table-driven."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tidings.readers.rss import parse_date, parse_feed


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


# ------------------------------------------------------------------ zero dates

ZERO_DATES = [
    "0001-01-01T00:00:00Z",  # Go's zero time (Hugo), ISO 8601
    "0001-01-01T00:00:00+01:00",  # ... east of UTC: year 0 once in UTC
    "0001-01-01T00:00:00-05:00",
    "0001-01-01",
    "0001-01-01 00:00:00 +0000 UTC",  # Go's time.String()
    "Mon, 01 Jan 0001 00:00:00 +0000",  # RFC 822, Hugo's RSS template
    "Mon, 01 Jan 0001 00:00:00 +0100",
    "Mon, 1 Jan 0001 00:00:00 PST",
    "01 Jan 0001 00:00:00 GMT",
    "01 Jan 0001",
    "January 1, 0001",  # the fallback: dateutil reads the year as 2001
    "0001年1月1日",  # Beijing time: year 0 once in UTC
    "1601-01-01T00:00:00Z",  # Windows' zero
    "1900-01-01T00:00:00",  # SQL Server's and Excel's zero
    "Thu, 01 Jan 1970 00:00:00 GMT",  # Unix time 0
    "Thu, 01 Jan 1970 01:00:00 +0100",  # ... written in a zone
    "1969-12-31T23:59:59Z",  # Unix time -1: a failed mktime
]


@pytest.mark.parametrize("raw", ZERO_DATES)
def test_zero_dates_are_no_dates(raw: str) -> None:
    assert parse_date(raw) is None
    assert parse_date(raw, cst_china=True) is None


def test_the_first_second_after_the_epoch_is_a_date() -> None:
    assert parse_date("1970-01-01T00:00:01Z") == utc(1970, 1, 1, 0, 0, 1)
    assert parse_date("Fri, 15 Mar 1985 12:00:00 GMT") == utc(1985, 3, 15, 12)


ZERO_FEEDS = {
    "rss": b"""<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>
<item><title>A</title><link>https://e.com/a</link>
<pubDate>Mon, 01 Jan 0001 00:00:00 +0000</pubDate></item></channel></rss>""",
    "atom": b"""<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>T</title>
<entry><title>A</title><link href="https://e.com/a"/><id>https://e.com/a</id>
<updated>0001-01-01T00:00:00Z</updated></entry></feed>""",
    "json": b"""{"version": "https://jsonfeed.org/version/1.1", "title": "T", "items": [
{"id": "1", "url": "https://e.com/a", "title": "A",
 "date_published": "0001-01-01T00:00:00Z", "content_text": "x"}]}""",
}


@pytest.mark.parametrize("kind", sorted(ZERO_FEEDS))
def test_a_zero_date_in_a_feed_is_missing_and_kept_raw(kind: str) -> None:
    [item] = parse_feed(ZERO_FEEDS[kind], url="https://e.com/feed").items
    assert item.published_at is None and item.updated_at is None
    assert item.published_raw is not None and "0001" in item.published_raw


def test_one_date_rule_at_the_edge_refuses_times_without_a_utc_instant() -> None:
    """Issue 30: 0001-01-01T00:00:00+14:00 is in year 0 once in UTC; it was an
    OverflowError (a 500) in the store, and is a ValueError (a 422, a one-line CLI
    error) where dates come in (tidings.dates.utc_instant)."""
    from datetime import timedelta, timezone

    from tidings.dates import utc_instant

    plus14, minus14 = timezone(timedelta(hours=14)), timezone(timedelta(hours=-14))
    for edge in (datetime(1, 1, 1, tzinfo=plus14), datetime(9999, 12, 31, 23, tzinfo=minus14)):
        with pytest.raises(ValueError, match="out of range"):
            utc_instant(edge)
    assert utc_instant(datetime(1, 1, 1, 14, tzinfo=plus14)) == datetime(1, 1, 1, tzinfo=UTC)
    assert utc_instant(datetime(2024, 5, 1, 12)) == datetime(2024, 5, 1, 12, tzinfo=UTC)
