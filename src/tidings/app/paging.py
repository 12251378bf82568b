"""Keyset paging cursors, as the API, the web pages and the CLI hand them out.

A cursor is ``<unix microseconds>.<item id>``: the sort time (publish time, else
discovery time) and id of the last item of a page. The next page starts just
after it, so a page costs the same deep in the archive as at the top (never
OFFSET), and items added meanwhile never shift what comes next.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from tidings.dates import EPOCH
from tidings.errors import ConfigError
from tidings.model import Item, ItemBrief

_CURSOR = re.compile(r"^(-?\d{1,17})\.(\d{1,18})$")


def sort_time(item: Item | ItemBrief) -> datetime:
    """What storage sorts by: the publish time, else the discovery time."""
    return item.published_at or item.discovered_at


def micros(when: datetime) -> int:
    return (when - EPOCH) // timedelta(microseconds=1)


def encode_cursor(item: Item | ItemBrief) -> str:
    return f"{micros(sort_time(item))}.{item.id}"


def decode_cursor(value: str | None) -> tuple[datetime, int] | None:
    """``<unix microseconds>.<item id>``; anything else is the caller's error."""
    if not value:
        return None
    match = _CURSOR.match(value.strip())
    if not match:
        raise ConfigError(f"bad paging cursor {value!r} (use the cursor a page gave)")
    try:
        when = EPOCH + timedelta(microseconds=int(match.group(1)))
    except OverflowError as exc:
        raise ConfigError(f"bad paging cursor {value!r}") from exc
    return when, int(match.group(2))
