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

``Reads`` and ``Writes`` only compose one protocol per domain, each in its own
module of ``tidings.store`` (``sources``, ``runs``, ``items``, ``stats``, ``spend``,
``archive``, ``ops``, ...): a layer asks for the narrowest one it uses, and a
write step handed to the writer may take a narrow ``...Writes`` since every
``Unit`` is one (docs/architecture.md, "Narrow protocols").

The *decisions* about items (create, revise, rediscover, ignore) are made by the
pipeline with the pure functions of ``tidings.identity``; storage only looks up
the state those decisions need and applies them.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from tidings.model import SourceKind
from tidings.store.archive import MediaReads, MediaWrites, RawReads, RawWrites
from tidings.store.compat import CompatReads, CompatWrites
from tidings.store.crawl import CrawlReads, CrawlWrites

# the read models live beside their protocols; importers keep naming them here
from tidings.store.items import ItemQuery as ItemQuery  # noqa: PLC0414
from tidings.store.items import ItemReads, ItemWrites, UpsertReads, UpsertWrites
from tidings.store.items import SearchQuery as SearchQuery  # noqa: PLC0414
from tidings.store.navigation import NavigationReads, NavigationWrites
from tidings.store.ops import OpsReads, OpsWrites
from tidings.store.runs import RunReads, RunWrites
from tidings.store.searchindex import SearchIndexReads, SearchIndexWrites
from tidings.store.sources import SourceReads, SourceWrites
from tidings.store.spend import SpendReads, SpendWrites
from tidings.store.stats import ArchiveStats as ArchiveStats  # noqa: PLC0414
from tidings.store.stats import SourceStats as SourceStats  # noqa: PLC0414
from tidings.store.stats import StatsReads
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

# -------------------------------------------------------------------- protocols


class Reads(SourceReads, RunReads, ItemReads, UpsertReads, StatsReads, SpendReads, RawReads,
            MediaReads, OpsReads, UserReads, CrawlReads, StoriesReads, CompatReads,
            NavigationReads, SearchIndexReads, Protocol):
    """Everything storage answers without writing. What asynchronous code holds."""


class Writes(SourceWrites, RunWrites, ItemWrites, UpsertWrites, SpendWrites, RawWrites,
             MediaWrites, OpsWrites, UserWrites, CrawlWrites, StoriesWrites, CompatWrites,
             NavigationWrites, SearchIndexWrites, Protocol):
    """Every write; each call atomic by itself."""


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
