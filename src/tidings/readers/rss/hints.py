"""Caching hints (R-RSS-7): the earliest moment a feed is worth fetching again.

Feed ``<ttl>``, ``Cache-Control: max-age`` and ``Expires`` are combined by
taking the latest. The pipeline only ever uses the result to push the next
fetch *later* than the source's interval. A hint is capped at a day so a
misconfigured ``Expires`` a year ahead cannot silence a source.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

MAX_HINT = timedelta(days=1)
_MAX_AGE = re.compile(r"(?:^|[,\s])max-age\s*=\s*\"?(\d+)", re.IGNORECASE)
_NO_CACHE = re.compile(r"(?:^|[,\s])(?:no-store|no-cache)\b", re.IGNORECASE)


def not_before(
    headers: Mapping[str, str], ttl_minutes: int | None, now: datetime
) -> datetime | None:
    """The latest instant any hint asks us to wait for, or None when none applies."""
    candidates: list[datetime] = []
    if ttl_minutes:
        candidates.append(now + timedelta(minutes=ttl_minutes))
    cache_control = headers.get("cache-control", "")
    if not _NO_CACHE.search(cache_control):
        m = _MAX_AGE.search(cache_control)
        if m:  # max-age overrides Expires (RFC 9111 section 5.3)
            candidates.append(now + timedelta(seconds=int(m.group(1))))
        else:
            expires = _expires(headers, now)
            if expires is not None:
                candidates.append(expires)
    latest = max(candidates, default=None)
    if latest is None or latest <= now:
        return None
    return min(latest, now + MAX_HINT)


def _expires(headers: Mapping[str, str], now: datetime) -> datetime | None:
    """``Expires`` measured against the server's own ``Date`` (their clock may be off)."""
    expires = _http_date(headers.get("expires", ""))
    if expires is None:
        return None
    served = _http_date(headers.get("date", ""))
    return now + (expires - served) if served is not None else expires


def _http_date(value: str) -> datetime | None:
    if not value:
        return None
    try:
        parsed = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)
