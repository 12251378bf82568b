"""What storage keeps of items: reading them (timelines, search, reprint groups), the
lookups ``upsert_item`` decides on, and the writes that apply its decisions or a
reader's marks.

Part of the :class:`tidings.store.base.Storage` protocol, in its own module as
``ops`` is. ``UpsertReads`` and ``UpsertWrites`` are what storing a listing
needs (``tidings.pipeline.upsert``); ``ItemReads`` and ``ItemWrites`` what a
reader's pages and clients need.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from tidings.model import BodyState, Item, ItemBrief, ItemState, SearchHit
from tidings.store.writemodels import UpsertBatch


@dataclass(frozen=True, slots=True)
class ItemQuery:
    """A timeline query. Paging is keyset: pass the last item's ``(sort_time, id)``."""

    source_id: str | None = None
    author: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    unread_only: bool = False
    starred_only: bool = False
    include_backfill: bool = True
    editorial_only: bool = False
    body_state: BodyState | None = None
    before: tuple[datetime, int] | None = None
    limit: int = 50
    #: only these sources (a folder's); None: any source
    source_ids: tuple[str, ...] | None = None
    #: only these items; None: any item
    ids: tuple[int, ...] | None = None
    min_id: int | None = None  # id > min_id
    max_id: int | None = None  # id < max_id
    #: "newest" (sort time descending), "oldest" (ascending), "id" or "id_desc"
    order: str = "newest"
    after: tuple[datetime, int] | None = None  # keyset for "oldest": (sort_time, id) >
    #: only items stored at or before this time (a client's "mark all read" is about
    #: what had arrived when it looked, whatever the items' publish dates)
    arrived_until: datetime | None = None
    #: only items read (a client's "read" stream, what it syncs read state from)
    read_only: bool = False


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """A parsed search (R-API-5). Terms match title or body; CJK included."""

    terms: tuple[str, ...] = ()  # each a word or a phrase, all must match
    excluded: tuple[str, ...] = ()
    title_terms: tuple[str, ...] = ()  # intitle:
    author: str | None = None
    source_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    ranked: bool = False  # False: newest first
    limit: int = 50
    before: tuple[datetime, int] | None = None


class ItemReads(Protocol):
    def get_item(self, item_id: int) -> Item: ...
    def get_item_by_key(self, key: str) -> Item: ...
    def list_items(self, query: ItemQuery) -> list[Item]:
        """The items ``query`` selects, newest first: ``(sort_time, id)`` descending."""
        ...

    def list_briefs(self, query: ItemQuery) -> list[ItemBrief]:
        """What ``list_items(query)`` returns, in the same order, as list rows.

        For pages that show a line per item: a backend reads only the columns of
        :class:`ItemBrief` (never bodies, summaries or raw JSON), so a page of
        rows costs about what an index walk costs, not what the text weighs.
        """
        ...

    def search(self, query: SearchQuery) -> list[SearchHit]:
        """Items matching ``query``, newest first or ranked, as list rows with snippets.

        A snippet is cut from the body (else the summary, else the title) around
        the first match; see ``tidings.store.textindex.snippet``.
        """
        ...

    def fingerprint_groups(self, fps: Sequence[str]) -> dict[str, list[ItemBrief]]:
        """The items sharing each of these title fingerprints, earliest first (R-DEDUP-8).

        Only groups of two or more items are returned: ``""`` (no fingerprint), and
        fingerprints that no item or a single item has, are left out (nothing to
        fold). Fingerprints match exactly; every committed write counts at once
        (no lag behind search indexing). Lists fold reprints with it, a page at a
        time: it must answer ~60 fingerprints from an index, not a scan, and read
        no rows for the many titles nobody reprinted.
        """
        ...


class ItemWrites(Protocol):
    """What a reader does to stored items: marks them, stars them, deletes them."""

    def set_read(self, item_ids: Sequence[int], read: bool) -> int:
        """Returns how many items changed; unknown ids are ignored."""
        ...

    def set_starred(self, item_ids: Sequence[int], starred: bool) -> int:
        """Returns how many items changed; unknown ids are ignored."""
        ...

    def delete_item(self, item_id: int, now: datetime) -> None:
        """Delete an item and leave a tombstone for its key, dated ``now`` (R-DEDUP-11)."""
        ...


class UpsertReads(Protocol):
    def lookup_items(self, keys: Sequence[str], bodies_for: Collection[str] | None = None
                     ) -> dict[str, ItemState]:
        """The stored state of each of ``keys`` that exists.

        ``bodies_for`` None returns every body; otherwise only the keys in it, and
        the items flagged ``lossy``, have their body (``body=None`` for the rest).
        Re-listings of known items mostly need no body, and bodies are most of the
        cost of a lookup; but a lossy item is compared by its text (R-DEDUP-6), so
        whoever decides on it needs the body whatever was listed.
        """
        ...

    def tombstoned(self, keys: Sequence[str]) -> set[str]: ...
    def lookup_listing(self, keys: Sequence[str], bodies_for: Collection[str] | None = None
                       ) -> tuple[dict[str, ItemState], set[str]]:
        """``lookup_items`` and ``tombstoned`` of the same keys, in one call.

        What deciding a listing needs; on a networked database each call is a round
        trip, and an unchanged re-listing asks nothing else (docs/benchmarks.md).
        """
        ...

    def known_urls(self, urls: Sequence[str]) -> set[str]:
        """Which of these normalized URLs are already stored as an item's url."""
        ...


class UpsertWrites(Protocol):
    def apply_upserts(self, batch: UpsertBatch) -> dict[str, int]:
        """Apply one batch; returns identity key -> item id for created items.

        A create whose key was stored meanwhile (another runner won the race)
        becomes a discovery of the stored item by the creating source, and one
        whose key is tombstoned is dropped: neither is in the result. A revision
        or discovery naming a missing item raises NotFoundError (nothing applied).
        Discoveries keep one row per (item, source) with first and last seen times.
        """
        ...
