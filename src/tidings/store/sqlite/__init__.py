"""The SQLite implementation of the Storage protocol, assembled from per-domain mixins.

The same mixins make two classes: :class:`SqliteStorage`, where every call is a
transaction of its own (or a read on the calling thread's snapshot), and
:class:`SqliteUnit`, one explicit unit of work, where every call is a savepoint
of the unit's transaction and reads see what the unit wrote.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from tidings.errors import ReadOnlyError, StorageError
from tidings.store.sql.access import AccessMixin
from tidings.store.sql.crawl import CrawlMixin
from tidings.store.sql.raw import RawMixin
from tidings.store.sqlite._compat import CompatMixin
from tidings.store.sqlite._db import Database, Transaction, connect, is_read_only
from tidings.store.sqlite._find import SearchMixin
from tidings.store.sqlite._items import ItemsWriteMixin
from tidings.store.sqlite._ops import OpsMixin
from tidings.store.sqlite._reading import ItemsReadMixin
from tidings.store.sqlite._runs import RunsMixin
from tidings.store.sqlite._schema import MIGRATIONS, migrate
from tidings.store.sqlite._search import SearchIndexMixin, check_tokenizer
from tidings.store.sqlite._sources import SourcesMixin
from tidings.store.sqlite._spend import SpendMixin
from tidings.store.sqlite._stats import StatsMixin
from tidings.store.sqlite._stories import StoriesMixin

__all__ = ["SqliteStorage", "SqliteUnit"]


def _create_private(path: Path) -> None:
    """A new archive is readable by its owner only: it holds password hashes, session
    and token digests, and what was read. SQLite gives its WAL and shared-memory
    files the same permissions as the database file."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def _make_private(path: Path) -> None:
    """An existing archive (and a WAL left beside it) that group or others may read is
    made private too, for the same reason as a new one. Only the file's owner may
    change its mode; anyone else opens it as it is."""
    for name in (path.name, f"{path.name}-wal", f"{path.name}-shm"):
        file = path.with_name(name)
        with contextlib.suppress(FileNotFoundError, PermissionError):
            if file.stat().st_mode & 0o077:
                file.chmod(0o600)


def _check_current(path: Path) -> None:
    """A read-only archive cannot be migrated: it must be of this tidings' schema."""
    conn = connect(path, read_only=True)
    try:
        (version,) = conn.execute("PRAGMA user_version").fetchone()
    finally:
        conn.close()
    if version != len(MIGRATIONS):
        raise ReadOnlyError(f"the archive in {path.parent} needs a schema upgrade "
                            f"({version} -> {len(MIGRATIONS)}), but its directory is "
                            "read-only; open it once where it can be written")


class _Everything(
    SourcesMixin, RunsMixin, ItemsWriteMixin, ItemsReadMixin, SearchIndexMixin, SearchMixin,
    RawMixin, StatsMixin, OpsMixin, AccessMixin, SpendMixin, CrawlMixin, StoriesMixin, CompatMixin,
):
    """Every read and write, on whatever connection the subclass provides."""


class SqliteUnit(_Everything):
    """One open transaction of :class:`SqliteStorage` (see ``Storage.write``)."""

    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    def _read(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._tx.read()

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._tx.savepoint()

    @contextmanager
    def nested(self) -> Iterator[SqliteUnit]:
        with self._tx.savepoint():
            yield self


class SqliteStorage(_Everything):
    """One SQLite file; see tidings.store.base for the contract."""

    backup_suffix = ".sqlite3"

    def __init__(self, path: Path) -> None:
        read_only = path.exists() and is_read_only(path)
        try:
            if read_only:  # reads work; every write says the directory is read-only
                _check_current(path)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                _create_private(path)
                _make_private(path)
                setup = connect(path)
                try:
                    migrate(setup)
                    check_tokenizer(setup)
                finally:
                    setup.close()
            self._db = Database(path, read_only=read_only)
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open database {path}: {exc}") from exc
        self.path = path

    def _read(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._db.read()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._db.transaction() as tx:
            yield tx.conn

    @contextmanager
    def write(self) -> Iterator[SqliteUnit]:
        with self._db.transaction() as tx:
            yield SqliteUnit(tx)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> SqliteStorage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def backup(self, directory: Path, stem: str) -> Path:
        """Copy through SQLite's online backup API in one step: one consistent snapshot,
        written next to the target and renamed into place, so the target is never half
        a file."""
        directory.mkdir(parents=True, exist_ok=True)
        dest = directory / f"{stem}{self.backup_suffix}"
        partial = dest.with_name(dest.name + ".partial")
        partial.unlink(missing_ok=True)
        _create_private(partial)  # a copy holds the same secrets as the archive
        try:
            source = sqlite3.connect(self.path)
            target = sqlite3.connect(partial)
            try:
                source.backup(target, pages=-1)
            finally:
                target.close()
                source.close()
        except sqlite3.Error as exc:
            partial.unlink(missing_ok=True)
            raise StorageError(f"backup to {dest} failed: {exc}") from exc
        partial.replace(dest)
        return dest
