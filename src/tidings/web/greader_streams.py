"""The Google Reader API's vocabulary: stream ids, item ids, continuations (R-API-3).

Google never documented the API; clients (Reeder, NetNewsWire, newsboat, Read
You) speak the dialect FeedHQ documented and FreshRSS and Miniflux serve:

* an item id has a long form, ``tag:google.com,2005:reader/item/`` + 16 hex
  digits, a bare hex form (16 digits, or starting with 0, or with a hex
  letter: clients send both, FreshRSS reads them so), and a short form, the
  same number in decimal (``itemRefs``);
* a stream is ``feed/<id>``, ``user/-/label/<folder>`` or
  ``user/-/state/com.google/<state>`` (``reading-list``, ``starred``, ``read``);
* ``c`` continues a listing where the last page ended. Here it is the keyset
  cursor of the last item (``<order><sort time µs>.<id>``), so paging over a
  growing archive never misses or repeats an item.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from tidings.app import ItemQuery
from tidings.app.paging import micros
from tidings.errors import ConfigError, NotFoundError
from tidings.model import Item, ItemBrief, Source

LONG_PREFIX = "tag:google.com,2005:reader/item/"
STATE = "user/-/state/com.google/"
READING_LIST = STATE + "reading-list"
STARRED = STATE + "starred"
READ = STATE + "read"
KEPT_UNREAD = STATE + "kept-unread"
LABEL = "user/-/label/"
_USER_PART = re.compile(r"^user/[^/]+/")
_CONTINUATION = re.compile(r"^([no])(-?\d{1,17})\.(\d{1,18})$")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MAX_ID = 2**63 - 1
_HEX_SHORT = re.compile(r"[0-9a-fA-F]{1,16}")


def long_id(item_id: int) -> str:
    return f"{LONG_PREFIX}{item_id:016x}"


def parse_item_id(value: str) -> int:
    """An item id in any of its spellings; ConfigError when it is none of them."""
    text = value.strip()
    try:
        if text.startswith(LONG_PREFIX):
            number = int(text.removeprefix(LONG_PREFIX), 16)
        elif _HEX_SHORT.fullmatch(text) and (
                len(text) == 16 or text[0] == "0" or not text.isdigit()):
            # hex: 16 characters (NetNewsWire sends i=0000000000000010 for item 16),
            # a leading zero or a hex letter, as FreshRSS reads them; a decimal id
            # from itemRefs never starts with 0 nor is 16 digits long below 10**15
            number = int(text, 16)
        elif re.fullmatch(r"-?\d{1,20}", text):
            number = int(text)
            if number < 0:  # a signed 64-bit spelling
                number += 2**64
        else:
            raise ValueError(text)
    except ValueError:
        raise ConfigError(f"not an item id: {value[:80]!r}") from None
    if not 0 < number <= _MAX_ID:
        raise ConfigError(f"not an item id: {value[:80]!r}")
    return number


def canonical(stream: str) -> str:
    """``user/1234/state/…`` and ``user/-/state/…`` are the same stream."""
    return _USER_PART.sub("user/-/", stream.strip(), count=1)


def stream_query(stream: str, sources: dict[str, Source]) -> ItemQuery:
    """The query of one stream id (isolated sources never in it); NotFoundError for a
    stream that does not exist. ``sources`` are the visible ones, by id."""
    s = canonical(stream)
    base = ItemQuery(editorial_only=True)
    if s in (READING_LIST, STATE + "fresh") or s == "":
        return base
    if s == STARRED:
        return replace(base, starred_only=True)
    if s == READ:  # Read You syncs read state from it
        return replace(base, read_only=True)
    if s.startswith("feed/"):
        return replace(base, source_id=feed_source(s, sources).id)
    if s.startswith(LABEL):
        name = s.removeprefix(LABEL)
        ids = tuple(sid for sid, src in sources.items() if src.folder == name)
        if not ids:
            raise NotFoundError(f"no folder {s.removeprefix(LABEL)!r}")
        return replace(base, source_ids=ids)
    raise NotFoundError(f"unknown stream {stream[:200]!r}")


def feed_source(stream: str, sources: dict[str, Source]) -> Source:
    """The source of a ``feed/…`` stream: by our id, or by its feed URL."""
    key = stream.removeprefix("feed/")
    found = sources.get(key) or next((s for s in sources.values() if s.url == key), None)
    if found is None:
        raise NotFoundError(f"no subscription {stream[:200]!r}")
    return found


def with_filters(query: ItemQuery, *, exclude: list[str], include: list[str],
                 newer_than: float | None, older_than: float | None, oldest_first: bool,
                 continuation: str | None, limit: int) -> ItemQuery:
    """Apply ``xt``, ``it``, ``ot``, ``nt``, ``r=o``, ``c`` and ``n`` to a stream's query."""
    q = replace(query, limit=limit, order="oldest" if oldest_first else "newest")
    excluded = {canonical(x) for x in exclude}
    included = {canonical(x) for x in include}
    if READ in excluded:
        q = replace(q, unread_only=True)
    if STARRED in included:
        q = replace(q, starred_only=True)
    if READ in included:
        q = replace(q, read_only=True)
    if newer_than is not None:
        q = replace(q, since=_from_seconds(newer_than))
    if older_than is not None:
        q = replace(q, until=_from_seconds(older_than))
    if continuation:
        order, when, item_id = parse_continuation(continuation)
        if order != ("o" if oldest_first else "n"):
            raise ConfigError("the continuation belongs to the other sort order")
        q = replace(q, after=(when, item_id)) if oldest_first else replace(
            q, before=(when, item_id))
    return q


