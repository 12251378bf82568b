"""The reader sidebar's counts (issue 32): ``source_counts`` at 200,000 items.

    .venv/bin/python benchmarks/nav_counts.py                      # SQLite and PostgreSQL
    .venv/bin/python benchmarks/nav_counts.py --pg none --items 50000

One archive per backend: ``--sources`` sources, items spread over the last
``--days`` days, a share ``--read`` of them read and 1 in 200 starred (a
lived-in archive), then the same with nothing read (a fresh import: the most the
counts can cost). Each figure is the median of ``--runs`` calls of the storage
method the sidebar and ``/api/v1/counts`` use, with the migration's two partial
indexes and, from the same run, without them (dropped), which is what the
migration buys. The rows are written straight into the items table (the
counts read only the columns written here): the pipeline's own path would take
minutes per backend for what is measured in milliseconds.
"""

from __future__ import annotations

import argparse
import random
import secrets
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg

from tidings.model import Source, SourceKind
from tidings.store.base import Storage
from tidings.store.postgres import PostgresStorage
from tidings.store.sqlite import SqliteStorage

NOW = datetime.now(UTC)
INDEXES = ("items_unread_source", "items_starred_source")
COLUMNS = ("key, source_id, title, summary, body_state, discovered_at, updated_at, sort_time, "
           "backfill, read, starred, search_dirty")


def _us(when: datetime) -> int:
    return int((when - datetime(1970, 1, 1, tzinfo=UTC)).total_seconds() * 1_000_000)


def rows(items: int, sources: int, days: int, read: float) -> list[tuple[Any, ...]]:
    rng = random.Random(32)
    out = []
    for n in range(items):
        at = _us(NOW - timedelta(seconds=rng.uniform(0, days * 86400)))
        out.append((f"bench:{n}", f"s{rng.randrange(sources)}", f"item {n}", "", "ok", at, at,
                    at, int(rng.random() < 0.3), int(rng.random() < read),
                    int(rng.random() < 0.005), 0))
    return out


def add_sources(storage: Storage, sources: int) -> None:
    for n in range(sources):
        storage.add_source(Source(id=f"s{n}", kind=SourceKind("rss"), title=f"Source {n}",
                                  url=f"https://s{n}.example/feed", created_at=NOW,
                                  folder=f"Folder {n % 20}"))


def timed(call: Callable[[], object], runs: int) -> float:
    call()  # warm: the first call reads the pages in
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def measure(storage: Storage, execute: Callable[[str], None], runs: int) -> tuple[float, float]:
    """(with the indexes, without them) in ms."""
    since = NOW - timedelta(hours=24)

    def counts() -> object:
        return storage.source_counts(since)

    with_index = timed(counts, runs)
    for name in INDEXES:
        execute(f"DROP INDEX IF EXISTS {name}")
    without = timed(counts, runs)
    return with_index, without


def sqlite_case(directory: Path, data: Sequence[tuple[Any, ...]], args: argparse.Namespace
                ) -> tuple[float, float]:
    storage = SqliteStorage(directory / "tidings.sqlite3")
    add_sources(storage, args.sources)
    with storage._write() as conn:  # a bulk load: one transaction
        conn.executemany(f"INSERT INTO items ({COLUMNS}) "
                         f"VALUES ({', '.join('?' * 12)})", data)
        conn.execute("ANALYZE")

    def execute(sql: str) -> None:
        with storage._write() as conn:
            conn.execute(sql)

    try:
        return measure(storage, execute, args.runs)
    finally:
        storage.close()


def pg_case(server: str, data: Sequence[tuple[Any, ...]], args: argparse.Namespace
            ) -> tuple[float, float]:
    schema = f"bench_nav_{secrets.token_hex(4)}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    url = f"{server}?options=-csearch_path%3D{schema}"
    storage = PostgresStorage(url, pool_size=2)
    try:
        add_sources(storage, args.sources)
        with psycopg.connect(url, autocommit=True) as conn:
            with conn.cursor() as cur, cur.copy(f"COPY items ({COLUMNS}) FROM STDIN") as copy:
                for row in data:
                    copy.write_row(row)
            conn.execute("VACUUM ANALYZE items")

            def execute(sql: str) -> None:
                conn.execute(sql.encode())

            return measure(storage, execute, args.runs)
    finally:
        storage.close()
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=200_000)
    parser.add_argument("--sources", type=int, default=400)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--read", type=float, default=0.9)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/test",
                        help="a PostgreSQL database to make a scratch schema in, or none")
    args = parser.parse_args()
    print(f"{args.items:,} items, {args.sources} sources in 20 folders, median of "
          f"{args.runs} calls of source_counts (ms): with the partial indexes / without")
    for label, read in ((f"{args.read:.0%} read", args.read), ("none read", 0.0)):
        data = rows(args.items, args.sources, args.days, read)
        with tempfile.TemporaryDirectory() as tmp:
            with_index, without = sqlite_case(Path(tmp), data, args)
        print(f"  SQLite, {label}: {with_index:.2f} / {without:.2f}")
        if args.pg != "none":
            with_index, without = pg_case(args.pg, data, args)
            print(f"  PostgreSQL, {label}: {with_index:.2f} / {without:.2f}")


if __name__ == "__main__":
    main()
