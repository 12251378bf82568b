"""The Storage protocol: everything the rest of tidings may ask of a database.

Two implementations (SQLite by default, PostgreSQL for scale) pass one contract
test suite, so the semantics are written here, not left to either of them:

* every datetime in and out is timezone-aware UTC, and every time a write
  records is passed in by the caller (storage never reads the clock), so a
  test or a replay on a fake clock stores exactly the times it decided;
* missing sources or items raise :class:`tidings.errors.NotFoundError`;
* driver errors are wrapped in :class:`tidings.errors.StorageError`;
* every call is atomic: it happens whole or not at all;
* several calls become one transaction only through an explicit unit of work,
  ``with storage.write() as unit: ...``: they commit together or not at all,
  reads made through the unit see its writes, and a call that fails inside it
  undoes only itself (the caller may catch the error and go on). A unit holds
  the one writer for its whole length: keep it short, never await inside it.
  ``unit.nested()`` is an all-or-nothing part of a unit (a savepoint).

The protocol is synchronous. Asynchronous code never writes through it
directly: it hands write steps to ``tidings.store.writer.Writer``, which runs
them on one thread of its own, so no event loop ever waits for the writer.

The *decisions* about items (create, revise, rediscover, ignore) are made by the
pipeline with the pure functions of ``tidings.identity``; storage only looks up
the state those decisions need and applies them.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

from tidings.model import (
    BodyState,
    FetchRun,
    Item,
    ItemBrief,
    ItemState,
    PaidCall,
    ProviderTrouble,
    RawResponse,
    RunCounts,
    SearchHit,
    Source,
    SourceKind,
    Spend,
)
from tidings.store.compat import CompatReads, CompatWrites
from tidings.store.crawl import CrawlReads, CrawlWrites
from tidings.store.navigation import NavigationReads, NavigationWrites
from tidings.store.ops import OpsReads, OpsWrites
from tidings.store.searchindex import SearchIndexReads, SearchIndexWrites
from tidings.store.stories import StoriesReads, StoriesWrites
from tidings.store.users import UserReads, UserWrites
from tidings.store.writemodels import UNSET as UNSET  # noqa: PLC0414
from tidings.store.writemodels import Discovery as Discovery  # noqa: PLC0414

# the write models live in store/writemodels.py; importers keep naming them here
from tidings.store.writemodels import ItemFields as ItemFields  # noqa: PLC0414
from tidings.store.writemodels import NewItem as NewItem  # noqa: PLC0414
from tidings.store.writemodels import Revision as Revision  # noqa: PLC0414
from tidings.store.writemodels import SourceUpdate as SourceUpdate  # noqa: PLC0414
from tidings.store.writemodels import Unset as Unset  # noqa: PLC0414
from tidings.store.writemodels import UpsertBatch as UpsertBatch  # noqa: PLC0414

#: the kind of sources that are pushed to and never fetched, which claims of due
#: sources skip: storage sits below the readers that declare kinds, so it keeps this
#: one name itself (tests/test_kind_seams.py checks it is the readers' pushed kind)
PUSHED_KIND = SourceKind("external")

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


# -------------------------------------------------------------------- protocols


class Reads(OpsReads, UserReads, CrawlReads, StoriesReads, CompatReads, NavigationReads,
            SearchIndexReads, Protocol):
    """Everything storage answers without writing. What asynchronous code holds."""

    # -- sources
    def get_source(self, source_id: str) -> Source: ...
    def find_source_by_url(self, url: str) -> Source | None: ...
    def list_sources(self) -> list[Source]: ...
    def list_folders(self) -> list[str]:
        """Every folder, by name (case-insensitive)."""
        ...

    # -- fetch runs
    def list_runs(self, source_id: str | None = None, limit: int = 20) -> list[FetchRun]: ...

    # -- items: what upsert_item decides on
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

    # -- items: reading
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

    # -- raw archive (R-EXTRACT-5)
    def iter_raw(
        self, source_id: str | None = None, since: datetime | None = None,
        item_key: str | None = None,
    ) -> Iterator[RawResponse]:
        """Oldest first."""
        ...

    # -- figures
    def source_stats(self, source_id: str, now: datetime) -> SourceStats: ...
    def archive_stats(self) -> ArchiveStats: ...

    # -- the spend ledger of paid APIs (R-SCHED-3)
    def spend_since(self, since: datetime) -> dict[str, Spend]:
        """Calls and cost per provider since ``since`` (providers with none are absent)."""
        ...

    def spend_after(self, since: datetime, after_id: int) -> tuple[dict[str, Spend], int]:
        """Calls and cost per provider since ``since`` among the calls recorded after
        the one numbered ``after_id``, and the number of the last one counted: a
        running day's total grows by the new calls only."""
        ...

    def paid_calls(self, provider: str | None = None, since: datetime | None = None,
                   limit: int = 100) -> list[PaidCall]:
        """Recorded calls, newest first."""
        ...

    def paid_troubles(self) -> dict[str, ProviderTrouble]:
        """The providers in trouble, by name (until a call to them succeeds again)."""
        ...

    # -- localized images kept in the archive (cluster mode)
    def get_media(self, name: str) -> bytes | None:
        """The image stored under ``name`` (``<h[:2]>/<h[2:4]>/<h>.<ext>``), or None."""
        ...


