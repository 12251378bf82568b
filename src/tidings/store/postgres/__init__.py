"""The PostgreSQL implementation of the Storage protocol (R-STORE-2), for clusters.

Assembled from per-domain mixins as ``tidings.store.sqlite`` is: the methods whose
SQL is the same on both backends come from ``tidings.store.sql`` (users, raw
archive, crawler, reading items...), the rest from this package's modules, named
like SQLite's (``_sources``, ``_runs``, ``_items``, ``_search``, ``_find``,
``_stats``, ``_ops``, ``_stories``, ``_compat``), which take their column lists,
row converters and shared methods from the core too. The same mixins make
:class:`PostgresStorage`, where every call is a transaction on a pooled
connection, and :class:`PostgresUnit`, one explicit unit of work on one
connection, where every call is a savepoint.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from tidings.store.base import UpsertBatch
from tidings.store.postgres._compat import CompatMixin
from tidings.store.postgres._db import Conn, Database, Transaction, connect, describe
from tidings.store.postgres._find import SearchMixin
from tidings.store.postgres._inuse import hold_shared
from tidings.store.postgres._items import ItemsWriteMixin
from tidings.store.postgres._ops import OpsMixin
from tidings.store.postgres._queue import (
    QueueStatus,
    ensure_queue_schema,
    queue_connector,
    queue_status,
)
from tidings.store.postgres._runs import RunsMixin
from tidings.store.postgres._schema import migrate
from tidings.store.postgres._search import SearchIndexMixin
from tidings.store.postgres._sources import SourcesMixin
from tidings.store.postgres._stats import StatsMixin
from tidings.store.postgres._stories import StoriesMixin
from tidings.store.sql.crawl import CrawlMixin
from tidings.store.sql.media import MediaMixin
from tidings.store.sql.navigation import NavigationMixin
from tidings.store.sql.raw import RawMixin
from tidings.store.sql.reading import ItemsReadMixin
from tidings.store.sql.spend import SpendMixin
from tidings.store.sql.users import UsersMixin

__all__ = ["PostgresStorage", "PostgresUnit", "QueueStatus", "describe",
           "ensure_queue_schema", "is_postgres_url", "queue_connector", "queue_status"]


def is_postgres_url(url: str) -> bool:
    return url.strip().startswith(("postgresql://", "postgres://"))

class _Everything(
    SourcesMixin, RunsMixin, ItemsWriteMixin, ItemsReadMixin, SearchIndexMixin, SearchMixin,
    RawMixin, StatsMixin, OpsMixin, UsersMixin, SpendMixin, StoriesMixin, CrawlMixin, CompatMixin,
    MediaMixin,
    NavigationMixin,
):
    """Every read and write, on whatever connection the subclass provides."""


class PostgresUnit(_Everything):
    """One open transaction of :class:`PostgresStorage` (see ``Storage.write``)."""

    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    def _read(self) -> AbstractContextManager[Conn]:
        return self._tx.read()

    def _write(self) -> AbstractContextManager[Conn]:
        return self._tx.savepoint()

    @contextmanager
    def nested(self) -> Iterator[PostgresUnit]:
        with self._tx.savepoint():
            yield self


class PostgresStorage(_Everything):
    """One PostgreSQL database; see tidings.store.base for the contract.

    Opening it checks the connection (a wrong URL, host or password is one
    StorageError naming the server, never a hang) and applies the migrations.
    """

    backup_suffix = ".sqlite3"

    def __init__(self, url: str, pool_size: int = 12) -> None:
        setup = connect(url)
        try:
            migrate(setup)
        finally:
            setup.close()
        self.url = url
        #: this process's hold on the archive (``_inuse``): restore and migrate ask
        self._holder = hold_shared(url)
        try:
            self._db = Database(url, max_size=pool_size)
        except BaseException:
            if self._holder is not None:
                self._holder.close()
            raise
        #: transactions run side by side; each writer holds a pooled connection while
        #: it writes, and readers keep a few (at most 7 writers: more did not pay)
        self.writers = max(1, min(7, pool_size - 5))

    def _read(self) -> AbstractContextManager[Conn]:
        return self._db.read()

    @contextmanager
    def _write(self) -> Iterator[Conn]:
        with self._db.transaction() as tx:
            yield tx.conn

    @contextmanager
    def write(self) -> Iterator[PostgresUnit]:
        with self._db.transaction() as tx:
            yield PostgresUnit(tx)

    def apply_upserts(self, batch: UpsertBatch) -> dict[str, int]:
        """Run again whole when PostgreSQL broke a deadlock with this call (many
        workers upserting overlapping batches)."""
        return self._db.retrying(lambda: super(PostgresStorage, self).apply_upserts(batch))

    def close(self) -> None:
        self._db.close()
        if self._holder is not None:
            self._holder.close()
            self._holder = None

    def __enter__(self) -> PostgresStorage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def backup(self, directory: Path, stem: str) -> Path:
        """A consistent copy as a SQLite archive (one snapshot of the database, read in
        one REPEATABLE READ transaction): portable, restorable by ``tidings migrate``,
        and readable by the same tools as an embedded archive's backups."""
        from tidings.store.postgres._transfer import backup_to_sqlite

        directory.mkdir(parents=True, exist_ok=True)
        return backup_to_sqlite(self.url, directory / f"{stem}{self.backup_suffix}")
