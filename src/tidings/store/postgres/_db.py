"""Connections: a pool of psycopg 3 connections, one transaction per storage call.

PostgreSQL lets many writers work at once, so unlike SQLite there is no writer
lock: every call takes a connection from the pool for one transaction, and an
explicit unit holds one connection for its whole length (each call in it a
savepoint). Statements are written with ``?`` placeholders, as the SQLite ones
are, so that both backends share their parameter builders (``timeline_filters``
and friends); :class:`Conn` turns them into psycopg's ``%s`` once per statement
text. Values are bound server-side (psycopg 3's default) and statements run
five times on a connection are prepared.
"""

from __future__ import annotations

import select
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from functools import lru_cache
from typing import Any, TypeVar
from urllib.parse import urlsplit

import psycopg
import psycopg_pool
from psycopg import errors as pgerrors

from tidings.errors import StorageError
from tidings.store.sql._base import POSTGRESQL, Connected

T = TypeVar("T")

#: SQLSTATEs after which a whole storage call may simply run again
_RETRYABLE = (pgerrors.DeadlockDetected, pgerrors.SerializationFailure)
_ATTEMPTS = 5


@lru_cache(maxsize=1024)
def _pg(sql: str, mark: str = "%s") -> str:
    return sql.replace("%", "%%").replace("?", mark)


class Conn:
    """A psycopg connection that takes the ``?`` placeholders of tidings' SQL."""

    __slots__ = ("raw",)

    def __init__(self, raw: psycopg.Connection[Any]) -> None:
        self.raw = raw

    def execute(self, sql: str, params: Sequence[Any] = ()) -> psycopg.Cursor[Any]:
        return self.raw.execute(_pg(sql), tuple(params))

    def execute_unprepared(self, sql: str, params: Sequence[Any] = ()) -> psycopg.Cursor[Any]:
        """``execute`` planned for its values every time, never prepared: after five
        custom plans PostgreSQL may switch a prepared statement to its generic plan,
        which cannot see how common the words of a ``tsquery`` parameter are (a
        search then walked the sort index reading every document: 7 s a query at
        1,000,000 items, docs/benchmarks.md)."""
        return self.raw.execute(_pg(sql), tuple(params), prepare=False)

    def execute_binary(self, sql: str, params: Sequence[Any]) -> psycopg.Cursor[Any]:
        """``execute`` with the values sent in binary: arrays of long text (a batch as
        one array per column) are dumped ~30x faster than as array literals, which
        psycopg escapes element by element in Python."""
        return self.raw.execute(_pg(sql, "%b"), tuple(params))

    def row(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...]:
        """The one row a statement returns (an aggregate, a RETURNING of one row)."""
        found = self.execute(sql, params).fetchone()
        if found is None:
            raise StorageError(f"no row from {sql.split(maxsplit=1)[0]} statement")
        return tuple(found)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        """Run one statement per row (pipelined by psycopg); returns rows changed."""
        if not rows:
            return 0
        with self.raw.cursor() as cur:
            cur.executemany(_pg(sql), rows)
            return max(cur.rowcount, 0)


def describe(url: str) -> str:
    """The URL without its password, for messages."""
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    port = f":{parts.port}" if parts.port else ""
    return f"postgresql://{parts.username + '@' if parts.username else ''}{host}{port}{parts.path}"


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def connect(url: str, timeout: float = 10.0) -> psycopg.Connection[Any]:
    """One connection, for migrations and checks; a clear StorageError when it fails."""
    try:
        return psycopg.connect(url, connect_timeout=max(1, int(timeout)), autocommit=True)
    except (psycopg.Error, ValueError) as exc:
        raise StorageError(f"cannot connect to {describe(url)}: {one_line(exc)}") from exc


def _wrap(exc: psycopg.Error, what: str) -> StorageError:
    if isinstance(exc, psycopg.OperationalError):
        return StorageError(f"database connection lost during {what}: {one_line(exc)}")
    return StorageError(f"database {what} failed: {one_line(exc)}")


def _configure(raw: psycopg.Connection[Any]) -> None:
    """Commits do not wait for the WAL to reach the disk (``synchronous_commit = off``):
    the durability SQLite's ``synchronous = NORMAL`` gives the embedded archive. A
    server crash may lose the last fraction of a second of commits, never
    consistency; what was lost is fetched again (new items 1,871/s -> 2,996/s in
    docs/benchmarks.md, at different loads)."""
    raw.execute("SET synchronous_commit = off")
    raw.commit()


