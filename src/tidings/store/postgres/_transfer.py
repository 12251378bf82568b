"""Copying a whole archive between SQLite and PostgreSQL (``tidings migrate``, backups).

Both backends store the same values (times as integer microseconds, flags 0/1,
JSON as text), so rows are copied as they are, table by table in key order, a
batch per transaction. Each table is read in one streaming statement (a cursor
on SQLite, a binary ``COPY … TO STDOUT`` on PostgreSQL) and written with
``COPY … FROM STDIN`` (PostgreSQL) or one ``executemany`` (SQLite) per batch:
paging with ``LIMIT`` sorted a composite text key's whole table again for every
page. A copy that stops (an interrupt, a lost connection) is resumed by running
it again: each table continues after the highest key the target holds. At the
end the row counts of both sides are compared. The search index is not copied:
every copied item is marked for indexing, and the target builds its own index
(FTS5 or tsvector) in the background.

Tables added by later migrations are copied once they are listed in ``TABLES``.
"""

from __future__ import annotations

import itertools
import re
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import psycopg

from tidings.errors import StorageError
from tidings.store import inuse
from tidings.store.postgres import PostgresStorage
from tidings.store.postgres import _inuse as pg_inuse
from tidings.store.postgres._db import one_line
from tidings.store.sqlite import SqliteStorage


@dataclass(frozen=True, slots=True)
class Table:
    name: str
    key: tuple[str, ...]  # the primary key: copy order and resume point
    batch: int = 10_000  # rows per transaction of the target


#: every table of an archive, parents before children
TABLES: tuple[Table, ...] = (
    Table("meta", ("name",)), Table("folders", ("name",)), Table("sources", ("id",)),
    Table("fetch_runs", ("id",)), Table("items", ("id",), 5000),
    Table("versions", ("item_id", "hash")), Table("discoveries", ("item_id", "source_id")),
    Table("tombstones", ("key",)), Table("raw_responses", ("id",), 500),
    Table("users", ("id",)), Table("sessions", ("id",)), Table("api_tokens", ("id",)),
    Table("paid_calls", ("id",)), Table("source_leases", ("source_id",)),
    Table("saved_searches", ("id",)), Table("fever_keys", ("token_id",)),
    Table("websub", ("source_id",)), Table("paid_troubles", ("provider",)),
    Table("story_members", ("item_id",)), Table("story_links", ("a", "b")),
    Table("story_meaning", ("item_id",), 2000),
    Table("crawls", ("id",)), Table("crawl_sites", ("id",)),
    Table("crawl_pages", ("crawl_id", "url")), Table("crawl_feeds", ("id",)),
)
#: columns that are each backend's own search bookkeeping, never copied
_LOCAL_COLUMNS = frozenset({"search_rowid", "search_dirty"})
#: meta rows that each backend keeps for itself
_LOCAL_META = "search_tokenizer"
#: sequences (PostgreSQL) to move past the copied ids
_SERIALS = ("fetch_runs", "items", "raw_responses", "users", "paid_calls",
            "crawls", "crawl_sites", "crawl_feeds", "saved_searches")

_TEXT_OID = 25

Progress = Callable[[str, int, int], None]  # table, rows copied so far, rows in total


class Side(Protocol):
    def columns(self, table: str) -> list[str]: ...
    def count(self, table: Table) -> int: ...
    def last_key(self, table: Table) -> tuple[Any, ...] | None: ...
    def stream(self, table: Table, columns: Sequence[str], after: tuple[Any, ...] | None
               ) -> Iterator[list[tuple[Any, ...]]]: ...
    def put(self, table: Table, columns: Sequence[str], rows: Sequence[tuple[Any, ...]]
            ) -> None: ...
    def finish(self) -> None: ...


def _where(table: Table, after: tuple[Any, ...] | None, mark: str,
           keys: str | None = None) -> str:
    conds = [f"name != '{_LOCAL_META}'"] if table.name == "meta" else []
    if after is not None:
        keys = keys or ", ".join(table.key)
        conds.append(f"({keys}) > ({', '.join([mark] * len(table.key))})")
    return f"WHERE {' AND '.join(conds)}" if conds else ""


