"""The demo site's dates, moved to the present as they are served.

The packaged sample site was written as of :data:`WRITTEN_AT`; served as it is,
its newest item would be days old by the time anyone runs ``tidings demo``, and
the first page a newcomer sees, Today (the last 24 hours), would be empty. So
every RFC 822 date (RSS) and ISO 8601 date (Atom, JSON Feed, HTML meta) in a
served file is moved forward by whole hours to keep the site's own spacing:
its newest item an hour old, its oldest (two days and more) still history.
Whole hours, so two runs within the hour see the same dates and store nothing
twice.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime

#: the moment the sample site's dates were written for (its newest item is 1 h older)
WRITTEN_AT = datetime(2026, 11, 29, 11, 0, tzinfo=UTC)
#: files whose dates are moved (the Chinese page is GB2312 and has none)
DATED_SUFFIXES = (".xml", ".json", ".html")

_RFC822 = re.compile(r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{1,2} [A-Z][a-z]{2} \d{4} "
                     r"\d{2}:\d{2}:\d{2} [+-]\d{4}\b")
_ISO = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:Z|[+-]\d{2}:\d{2})")


def shift_to(now: datetime) -> timedelta:
    """How far the site's dates move: whole hours from :data:`WRITTEN_AT` to ``now``."""
    return timedelta(hours=(now - WRITTEN_AT) // timedelta(hours=1))


def shift_dates(text: str, by: timedelta) -> str:
    """``text`` with each date it holds moved by ``by``, written as it was (same form
    and UTC offset)."""

    def rfc822(match: re.Match[str]) -> str:
        return format_datetime(parsedate_to_datetime(match.group()) + by)

    def iso(match: re.Match[str]) -> str:
        raw = match.group()
        moved = (datetime.fromisoformat(raw) + by).isoformat()
        return moved.replace("+00:00", "Z") if raw.endswith("Z") else moved

    return _ISO.sub(iso, _RFC822.sub(rfc822, text))