def _check(raw: psycopg.Connection[Any]) -> None:
    """Checked before use without a round trip while the socket is quiet: a backend that
    was terminated (or the server shut down) has sent its error and closed the socket,
    which is then readable, and only then does the pool's own check (an empty query,
    one round trip) run, and fail, and the pool open another connection. Nothing else
    is ever unread on an idle connection of this pool (no LISTEN)."""
    if raw.closed or raw.broken:
        raise psycopg.OperationalError("the connection is closed")
    readable, _, _ = select.select([raw.fileno()], [], [], 0)
    if readable:
        psycopg_pool.ConnectionPool.check_connection(raw)


class Database:
    """The pool of one PostgreSQL database."""

    def __init__(self, url: str, max_size: int = 8) -> None:
        self.url = url
        self.pool = psycopg_pool.ConnectionPool(
            url, min_size=1, max_size=max_size, open=False, timeout=30.0,
            check=_check, reconnect_timeout=300.0,
            kwargs={"autocommit": False}, configure=_configure, name="tidings")
        try:
            self.pool.open(wait=True, timeout=15.0)
        except psycopg_pool.PoolTimeout as exc:
            self.pool.close()
            raise StorageError(f"cannot connect to {describe(url)}: {one_line(exc)}") from exc
        self._local = threading.local()  # the unit this thread holds, if any
        self._closed = False

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.pool.close()

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError(f"storage {describe(self.url)} is closed")

    def check_not_writing(self) -> None:
        """A call through the storage from inside a unit on the same thread would wait
        for the unit's own row locks: refused, as SQLite refuses it."""
        if getattr(self._local, "unit", False):
            raise StorageError("a write inside a write: use the unit the step was given "
                               "(or unit.nested()), not the storage")

    @contextmanager
    def read(self) -> Iterator[Conn]:
        """Reads run in autocommit: under READ COMMITTED every statement takes its own
        snapshot in a transaction too, and the BEGIN and ROLLBACK around a read are two
        round trips for nothing."""
        self._check_open()
        try:
            with self.pool.connection() as raw:
                raw.autocommit = True
                try:
                    yield Conn(raw)
                finally:
                    if not raw.closed:
                        raw.autocommit = False
        except psycopg.Error as exc:
            raise _wrap(exc, "read") from exc
        except psycopg_pool.PoolTimeout as exc:
            raise StorageError(f"no database connection: {one_line(exc)}") from exc

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """One transaction on a pooled connection, committed whole or rolled back."""
        self.check_not_writing()
        self._check_open()
        self._local.unit = True
        try:
            with self.pool.connection() as raw, raw.transaction():
                yield Transaction(raw)
        except psycopg.Error as exc:
            raise _wrap(exc, "write") from exc
        except psycopg_pool.PoolTimeout as exc:
            raise StorageError(f"no database connection: {one_line(exc)}") from exc
        finally:
            self._local.unit = False

    def retrying(self, call: Callable[[], T]) -> T:
        """Run a whole storage call again when PostgreSQL aborted it for a deadlock or a
        serialization failure (concurrent writers); any other error is raised."""
        for attempt in range(_ATTEMPTS):
            try:
                return call()
            except StorageError as exc:
                if attempt == _ATTEMPTS - 1 or not isinstance(exc.__cause__, _RETRYABLE):
                    raise
                time.sleep(0.01 * 2 ** attempt)
        raise AssertionError("unreachable")


class Transaction:
    """One connection inside one open transaction, and its savepoints."""

    def __init__(self, raw: psycopg.Connection[Any]) -> None:
        self.raw = raw
        self.conn = Conn(raw)

    @contextmanager
    def savepoint(self) -> Iterator[Conn]:
        """A part of the transaction that is rolled back alone when its block raises."""
        try:
            with self.raw.transaction():
                yield self.conn
        except psycopg.Error as exc:
            raise _wrap(exc, "write") from exc

    @contextmanager
    def read(self) -> Iterator[Conn]:
        try:
            yield self.conn
        except psycopg.Error as exc:
            raise _wrap(exc, "read") from exc


class Access(Connected):
    """How a mixin reaches a connection (``Connected``)."""

    dialect = POSTGRESQL

    def _read(self) -> AbstractContextManager[Conn]:
        raise NotImplementedError

    def _write(self) -> AbstractContextManager[Conn]:
        raise NotImplementedError


def insert_values(conn: Conn, head: str, rows: Sequence[Sequence[Any]], tail: str = "",
                  chunk: int = 1000) -> list[Any]:
    """``head VALUES (..), (..) tail`` for many rows at once: one statement per
    ``chunk`` rows instead of one per row; returns the rows of a RETURNING ``tail``."""
    out: list[Any] = []
    if not rows:
        return out
    group = "(" + ",".join("?" * len(rows[0])) + ")"
    for start in range(0, len(rows), chunk):
        part = rows[start:start + chunk]
        cur = conn.execute(f"{head} VALUES {','.join([group] * len(part))} {tail}",
                           [value for row in part for value in row])
        if cur.description is not None:
            out.extend(cur.fetchall())
    return out
