"""Which parsed dates count as dates: the rule the feed parser and the page parser share.

Zero dates are no dates. Software that has no date writes its zero value
instead, and static-site generators publish it: Go's (Hugo's)
``0001-01-01T00:00:00Z`` / ``Mon, 01 Jan 0001 00:00:00 +0000``, .NET's
``DateTime.MinValue`` (year 1 too), Windows' 1601-01-01, SQL Server's and
Excel's 1900-01-01, Unix time 0 (``Thu, 01 Jan 1970 00:00:00 GMT``) and -1 (a
failed ``mktime``: 1969-12-31 23:59:59). All of them lie at or before the Unix
epoch, so a date that is not after 1970-01-01T00:00:00Z is no date. The bound
is the epoch and not the birth of feeds (1999) because an archive may honestly
date an entry by its first publication - a 1980s newsletter issue - and such a
date orders the archive right; a real claim before 1970 is rarer than the zero
dates it would let through, which would put an entry 2,000 years into the past.

Dates from outside (a pushed item's ``published_at``) pass one rule at the edge,
:func:`utc_instant`: a time without a zone is read as UTC, and a time whose UTC
instant does not exist - ``0001-01-01T00:00:00+14:00`` is in year 0 - is refused
there as bad input (422), never met later as an OverflowError (a 500).

Dates are never completed from today: a general parser (dateutil) fills in a
missing year, and reads ``0001`` as 2001, so a year it returns counts only when
the text wrote it.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

#: dates at or before this instant are zero dates
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_YEAR = re.compile(r"(?<!\d)\d{4}(?!\d)")


def real_date(when: datetime | None) -> datetime | None:
    """``when`` (an aware datetime), or None when it is a zero date."""
    return when if when is not None and when > EPOCH else None


def has_year(text: str) -> bool:
    """True when ``text`` holds a four-digit year (worth handing to a general parser)."""
    return _YEAR.search(text) is not None


def year_written(text: str, parsed: datetime) -> bool:
    """True when the year of ``parsed`` (read from ``text``) is written in ``text``."""
    return f"{parsed.year:04d}" in _YEAR.findall(text)


def utc_instant(when: datetime) -> datetime:
    """``when`` as UTC (read as UTC when it names no zone); ValueError when that instant
    lies outside the years 1-9999 that dates (and storage) can hold."""
    if when.tzinfo is None or when.utcoffset() is None:
        when = when.replace(tzinfo=UTC)
    try:
        return when.astimezone(UTC)
    except OverflowError:
        raise ValueError("out of range: its UTC time falls before year 1 or after 9999"
                         ) from None