class Writes(OpsWrites, UserWrites, CrawlWrites, StoriesWrites, CompatWrites, NavigationWrites,
             SearchIndexWrites, Protocol):
    """Every write; each call atomic by itself."""

    # -- sources
    def add_source(self, source: Source) -> Source:
        """Insert a source (its ``created_at`` set); ConfigError if the id or URL is taken."""
        ...

    def update_source(self, source_id: str, update: SourceUpdate) -> Source:
        """Set the fields ``update`` names; returns the source as stored after it."""
        ...

    def change_source(self, source_id: str, update: SourceUpdate) -> None:
        """:meth:`update_source` without reading the source back (the end of every run)."""
        ...

    def delete_source(self, source_id: str) -> None:
        """Delete a source and its runs; items it owns stay (with their source id)."""
        ...

    def add_folder(self, name: str) -> None:
        """Create a folder (nothing happens if it exists). A source's ``folder`` set by
        add_source or update_source creates its folder too."""
        ...

    def rename_folder(self, old: str, new: str) -> int:
        """Rename a folder, or merge it into ``new`` if that exists; returns how many
        sources it holds now. NotFoundError if ``old`` does not exist."""
        ...

    def delete_folder(self, name: str) -> int:
        """Delete a folder; its sources are left in no folder. Returns how many."""
        ...

    def claim_due_sources(
        self, now: datetime, limit: int, lease_until: datetime,
        only: Sequence[str] | None = None, holder: str = "",
    ) -> list[Source]:
        """Atomically pick sources due at ``now`` (or those in ``only``, due or not).

        A non-empty ``holder`` names the claiming process in a lease record, so that
        once that process is known dead ``take_over_leases`` frees its sources at once.

        Longest-overdue first, higher priority first on ties and when more are due
        than ``limit``; muted sources and ``external`` ones (nothing to fetch) are
        skipped. Each picked source's ``next_fetch_at`` is set to ``lease_until`` in
        the same transaction, so two runners can never pick one source twice
        (R-SCHED-1).
        """
        ...

    # -- fetch runs
    def start_run(self, source_id: str, started_at: datetime) -> int: ...
    def start_runs(self, runs: Sequence[tuple[str, datetime]]) -> list[int]:
        """Start runs (source id, start time); their ids in order. An unknown source
        fails the whole call (NotFoundError)."""
        ...

    def finish_run(self, run_id: int, finished_at: datetime, counts: RunCounts) -> None: ...

    # -- items: the primitives upsert_item is built on
    def apply_upserts(self, batch: UpsertBatch) -> dict[str, int]:
        """Apply one batch; returns identity key -> item id for created items.

        A create whose key was stored meanwhile (another runner won the race)
        becomes a discovery of the stored item by the creating source, and one
        whose key is tombstoned is dropped: neither is in the result. A revision
        or discovery naming a missing item raises NotFoundError (nothing applied).
        Discoveries keep one row per (item, source) with first and last seen times.
        """
        ...

    def set_read(self, item_ids: Sequence[int], read: bool) -> int:
        """Returns how many items changed; unknown ids are ignored."""
        ...

    def set_starred(self, item_ids: Sequence[int], starred: bool) -> int:
        """Returns how many items changed; unknown ids are ignored."""
        ...

    def delete_item(self, item_id: int, now: datetime) -> None:
        """Delete an item and leave a tombstone for its key, dated ``now`` (R-DEDUP-11)."""
        ...

    # -- the spend ledger
    def record_paid_call(self, call: PaidCall) -> None:
        """Keep one paid call (its time, purpose, sources, status and cost)."""
        ...

    def set_paid_trouble(self, trouble: ProviderTrouble) -> None:
        """Keep a provider's trouble, replacing the one it had."""
        ...

    def clear_paid_trouble(self, provider: str) -> None:
        """A call to ``provider`` succeeded: its trouble, if any, is over."""
        ...

    def put_media(self, name: str, body: bytes, at: datetime) -> None:
        """Keep an image under its content address (a name stored already: no-op)."""
        ...

    # -- raw archive (R-EXTRACT-5)
    def put_raw(self, raw: RawResponse) -> int: ...
    def prune_raw(self, before: datetime) -> int:
        """Drop raw responses older than ``before``, except the newest page of each
        stored item (the one its current body came from)."""
        ...


class Unit(Reads, Writes, Protocol):
    """One transaction: see the module docstring."""

    def nested(self) -> AbstractContextManager[Unit]:
        """A part of this unit that is undone alone when its block raises."""
        ...


class Storage(Reads, Writes, Protocol):
    """Storage as the rest of tidings sees it. See the module docstring."""

    def write(self) -> AbstractContextManager[Unit]:
        """Begin a unit of work; it commits when the block ends, or rolls back on error."""
        ...

    def close(self) -> None: ...

    def backup(self, directory: Path, stem: str) -> Path:
        """Write a consistent copy of the archive into ``directory`` as ``stem`` plus the
        backend's own extension (never a file copy of a live database); returns it."""
        ...

    @property
    def writers(self) -> int:
        """Write transactions this storage runs side by side to good effect: a process
        gives it at most this many writer threads (``tidings.store.writer``). SQLite
        has one writer per file, so 1; PostgreSQL as many as its pool lends out."""
        ...

    @property
    def backup_suffix(self) -> str:
        """The extension :meth:`backup` gives its files (``.sqlite3``, ``.dump``...)."""
        ...
