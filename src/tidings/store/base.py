"""The Storage protocol: everything the rest of tidings may ask of a database.

Two implementations (SQLite by default, PostgreSQL for scale) pass one contract
test suite, so the semantics are written here, not left to either of them:

* every datetime in and out is timezone-aware UTC;
* missing sources or items raise :class:`tidings.errors.NotFoundError`;
* driver errors are wrapped in :class:`tidings.errors.StorageError`;
* writes are atomic per call: a call either happens whole or not at all, so a
  crash between two calls never leaves a half-written item;
* the protocol is synchronous; the SQLite implementation has one writer
  connection and per-thread reader connections, so readers are never blocked.

The *decisions* about items (create, revise, rediscover, ignore) are made by the
pipeline with the pure functions of ``tidings.identity``; storage only looks up
the state those decisions need and applies them.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from tidings.model import (
    BodyState,
    FetchRun,
    Item,
    ItemBrief,
    ItemState,
    RawResponse,
    RunCounts,
    SearchHit,
    Source,
)
from tidings.store.ops import OpsQueries

#: kept for readability in signatures: what lookup_items returns
StoredState = ItemState

# ----------------------------------------------------------------- write models


@dataclass(frozen=True, slots=True)
class ItemFields:
    """The content of an item as the pipeline wants it stored."""

    title: str
    url: str | None
    summary: str
    body: str | None
    body_state: BodyState
    published_at: datetime | None
    author: str = ""
    categories: tuple[str, ...] = ()
    images: tuple[str, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict)
    content_hash: str | None = None  # None: imported history without a comparable hash
    title_fp: str = ""


@dataclass(frozen=True, slots=True)
class NewItem:
    key: str
    source_id: str
    fields: ItemFields
    discovered_at: datetime
    backfill: bool


@dataclass(frozen=True, slots=True)
class Revision:
    """A new version of an existing item, from its owner (R-DEDUP-4)."""

    item_id: int
    fields: ItemFields
    counts_as_revision: bool = True  # False for a baseline hash (R-DEDUP-5)
    revised_at: datetime | None = None  # becomes updated_at and the version's time; None: now


@dataclass(frozen=True, slots=True)
class Discovery:
    """Source ``source_id`` listed item ``item_id`` (or the item being created) at ``seen_at``."""

    source_id: str
    seen_at: datetime
    item_id: int | None = None
    key: str | None = None  # when the item is created in the same batch


@dataclass(frozen=True, slots=True)
class UpsertBatch:
    creates: Sequence[NewItem] = ()
    revisions: Sequence[Revision] = ()
    discoveries: Sequence[Discovery] = ()


# ------------------------------------------------------------------ read models


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


@dataclass(frozen=True, slots=True)
class SourceStats:
    """Per-source figures for the sources listing and the health page."""

    source_id: str
    items_total: int
    items_per_day: tuple[int, ...]  # last 7 days, oldest first
    last_run: FetchRun | None


@dataclass(frozen=True, slots=True)
class ArchiveStats:
    sources_by_health: Mapping[str, int]
    items: int
    items_backfill: int
    items_unread: int
    raw_responses: int
    last_round_started: datetime | None
    last_round_sources: int
    last_round_ok: int
    last_round_new_items: int
    oldest_success_at: datetime | None


# --------------------------------------------------------------------- protocol


class Storage(OpsQueries, Protocol):
    """Storage as the rest of tidings sees it. See the module docstring."""

    # -- lifecycle
    def close(self) -> None: ...
    def transaction(self) -> AbstractContextManager[None]:
        """Group the calls this thread makes inside it into one transaction.

        They commit together or not at all; each call stays atomic by itself, so
        a caller that catches one call's error keeps the others; reads made
        inside it see its writes. Holds the one writer for its whole length:
        keep it short and never await inside it.
        """
        ...
    def backup(self, dest: Path) -> Path:
        """Write a consistent copy of the database to ``dest`` (never a file copy)."""
        ...

    # -- sources
    def add_source(self, source: Source) -> Source:
        """Insert a source; ConfigError if the id or URL is already taken."""
        ...

    def get_source(self, source_id: str) -> Source: ...
    def find_source_by_url(self, url: str) -> Source | None: ...
    def list_sources(self) -> list[Source]: ...
    def update_source(self, source_id: str, changes: Mapping[str, Any]) -> Source:
        """Set the named ``Source`` fields; unknown field names raise ConfigError."""
        ...

    def delete_source(self, source_id: str) -> None:
        """Delete a source and its runs; items it owns stay (with their source id)."""
        ...

    def claim_due_sources(
        self, now: datetime, limit: int, lease_until: datetime,
        only: Sequence[str] | None = None,
    ) -> list[Source]:
        """Atomically pick sources due at ``now`` (or those in ``only``, due or not).

        Longest-overdue first, higher priority first on ties and when more are due
        than ``limit``; muted sources are skipped. Each picked source's
        ``next_fetch_at`` is set to ``lease_until`` in the same transaction, so
        two runners can never pick one source twice (R-SCHED-1).
        """
        ...

    # -- fetch runs
    def start_run(self, source_id: str, started_at: datetime) -> int: ...
    def start_runs(self, runs: Sequence[tuple[str, datetime]]) -> list[int]:
        """Start several runs in one write (a round's sources that start together);
        their ids in order. An unknown source fails the whole call (NotFoundError)."""
        ...
    def finish_run(self, run_id: int, finished_at: datetime, counts: RunCounts) -> None: ...
    def list_runs(self, source_id: str | None = None, limit: int = 20) -> list[FetchRun]: ...
    def abandon_running(self, now: datetime) -> int:
        """Mark runs left ``running`` by a dead process as abandoned; returns how many."""
        ...

    # -- items: the primitives upsert_item is built on
    def lookup_items(self, keys: Sequence[str],
                     bodies_for: Collection[str] | None = None) -> dict[str, StoredState]:
        """The stored state of each of ``keys`` that exists.

        ``bodies_for`` None returns every body. A collection returns the body only for
        the keys in it and for items whose stored title, summary or body holds U+FFFD
        (the lossy comparison needs their text); any other state has ``body=None``.
        Re-listings of known items mostly need no body, and bodies are most of the
        cost of a lookup.
        """
        ...
    def tombstoned(self, keys: Sequence[str]) -> set[str]: ...
    def apply_upserts(self, batch: UpsertBatch) -> dict[str, int]:
        """Apply one batch atomically; returns identity key -> item id for created items.

        A create whose key was stored meanwhile (another runner won the race)
        becomes a discovery of the stored item by the creating source, and one
        whose key is tombstoned is dropped: neither is in the result. A revision
        or discovery naming a missing item raises NotFoundError (nothing applied).
        Discoveries keep one row per (item, source) with first and last seen times.
        """
        ...

    def known_urls(self, urls: Sequence[str]) -> set[str]:
        """Which of these normalized URLs are already stored as an item's url."""
        ...

    # -- items: reading and user state
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
    def set_read(self, item_ids: Sequence[int], read: bool) -> int: ...
    def set_starred(self, item_ids: Sequence[int], starred: bool) -> int: ...
    def delete_item(self, item_id: int) -> None:
        """Delete an item and leave a tombstone for its key (R-DEDUP-11)."""
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

    # -- search index
    def index_pending(self, limit: int = 5000) -> int:
        """Index up to ``limit`` items changed since last indexed; returns how many."""
        ...

    def unindexed_count(self) -> int: ...

    # -- raw archive (R-EXTRACT-5)
    def put_raw(self, raw: RawResponse) -> int: ...
    def iter_raw(
        self, source_id: str | None = None, since: datetime | None = None,
        item_key: str | None = None,
    ) -> Iterator[RawResponse]: ...
    def prune_raw(self, before: datetime) -> int: ...

    # -- figures
    def source_stats(self, source_id: str, now: datetime) -> SourceStats: ...
    def archive_stats(self) -> ArchiveStats: ...
