"""The SQLite implementation of the Storage protocol, assembled from per-domain mixins."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tidings.errors import StorageError
from tidings.store.sqlite._db import Database, connect
from tidings.store.sqlite._find import SearchMixin
from tidings.store.sqlite._items import ItemsWriteMixin
from tidings.store.sqlite._ops import OpsMixin
from tidings.store.sqlite._raw import RawMixin
from tidings.store.sqlite._reading import ItemsReadMixin
from tidings.store.sqlite._runs import RunsMixin
from tidings.store.sqlite._schema import migrate
from tidings.store.sqlite._search import SearchIndexMixin, check_tokenizer
from tidings.store.sqlite._sources import SourcesMixin
from tidings.store.sqlite._stats import StatsMixin

__all__ = ["SqliteStorage"]


class SqliteStorage(
    SourcesMixin, RunsMixin, ItemsWriteMixin, ItemsReadMixin, SearchIndexMixin, SearchMixin,
    RawMixin, StatsMixin, OpsMixin,
):
    """One SQLite file; see tidings.store.base for the contract."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            setup = connect(path)
            try:
                migrate(setup)
                check_tokenizer(setup)
            finally:
                setup.close()
            self._db = Database(path)
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open database {path}: {exc}") from exc
        self.path = path

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._db.transaction():
            yield

    def __enter__(self) -> SqliteStorage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def backup(self, dest: Path) -> Path:
        """Copy through SQLite's online backup API in one step: one consistent snapshot,
        written next to ``dest`` and renamed into place, so ``dest`` is never half a file."""
        dest.parent.mkdir(parents=True, exist_ok=True)
        partial = dest.with_name(dest.name + ".partial")
        partial.unlink(missing_ok=True)
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