class SqliteSide:
    """A SQLite archive (created with its schema when it does not exist)."""

    def __init__(self, path: Path) -> None:
        SqliteStorage(path).close()  # creates the file and applies the migrations
        self.conn = sqlite3.connect(path, isolation_level=None)
        # WAL without a sync per commit, as the store runs it: a killed copy loses at
        # most its last batches, which the next run copies again
        self.conn.execute("PRAGMA synchronous = NORMAL")

    def columns(self, table: str) -> list[str]:
        return [r[1] for r in self.conn.execute(f"PRAGMA table_info({table})")]

    def count(self, table: Table) -> int:
        (n,) = self.conn.execute(
            f"SELECT count(*) FROM {table.name} {_where(table, None, '?')}").fetchone()  # noqa: S608
        return int(n)

    def last_key(self, table: Table) -> tuple[Any, ...] | None:
        order = ", ".join(f"{k} DESC" for k in table.key)
        row = self.conn.execute(f"SELECT {', '.join(table.key)} FROM {table.name} "  # noqa: S608
                                f"{_where(table, None, '?')} ORDER BY {order} LIMIT 1"
                                ).fetchone()
        return None if row is None else tuple(row)

    def stream(self, table: Table, columns: Sequence[str], after: tuple[Any, ...] | None
               ) -> Iterator[list[tuple[Any, ...]]]:
        cursor = self.conn.execute(
            f"SELECT {', '.join(columns)} FROM {table.name} {_where(table, after, '?')} "  # noqa: S608
            f"ORDER BY {', '.join(table.key)}", after or ())
        while rows := cursor.fetchmany(table.batch):
            yield rows

    def put(self, table: Table, columns: Sequence[str], rows: Sequence[tuple[Any, ...]]) -> None:
        marks = ", ".join("?" * len(columns))
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            self.conn.executemany(f"INSERT OR IGNORE INTO {table.name} ({', '.join(columns)}) "  # noqa: S608
                                  f"VALUES ({marks})", rows)
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def finish(self) -> None:
        self.conn.close()


class PostgresSide:
    """A PostgreSQL database (migrated first). ``snapshot`` reads everything in one
    REPEATABLE READ transaction: a consistent copy of a live database (backups)."""

    def __init__(self, url: str, snapshot: bool = False) -> None:
        PostgresStorage(url, pool_size=1).close()  # checks the URL, applies the migrations
        self.conn = psycopg.connect(url, autocommit=not snapshot)
        self.wrote = False
        self._type_cache: dict[str, dict[str, int]] = {}
        if snapshot:
            self.conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            self.conn.read_only = True

    def columns(self, table: str) -> list[str]:
        return [r[0] for r in self.conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = %s "
            "AND table_schema = current_schema() ORDER BY ordinal_position", (table,))]

    def count(self, table: Table) -> int:
        row = self.conn.execute(
            f"SELECT count(*) FROM {table.name} {_where(table, None, '%s')}").fetchone()  # noqa: S608
        return int(row[0]) if row else 0

    def last_key(self, table: Table) -> tuple[Any, ...] | None:
        order = ", ".join(f'{k} COLLATE "C" DESC' if self._text(table.name, k) else f"{k} DESC"
                          for k in table.key)
        row = self.conn.execute(f"SELECT {', '.join(table.key)} FROM {table.name} "  # noqa: S608
                                f"{_where(table, None, '%s')} ORDER BY {order} LIMIT 1"
                                ).fetchone()
        return None if row is None else tuple(row)

    def _types(self, table: str) -> dict[str, int]:
        """column -> type oid (what a binary COPY needs to decode it)."""
        if table not in self._type_cache:
            self._type_cache[table] = {str(r[0]): int(r[1]) for r in self.conn.execute(
                "SELECT attname, atttypid FROM pg_attribute WHERE attrelid = %s::regclass "
                "AND attnum > 0 AND NOT attisdropped", (table,))}
        return self._type_cache[table]

    def _text(self, table: str, column: str) -> bool:
        return self._types(table)[column] == _TEXT_OID

    def _key_order(self, table: Table) -> str:
        # byte order, as SQLite compares text: both sides agree on what "after" means
        return ", ".join(f'{k} COLLATE "C"' if self._text(table.name, k) else k
                         for k in table.key)

    def stream(self, table: Table, columns: Sequence[str], after: tuple[Any, ...] | None
               ) -> Iterator[list[tuple[Any, ...]]]:
        """One binary COPY of the whole table in key order, in batches."""
        types = self._types(table.name)
        where = _where(table, after, "%s", self._key_order(table))
        with self.conn.cursor() as cur, cur.copy(
                f"COPY (SELECT {', '.join(columns)} FROM {table.name} {where} "  # noqa: S608
                f"ORDER BY {self._key_order(table)}) TO STDOUT (FORMAT BINARY)",
                after) as copy:
            copy.set_types([types[c] for c in columns])
            batch: list[tuple[Any, ...]] = []
            for row in copy.rows():
                batch.append(row)
                if len(batch) >= table.batch:
                    yield batch
                    batch = []
            if batch:
                yield batch

    def put(self, table: Table, columns: Sequence[str], rows: Sequence[tuple[Any, ...]]) -> None:
        """One COPY per batch, in one transaction: a batch is there whole or not at all."""
        self.wrote = True
        with self.conn.transaction(), self.conn.cursor() as cur, cur.copy(
                f"COPY {table.name} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)

    def finish(self) -> None:
        """Move each id sequence past the copied ids (a target only), and close."""
        for table in _SERIALS if self.wrote else ():
            self.conn.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "  # noqa: S608
                f"greatest((SELECT max(id) FROM {table}), 1), "
                f"(SELECT max(id) FROM {table}) IS NOT NULL)")
        if not self.conn.autocommit:
            self.conn.commit()
        self.conn.close()


def open_side(where: str | Path, snapshot: bool = False) -> Side:
    text = str(where)
    if text.startswith(("postgresql://", "postgres://")):
        return PostgresSide(text, snapshot=snapshot)
    return SqliteSide(Path(where))


def copy_archive(source: Side, target: Side, progress: Progress | None = None
                 ) -> dict[str, int]:
    """Copy every table from ``source`` into ``target``, resuming where an earlier
    copy stopped; returns the rows per table, checked equal on both sides."""
    counts: dict[str, int] = {}
    for table in TABLES:
        wanted = set(target.columns(table.name)) - _LOCAL_COLUMNS
        columns = [c for c in source.columns(table.name) if c in wanted]
        total = source.count(table)
        after = target.last_key(table)
        done = target.count(table)
        for rows in source.stream(table, columns, after):
            target.put(table, columns, rows)
            done += len(rows)
            if progress:
                progress(table.name, done, total)
        have = target.count(table)
        if have != total:
            raise StorageError(f"copy of {table.name} incomplete: {have} rows in the target, "
                               f"{total} in the source (is something still writing to it?)")
        counts[table.name] = total
    return counts


@contextmanager
def _sides(source: str | Path, target: str | Path, snapshot: bool = False
           ) -> Iterator[tuple[Side, Side]]:
    try:
        src = open_side(source, snapshot=snapshot)
    except (psycopg.Error, sqlite3.Error) as exc:
        raise StorageError(f"cannot open {source}: {one_line(exc)}") from exc
    try:
        dst = open_side(target)
        try:
            yield src, dst
        finally:
            dst.finish()
    except (psycopg.Error, sqlite3.Error) as exc:
        raise StorageError(f"copy failed: {one_line(exc)} (run it again to resume)") from exc
    finally:
        src.finish()


def migrate_archive(source: str | Path, target: str | Path,
                    progress: Progress | None = None) -> dict[str, int]:
    """``tidings migrate``: copy the archive at ``source`` to ``target`` (a SQLite path or
    a postgresql:// URL, either way), resumable, counts checked."""
    if str(source) == str(target):
        raise StorageError("migrate: the source and the target are the same archive")
    # nobody else may have the target open: a reader would see it half copied
    alone = (pg_inuse.exclusive(target, "migrate") if isinstance(target, str)
             else inuse.exclusive(target, "migrate"))
    with alone:
        with _sides(source, target) as (src, dst):
            counts = copy_archive(src, dst, progress)
        counts["media"] = copy_media(source, target)
        return counts


#: a localized image's name under DATA_DIR/media (extract/images.py)
_MEDIA_NAME = re.compile(r"[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{64}\.(?:jpg|png|gif|webp|avif|bmp|ico)")
_MEDIA_MAX = 8 * 1024 * 1024
_MEDIA_BATCH = 50


def _disk_media(media_dir: Path) -> Iterator[tuple[str, bytes]]:
    if not media_dir.is_dir():
        return
    for path in sorted(media_dir.glob("??/??/*")):
        name = path.relative_to(media_dir).as_posix()
        if _MEDIA_NAME.fullmatch(name) and path.is_file() and path.stat().st_size <= _MEDIA_MAX:
            yield name, path.read_bytes()


def _table_media(source: str | Path) -> Iterator[tuple[str, bytes]]:
    if isinstance(source, Path):
        conn = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
        try:
            yield from ((str(n), bytes(b)) for n, b in conn.execute(
                "SELECT name, body FROM media ORDER BY name"))
        finally:
            conn.close()
        return
    with psycopg.connect(source) as pg, pg.cursor(name="tidings_media") as cur:
        cur.execute("SELECT name, body FROM media ORDER BY name")
        yield from ((str(n), bytes(b)) for n, b in cur)


def copy_media(source: str | Path, target: str | Path) -> int:
    """The localized images: the ``media`` table, and from a SQLite archive also the files
    of its ``media`` folder, so a cluster's web nodes find them (docs/scale.md). Not a
    table of ``TABLES``: the target may hold more than the source (the files), and a
    name stored already is skipped, so a resumed copy goes on."""
    images = _table_media(source)
    if isinstance(source, Path):
        images = itertools.chain(images, _disk_media(source.parent / "media"))
    store = PostgresStorage(target, pool_size=1) if isinstance(target, str) \
        else SqliteStorage(target)
    copied = 0
    try:
        while batch := list(itertools.islice(images, _MEDIA_BATCH)):
            with store.write() as unit:
                for name, body in batch:
                    unit.put_media(name, body, datetime.now(UTC))
            copied += len(batch)
    finally:
        store.close()
    return copied


def backup_to_sqlite(url: str, dest: Path) -> Path:
    """One consistent snapshot of the PostgreSQL archive at ``url`` as a SQLite file,
    written beside ``dest`` and renamed into place (never half a file)."""
    partial = dest.with_name(dest.name + ".partial")
    partial.unlink(missing_ok=True)
    try:
        with _sides(url, partial, snapshot=True) as (src, dst):
            copy_archive(src, dst)
        copy_media(url, partial)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    finally:  # only this process ever opened the partial file: its lock file goes too
        inuse.lock_path(partial).unlink(missing_ok=True)
    partial.replace(dest)
    return dest