def _from_seconds(value: float) -> datetime:
    try:
        return _EPOCH + timedelta(seconds=value)
    except OverflowError:
        raise ConfigError(f"time out of range: {value}") from None


def from_usec(value: str) -> datetime:
    """A ``ts`` parameter: microseconds since 1970 (a fraction of one is dropped)."""
    whole, _, fraction = value.strip().partition(".")
    if not whole.isdigit() or len(whole) > 18 or (fraction and not fraction.isdigit()):
        raise ConfigError(f"ts: microseconds since 1970, not {value[:40]!r}")
    try:
        return _EPOCH + timedelta(microseconds=int(whole))
    except OverflowError:
        raise ConfigError(f"ts out of range: {value}") from None


def continuation_of(item: Item | ItemBrief | tuple[int, datetime], oldest_first: bool) -> str:
    item_id, when = item if isinstance(item, tuple) else (item.id, _sort_time(item))
    return cursor(item_id, micros(when), oldest_first)


def cursor(item_id: int, sort_usec: int, oldest_first: bool) -> str:
    """The continuation after the item with this id and sort time (µs since 1970)."""
    return f"{'o' if oldest_first else 'n'}{sort_usec}.{item_id}"


def _sort_time(item: Item | ItemBrief) -> datetime:
    return item.published_at or item.discovered_at


def parse_continuation(value: str) -> tuple[str, datetime, int]:
    match = _CONTINUATION.fullmatch(value.strip())
    if not match:
        raise ConfigError(f"bad continuation {value[:60]!r} (pass the one a page gave)")
    try:
        when = _EPOCH + timedelta(microseconds=int(match.group(2)))
    except OverflowError:
        raise ConfigError(f"bad continuation {value[:60]!r}") from None
    return match.group(1), when, int(match.group(3))


def categories_of(item: Item | ItemBrief, folder: str | None) -> list[str]:
    return categories(folder, read=item.read, starred=item.starred)


def categories(folder: str | None, *, read: bool, starred: bool) -> list[str]:
    out = [READING_LIST]
    if folder:
        out.append(LABEL + folder)
    out.append(READ if read else STATE + "fresh")
    if starred:
        out.append(STARRED)
    return out
