"""X search queries: watermarks as tweet ids, and accounts packed into few searches.

Tweet ids are snowflakes that carry their creation time, so "everything since the
last successful check" can be asked as a ``since_id`` even of an account that has
been silent for months (R-X-3). Accounts are packed into as few searches as the
provider's query length allows (R-X-2), in a stable order so that adding one
account only changes the searches after it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

#: X's epoch of snowflake ids, in Unix milliseconds
TWITTER_EPOCH_MS = 1288834974657
#: the watermark trails the last successful check by this much: the search index lags
WATERMARK_LAG = timedelta(minutes=10)
#: SocialData allows 512 characters; ``since_id:<19 digits>`` takes about 30 of them
MAX_QUERY_CHARS = 470
MAX_ACCOUNTS = 24
REPLIES = "-filter:replies"
HANDLE = re.compile(r"^[A-Za-z0-9_]{1,15}$")
MAX_ID = re.compile(r" max_id:\d+")


def snowflake(when: datetime) -> int:
    """The smallest tweet id X could have given at ``when``."""
    ms = int(when.timestamp() * 1000)
    return max(0, (ms - TWITTER_EPOCH_MS) << 22)


def tweet_time(tweet_id: int) -> datetime:
    """When a tweet with this id was created (the inverse of :func:`snowflake`)."""
    return datetime.fromtimestamp(((tweet_id >> 22) + TWITTER_EPOCH_MS) / 1000, UTC)


def watermark(last_seen: int, checked_at: datetime) -> int:
    """R-X-3: the larger of the last tweet id seen and the id of (check - 10 min)."""
    return max(last_seen, snowflake(checked_at - WATERMARK_LAG))


#: how late a run may be and still keep its place on the cadence grid
GRID_SLACK = timedelta(minutes=5)


def on_grid(now: datetime, interval_min: int) -> datetime:
    """The next fetch of a batched account: on a fixed grid of its interval.

    Accounts only share a search when they are due together; a run pushed off its
    place (a budget stop, a provider outage, a first check) would otherwise leave
    its batch split into two half-full searches for good. Asking for the first
    grid point after (now + interval - slack) brings it back within one interval,
    while a run a little late stays where it is.
    """
    step = max(1, interval_min) * 60
    earliest = int((now + timedelta(minutes=interval_min) - GRID_SLACK).timestamp())
    return datetime.fromtimestamp(-(-earliest // step) * step, UTC)


def since(query: str, since_id: int | None) -> str:
    return f"{query} since_id:{since_id}" if since_id else query


def single(handle: str) -> str:
    """R-X-1: one account's query, without its ``since_id``."""
    return f"from:{handle} {REPLIES}"


def packed(handles: Sequence[str]) -> str:
    """Several accounts in one query, without its ``since_id``."""
    if len(handles) == 1:
        return single(handles[0])
    return "(" + " OR ".join(f"from:{h}" for h in handles) + f") {REPLIES}"


def pack(handles: Sequence[str], *, max_chars: int = MAX_QUERY_CHARS,
         max_accounts: int = MAX_ACCOUNTS) -> list[list[str]]:
    """``handles`` (already in stable order) cut into runs whose query fits."""
    out: list[list[str]] = []
    for handle in handles:
        if out and len(out[-1]) < max_accounts and len(packed([*out[-1], handle])) <= max_chars:
            out[-1].append(handle)
        else:
            out.append([handle])
    return out


_FROM = re.compile(r"\bfrom:(\w+)", re.IGNORECASE)


def handles_of(query: str) -> set[str]:
    """The accounts (lower case) a query asks for."""
    return {h.lower() for h in _FROM.findall(query)}
