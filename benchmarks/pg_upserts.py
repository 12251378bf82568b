"""Where a PostgreSQL upsert batch spends its time: wall and server time per batch.

    cd benchmarks && ../.venv/bin/python pg_upserts.py --items 100000 --batch 33 --batches 100

Copies the kept archive template of ``--items`` items (pg_archive.py; it must exist:
this script never builds one), opens the copy with the code on ``PYTHONPATH`` (which
migrates the copy, never the template) and writes ``--batches`` batches of
``--batch`` new items of one feed each, alternating two ways per batch:

* ``apply_upserts`` as the pipeline calls it, timed by the wall clock;
* the same kind of batch through ``EXPLAIN (ANALYZE, BUFFERS, WAL)`` of the batch
  statement (``_items._CREATE``), in a transaction committed as the real one is:
  the server's execution time, the WAL it wrote and the buffers it touched.

Then ``--relists`` re-listings of stored listings (what ``plan_prepared`` asks storage
for an unchanged listing), timed by the wall clock. Server time is steadier than wall
time on a loaded machine; the load average is printed with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from typing import Any

from pg_archive import copy_of
from store import Corpus, _lookup_listing, feed_source, item_key, make_batch
from tidings.model import BodyState, ItemData
from tidings.pipeline.upsert import apply_prepared, listing_memory, prepare
from tidings.store.base import UpsertBatch
from tidings.store.postgres import PostgresStorage, _items
from tidings.store.sql.items import _create_row

SERVER = os.environ.get("TIDINGS_BENCH_PG", "postgresql://postgres@127.0.0.1:5432")


def explained(storage: PostgresStorage, batch: UpsertBatch) -> dict[str, float]:
    """Server figures of the batch statement, run (and committed) under EXPLAIN ANALYZE."""
    sql, params = _statement(batch)
    with storage._db.transaction() as tx:
        tx.raw.execute("SET LOCAL track_io_timing = on")
        (plan,) = tx.conn.execute_binary(
            "EXPLAIN (ANALYZE, BUFFERS, WAL, FORMAT JSON) " + sql, params).fetchone()
    top = (plan if isinstance(plan, list) else json.loads(plan))[0]
    node = top["Plan"]
    return {"ms": top["Execution Time"] + top["Planning Time"],
            "wal_kb": node.get("WAL Bytes", 0) / 1024,
            "dirtied": node.get("Shared Dirtied Blocks", 0),
            "hit": node.get("Shared Hit Blocks", 0), "read": node.get("Shared Read Blocks", 0)}


def _statement(batch: UpsertBatch) -> tuple[str, list[Any]]:
    """The batch statement and its parameters, as ``_items._create`` builds them."""
    ordered = sorted(batch.creates, key=lambda n: n.key)
    rows = [_create_row(0, n)[1:] for n in ordered]
    return _items._CREATE, [list(c) for c in zip(*rows, strict=True)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--sources", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=33)
    ap.add_argument("--batches", type=int, default=100)
    ap.add_argument("--relists", type=int, default=1000)
    ap.add_argument("--pipeline-listings", type=int, default=100)
    args = ap.parse_args()
    corpus = Corpus(random.Random(1))
    with copy_of(SERVER, f"tidings_bench_tpl_{args.items}_{args.sources}") as url, \
            PostgresStorage(url) as storage:
        walls: list[float] = []
        server: list[dict[str, float]] = []
        done = args.items
        for n in range(args.batches):
            batch, _ = make_batch(corpus, done, args.batch, feed_source(n, args.sources))
            done += args.batch
            if n % 2:
                server.append(explained(storage, UpsertBatch(creates=batch)))
            else:
                t0 = time.perf_counter()
                storage.apply_upserts(UpsertBatch(creates=batch))
                walls.append(time.perf_counter() - t0)
        ms = statistics.median(walls) * 1000
        print(f"batch {args.batch}: wall per batch median {ms:.2f} ms "
              f"= {args.batch / ms * 1000:,.0f} new items/s  load {os.getloadavg()[0]:.1f}")
        for key in ("ms", "wal_kb", "dirtied", "hit", "read"):
            print(f"  server {key:<8} median {statistics.median(s[key] for s in server):9.2f}"
                  f"  p90 {sorted(s[key] for s in server)[int(len(server) * 0.9)]:9.2f}")
        print(f"  server ms per item {statistics.median(s['ms'] for s in server) / args.batch:.3f}"
              f" -> {args.batch / statistics.median(s['ms'] for s in server) * 1000:,.0f}"
              " items/s of server time")
        relists(storage, args)
        pipeline(storage, corpus, args, done)


def relists(storage: PostgresStorage, args: argparse.Namespace) -> None:
    rng = random.Random(3)
    listings = args.items // 33
    spent, n = 0.0, 0
    for _ in range(args.relists):
        back = rng.randrange(0, min(listings, args.sources))
        first = (listings - 1 - back) * 33
        source = feed_source(first // 33, args.sources)
        keys = [item_key(i, source) for i in range(first, first + 33)]
        t0 = time.perf_counter()
        _lookup_listing(storage, keys, [])
        spent += time.perf_counter() - t0
        n += len(keys)
    print(f"unchanged re-listings {n / spent:,.0f}/s  load {os.getloadavg()[0]:.1f}")


def pipeline(storage: PostgresStorage, corpus: Corpus, args: argparse.Namespace,
             start: int) -> None:
    """The product's path: ``apply_prepared`` (look-ups, decisions, the write) in a
    writer unit per listing, as a worker's run stores a feed page; entries prepared
    beforehand (cleaning is the worker's CPU, not storage). Each listing once new,
    then again unchanged (decided on the listing memory, nothing written)."""
    listings = []
    for n in range(args.pipeline_listings):
        batch, _ = make_batch(corpus, start + n * args.batch, args.batch,
                              feed_source(n, args.sources))
        source = storage.get_source(batch[0].source_id)
        items = [ItemData(title=b.fields.title, url=b.key, body=b.fields.body,
                          body_state=BodyState.OK, published_at=b.fields.published_at)
                 for b in batch]
        now = batch[0].discovered_at
        listings.append((source, items, now, prepare(source, items, now, listed={})))
    for label, again in (("new", False), ("unchanged", True)):
        times = []
        for source, items, now, first in listings:
            prepared = prepare(source, items, now, listed=listing_memory(first)) \
                if again else first
            t0 = time.perf_counter()
            with storage.write() as unit:
                outcome = apply_prepared(unit, source, prepared, now)
            times.append(time.perf_counter() - t0)
            assert (outcome.unchanged if again else outcome.created) == len(prepared)
        ms = statistics.median(times) * 1000
        print(f"pipeline {label:<9} listings of {args.batch}: median {ms:.2f} ms "
              f"= {args.batch / ms * 1000:,.0f} items/s  load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
