"""Connections: one writer guarded by a lock, one reader per thread.

SQLite in WAL mode lets readers work on a snapshot while one writer commits, so
the web layer never waits for collection. Every public method of the storage
runs in exactly one transaction (or one savepoint of an explicit unit), which is
what makes calls atomic.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from tidings.errors import ReadOnlyError, StorageError, TransactionLostError
from tidings.store.sql._base import SQLITE, Connected

_PRAGMAS = (
    "PRAGMA journal_mode = WAL",
    "PRAGMA busy_timeout = 10000",
    "PRAGMA foreign_keys = ON",
    "PRAGMA synchronous = NORMAL",
    "PRAGMA cache_size = -65536",
    "PRAGMA temp_store = MEMORY",
    # checkpoint every ~64 MiB of WAL instead of 4 MiB: index pages dirtied by many
    # commits are then copied to the database once, not once per commit
    "PRAGMA wal_autocheckpoint = 16384",
    "PRAGMA mmap_size = 268435456",
)
#: The writer reads mostly what it is about to change, and a collection round
#: plus its indexing touch most of a young database: through a map those pages
#: all count in the process's resident memory. Without the map and with half the
#: page cache the writer is as fast and the process far smaller (figures in
#: docs/storage.md). Readers keep the map: it speeds their look-ups.
_WRITER_PRAGMAS = (
    "PRAGMA mmap_size = 0",
    "PRAGMA cache_size = -32768",
)


def connect(path: Path, *, read_only: bool = False) -> sqlite3.Connection:
    if read_only:
        return _connect_read_only(path)
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False,
                           timeout=10.0)
    for pragma in _PRAGMAS:
        conn.execute(pragma)
    return conn


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that never writes. A WAL database needs its shared-memory file
    even to read; where the directory cannot hold one, the file is opened as
    immutable (nobody can be writing it: its directory is read-only)."""
    for flags in ("mode=ro", "mode=ro&immutable=1"):
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?{flags}", uri=True,
                               isolation_level=None, check_same_thread=False, timeout=10.0)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError:
            conn.close()
            continue
        conn.execute("PRAGMA query_only = ON")
        return conn
    raise sqlite3.OperationalError(f"{path} cannot be read")


def is_read_only(path: Path) -> bool:
    """Whether this process may not write the archive (a read-only directory or
    file system, or a file it may only read)."""
    if path.exists() and not os.access(path, os.W_OK):
        return True
    return path.parent.exists() and not os.access(path.parent, os.W_OK)


class Database:
    """The connections of one SQLite file: one writer behind a lock, a reader per thread."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        self._writer = connect(path, read_only=read_only)
        for pragma in () if read_only else _WRITER_PRAGMAS:
            self._writer.execute(pragma)
        self._write_lock = threading.Lock()
        self._writing: int | None = None  # the thread holding the write lock
        self._local = threading.local()  # each thread's reader connection
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._closed = False

    def _check_not_writing(self) -> None:
        """A thread that waits for the write lock it holds waits forever: a write step
        that calls the storage instead of its unit would hang the writer thread."""
        if self._writing == threading.get_ident():
            raise StorageError("a write inside a write: use the unit the step was given "
                               "(or unit.nested()), not the storage")

    def close(self) -> None:
        self._check_not_writing()
        with self._write_lock, self._readers_lock:
            if self._closed:
                return
            self._closed = True
            for conn in self._readers:
                conn.close()
            self._readers.clear()
            # statistics are a nicety: another process holding the lock must not fail close()
            with contextlib.suppress(sqlite3.OperationalError):
                self._writer.execute("PRAGMA optimize")
            self._writer.close()

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError(f"storage {self.path} is closed")

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """One write transaction (BEGIN IMMEDIATE), committed whole or rolled back.

        Writers take turns on a Python lock rather than racing for SQLite's file
        lock and retrying on ``SQLITE_BUSY``: write latency stays predictable.
        """
        self._check_not_writing()
        if self.read_only:
            raise ReadOnlyError(
                f"the data directory {self.path.parent} is read-only: this command writes "
                "to the archive (reading commands such as items, search, sources, stats "
                "and export work)")
        with self._write_lock:
            self._check_open()
            conn = self._writer
            self._writing = threading.get_ident()
            try:
                conn.execute("BEGIN IMMEDIATE")
                yield Transaction(conn)
                conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise StorageError(f"database write failed: {exc}") from exc
                raise
            finally:
                self._writing = None

    def _reader(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            with self._readers_lock:
                self._check_open()
                conn = connect(self.path, read_only=self.read_only)
                conn.execute("PRAGMA query_only = ON")
                self._readers.append(conn)
            self._local.conn = conn
        return conn

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction on this thread's connection: one consistent snapshot."""
        self._check_open()
        conn = self._reader()
        try:
            conn.execute("BEGIN")
            yield conn
        except sqlite3.Error as exc:
            raise StorageError(f"database read failed: {exc}") from exc
        finally:
            if conn.in_transaction:
                conn.execute("COMMIT")


class Transaction:
    """The writer connection inside one open transaction, and its savepoints."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._depth = 0

    @contextmanager
    def savepoint(self) -> Iterator[sqlite3.Connection]:
        """A part of the transaction that is rolled back alone when its block raises.

        Some errors (disk full, I/O error, out of memory, an interrupt) make SQLite
        roll back the whole transaction instead. Then there is no savepoint to go
        back to, and a new ``SAVEPOINT`` would quietly begin a transaction of its
        own that its ``RELEASE`` commits: so that is :class:`TransactionLostError`,
        raised here and by every later savepoint of this transaction.
        """
        conn = self.conn
        if not conn.in_transaction:
            raise TransactionLostError("an earlier write failed and SQLite rolled back "
                                       "the whole transaction; nothing more may be written")
        name = f"p{self._depth}"
        self._depth += 1
        try:
            conn.execute(f"SAVEPOINT {name}")
            try:
                yield conn
            except BaseException as exc:
                if conn.in_transaction:
                    conn.execute(f"ROLLBACK TO {name}")
                    conn.execute(f"RELEASE {name}")
                elif isinstance(exc, Exception) and not isinstance(exc, TransactionLostError):
                    raise _lost(exc) from exc
                raise
            conn.execute(f"RELEASE {name}")
        except sqlite3.Error as exc:
            if not conn.in_transaction:
                raise _lost(exc) from exc
            raise StorageError(f"database write failed: {exc}") from exc
        finally:
            self._depth -= 1

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """Reads inside the transaction: they see what it wrote so far."""
        try:
            yield self.conn
        except sqlite3.Error as exc:
            raise StorageError(f"database read failed: {exc}") from exc


def _lost(exc: Exception) -> TransactionLostError:
    return TransactionLostError(
        f"database write failed and SQLite rolled back the whole transaction: {exc}")


class Access(Connected):
    """How a mixin reaches a connection; the storage and its units each say how
    (``Connected``)."""

    dialect = SQLITE

    def _read(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError
