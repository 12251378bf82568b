"""A large PostgreSQL archive for benchmarks/cluster.py, built once and kept as a template.

Building 1,000,000 items through ``apply_upserts`` measures the write path, not
the archive, and takes over an hour of the shared machine; the archive is setup, so
it is written with ``COPY``: the same items ``benchmarks/store.py``'s corpus gives
(33 per feed listing, the same keys, bodies and hashes as ``make_batch``), their
versions, and their search documents as ``index_pending`` would write them. The
secondary indexes are dropped before the load and built after it (one sort each
instead of a million insertions).

With ``base`` (cluster.py ``--archive-base``) only the first ``base`` items are
computed; the rest are copies of them made inside PostgreSQL (``_replicate``:
the keys, sources and times of the corpus's items, the text and search documents
of item ``i mod base``), which makes a 1,000,000-item archive a matter of the GIN
build (~30 min here) instead of hours of Python.

The result is the database ``tidings_bench_tpl_<items>`` on the benchmark server,
kept between runs: every run copies it (``CREATE DATABASE … TEMPLATE``, a file copy)
and measures on the copy. A template older than the code's schema is copied as it is
and the copy is migrated when it is opened, so that branches with different
migrations share one template; one newer (another branch's) is built again.
"""

from __future__ import annotations

import functools
import multiprocessing
import random
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import psycopg

from store import Corpus, feed_source, make_batch
from tidings.model import Source, SourceKind
from tidings.store.postgres import PostgresStorage
from tidings.store.postgres._schema import MIGRATIONS
from tidings.store.postgres._search import TIME_LEXEME_SQL, tsvector
from tidings.store.sql.items import _create_row

LISTING = 33
_CHUNK = 33 * 300
_TABLES = ("items", "versions", "item_search")
_ITEM_COLUMNS = ("id, key, source_id, url, title, summary, body, body_state, published_at, "
                 "discovered_at, updated_at, sort_time, author, categories, images, raw, "
                 "content_hash, title_fp, lossy, backfill, search_dirty")


@functools.cache
def _corpus() -> Corpus:
    return Corpus(random.Random(1))


def _rows(span: tuple[int, int, int]) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]],
                                               list[tuple[Any, ...]]]:
    """Rows of items ``start`` .. ``stop`` (ids from 1, in creation order)."""
    start, stop, sources = span
    items, versions, docs = [], [], []
    for first in range(start, stop, LISTING):
        batch, _ = make_batch(_corpus(), first, min(LISTING, stop - first),
                              feed_source(first // LISTING, sources))
        for offset, new in enumerate(batch):
            row = _create_row(first + offset + 1, new)
            items.append((*row, 0))
            versions.append((row[0], new.fields.content_hash, row[9]))
            docs.append((row[0], row[11], tsvector(new.fields.title, new.fields.body, "", row[11])))
    return items, versions, docs


def _server_db(server: str, sql: str) -> None:
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(sql.encode())


def _exists(server: str, name: str) -> bool:
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                            (name,)).fetchone() is not None


def _version(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT max(version) FROM tidings_schema").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def _secondary_indexes(conn: psycopg.Connection[Any]) -> list[tuple[str, str]]:
    """(name, definition) of the indexes of the loaded tables that no constraint owns."""
    return [(r[0], r[1]) for r in conn.execute(
        "SELECT i.indexname, i.indexdef FROM pg_indexes i WHERE i.tablename = ANY(%s) "
        "AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)",
        (list(_TABLES),)).fetchall()]


#: item ``i`` of a copy made by ``_replicate``: the key, source and times item ``i``
#: of the corpus has (``make_batch``: 30 s apart, source by listing), the text of
#: item ``i mod base``
_REPLICA = """
INSERT INTO items ({columns})
SELECT i.id + %(shift)s, c.key, 's' || b.src, c.key,
       title, summary, body, body_state, published_at + %(us)s, discovered_at + %(us)s,
       updated_at + %(us)s, sort_time + %(us)s, author, categories, images, raw, content_hash,
       title_fp, lossy, backfill, search_dirty
FROM items i, LATERAL (SELECT i.id - 1 + %(shift)s AS n) a,
     LATERAL (SELECT (a.n / 33) * 7919 %% %(sources)s AS src) b,
     LATERAL (SELECT format('https://site%%s.example/%%s/post-%%s.html', src,
                            2023 + n / 400000, n) AS key) c
WHERE i.id <= %(base)s;
INSERT INTO versions (item_id, hash, seen_at)
SELECT item_id + %(shift)s, hash, seen_at + %(us)s FROM versions WHERE item_id <= %(base)s;
INSERT INTO item_search (item_id, sort_time, doc)
SELECT item_id + %(shift)s, sort_time + %(us)s,
       ts_delete(doc, {old}) || array_to_tsvector(ARRAY[{new}])
FROM item_search WHERE item_id <= %(base)s;
"""


def _replicate(conn: psycopg.Connection[Any], base: int, items: int, sources: int) -> None:
    """Items ``base`` .. ``items`` as copies of the first ``base`` (see _REPLICA)."""
    t0 = time.perf_counter()
    for shift in range(base, items, base):
        last = min(base, items - shift)
        params = {"shift": shift, "us": shift * 30_000_000, "base": last, "sources": sources}
        lexeme = TIME_LEXEME_SQL.replace("%", "%%")
        sql = _REPLICA.format(columns=_ITEM_COLUMNS, old=lexeme.format(col="sort_time"),
                              new=lexeme.format(col="(sort_time + %(us)s)"))
        with conn.transaction():
            for statement in sql.split(";")[:-1]:
                conn.execute(statement.encode(), params)
        print(f"  archive: {shift + last:,} items replicated "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)


def _load(url: str, items: int, sources: int, base: int | None = None) -> None:
    """``base`` items built in Python (all if None), the rest copied from them in SQL."""
    with psycopg.connect(url, autocommit=True) as conn:
        indexes = _secondary_indexes(conn)
        for name, _ in indexes:
            conn.execute(f"DROP INDEX {name}".encode())
        built = min(items, base or items)
        spans = [(s, min(s + _CHUNK, built), sources) for s in range(0, built, _CHUNK)]
        t0 = time.perf_counter()
        with multiprocessing.get_context("fork").Pool(2) as pool:
            for done, (rows, versions, docs) in enumerate(pool.imap(_rows, spans), start=1):
                with conn.transaction(), conn.cursor() as cur:
                    _copy(cur, f"COPY items ({_ITEM_COLUMNS}) FROM STDIN", rows)
                    _copy(cur, "COPY versions (item_id, hash, seen_at) FROM STDIN", versions)
                    _copy(cur, "COPY item_search (item_id, sort_time, doc) FROM STDIN", docs)
                if done % 10 == 0:
                    print(f"  archive: {spans[done - 1][1]:,} items loaded "
                          f"({time.perf_counter() - t0:.0f} s)", flush=True)
        if built < items:
            _replicate(conn, built, items, sources)
        conn.execute("SET maintenance_work_mem = '2GB'")
        for name, definition in indexes:
            t1 = time.perf_counter()
            conn.execute(definition.encode())
            print(f"  archive: index {name} built ({time.perf_counter() - t1:.0f} s)", flush=True)
        conn.execute("SELECT setval('items_id_seq', %s)", (items,))
        conn.execute("VACUUM ANALYZE")


def _copy(cur: psycopg.Cursor[Any], sql: str, rows: list[tuple[Any, ...]]) -> None:
    with cur.copy(sql.encode()) as copy:
        for row in rows:
            copy.write_row(row)


def _build(server: str, name: str, items: int, sources: int, base: int | None) -> None:
    url = f"{server}/{name}"
    _server_db(server, f"CREATE DATABASE {name}")
    try:
        with PostgresStorage(url) as storage, storage.write() as unit:
            start = datetime(2023, 1, 1, tzinfo=UTC)
            for s in range(sources):
                unit.add_source(Source(id=f"s{s}", kind=SourceKind("rss"),
                                       url=f"https://site{s}.example/feed", created_at=start))
        _load(url, items, sources, base)
    except BaseException:
        _server_db(server, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        raise


def template(server: str, items: int, sources: int, rebuild: bool = False,
             base: int | None = None) -> str:
    """The name of the kept archive of ``items`` items, built or migrated as needed;
    a new one of more than ``base`` items copies the first ``base`` (``_replicate``)."""
    name = f"tidings_bench_tpl_{items}_{sources}"
    if _exists(server, name) and (rebuild or _version(f"{server}/{name}") > len(MIGRATIONS)):
        _server_db(server, f"DROP DATABASE {name} WITH (FORCE)")
    if not _exists(server, name):
        t0 = time.perf_counter()
        print(f"building the {items:,}-item template {name} (kept for later runs)", flush=True)
        _build(server, name, items, sources, base)
        print(f"  built in {time.perf_counter() - t0:.0f} s", flush=True)
    return name


@contextmanager
def copy_of(server: str, name: str) -> Iterator[str]:
    """A fresh database copied from the template ``name``, dropped at the end."""
    copy = f"tidings_bench_{secrets.token_hex(4)}"
    t0 = time.perf_counter()
    _server_db(server, f"CREATE DATABASE {copy} TEMPLATE {name}")
    print(f"  copied the template in {time.perf_counter() - t0:.0f} s", flush=True)
    try:
        yield f"{server}/{copy}"
    finally:
        _server_db(server, f"DROP DATABASE IF EXISTS {copy} WITH (FORCE)")
