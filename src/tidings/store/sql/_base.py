"""Connections as the shared methods see them, the dialect table, and the value
conversions both backends store (times as integer microseconds since the epoch)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, Protocol

from tidings.errors import ConfigError

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: one day in the microseconds times are stored in
DAY_US = 86_400_000_000


class SqlCursor(Protocol):
    """What the shared methods read from a statement: rows and the count changed."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> Any: ...


class SqlConn(Protocol):
    """A connection taking ``?`` placeholders: ``sqlite3.Connection`` as it is, and
    the PostgreSQL backend's ``Conn`` wrapper."""

    def execute(self, sql: str, params: Any = ..., /) -> SqlCursor: ...

    def executemany(self, sql: str, rows: Any, /) -> Any: ...


@dataclass(frozen=True, slots=True)
class Dialect:
    """The few spellings in which the two backends' SQL differs."""

    name: str
    #: appended to ``ORDER BY text`` so both sort text by bytes, as SQLite does
    byte_order: str
    #: after a subquery picking rows to claim: skip those another claimer holds
    skip_locked: str
    #: after a SELECT of a row whose counters the transaction will change
    lock_row: str

    def any_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """``column`` matching any of ``values``: one array parameter on PostgreSQL
        (one statement plan whatever the count), a list of marks on SQLite."""
        if self.name == "postgresql":
            return f"{column} = ANY(?)", [list(values)]
        return f"{column} IN ({marks(len(values))})", list(values)

    def in_parts(self, column: str, values: Sequence[Any]) -> Iterator[tuple[str, list[Any]]]:
        """``any_of`` over ``values`` in as few statements as the backend takes: one
        array on PostgreSQL, parts of 900 marks on SQLite (which bounds the parameters
        of a statement); none at all for no values."""
        step = len(values) if self.name == "postgresql" else 900
        for start in range(0, len(values), max(step, 1)):
            yield self.any_of(column, values[start:start + step])

    def limit(self, value: int) -> int | None:
        """A LIMIT parameter: a negative one means none, which SQLite reads from -1
        and PostgreSQL from NULL (SQLite refuses a NULL LIMIT, PostgreSQL a negative)."""
        return None if value < 0 and self.name == "postgresql" else value


#: SQLite has one writer: its write lock already does what the locking clauses ask
SQLITE = Dialect(name="sqlite", byte_order="", skip_locked="", lock_row="")
POSTGRESQL = Dialect(name="postgresql", byte_order=' COLLATE "C"',
                     skip_locked=" FOR UPDATE SKIP LOCKED", lock_row=" FOR NO KEY UPDATE")


class Connected:
    """How a shared method reaches a connection; each backend's ``Access`` says how.

    Every method reads inside ``_read()`` and writes inside ``_write()``, so the same
    code runs as an atomic call on the storage (a transaction of its own) and as a
    step of an explicit unit (a savepoint).
    """

    dialect: ClassVar[Dialect]

    def _read(self) -> AbstractContextManager[SqlConn]:
        raise NotImplementedError

    def _write(self) -> AbstractContextManager[SqlConn]:
        raise NotImplementedError


def to_us(value: datetime) -> int:
    """An aware datetime as integer microseconds since the epoch (exact, sortable)."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ConfigError(f"naive datetime {value.isoformat()} given to storage; use UTC")
    delta = value - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def opt_us(value: datetime | None) -> int | None:
    return None if value is None else to_us(value)


def from_us(value: int) -> datetime:
    return EPOCH + timedelta(0, 0, value)  # positional is cheaper: a page converts 100+


def opt_dt(value: int | None) -> datetime | None:
    return None if value is None else from_us(value)


def chunks(values: list[str] | list[int], size: int = 900) -> Iterator[list[object]]:
    for start in range(0, len(values), size):
        yield list(values[start:start + size])


def marks(n: int) -> str:
    return ",".join("?" * n)
