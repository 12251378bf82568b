"""Cluster benchmark: collection by 1, 2 and 4 worker processes on PostgreSQL against the
embedded SQLite round, PostgreSQL upserts and search at scale, the due-source pick.

    .venv/bin/python benchmarks/cluster.py                       # everything
    .venv/bin/python benchmarks/cluster.py --skip-rounds --items 200000

* rounds: the shared feed farm (``--feeds`` 1,000 on ``--hosts`` 32 loopback hosts)
  collected once by ``tidings collect --once`` on SQLite, then, for each worker
  count, by that many ``tidings worker`` processes on a fresh PostgreSQL database:
  seconds from the workers' start until every source has a finished run (worker
  start-up included), as feeds/s, and the ratio to one worker;
* archive: a kept archive of ``--items`` synthetic items (benchmarks/store.py's
  corpus, 1,000,000 by default) is built once with ``COPY`` as the template
  database ``tidings_bench_tpl_<items>_<sources>`` (benchmarks/pg_archive.py;
  ``--rebuild-archive`` builds it again; drop it with ``DROP DATABASE`` when done).
  Each run measures on a copy of it (``CREATE DATABASE … TEMPLATE``): ``--new-items``
  new items, ``--batch`` (33) per ``apply_upserts`` as one feed listing writes them, with
  ``index_pending`` every 2,000 (new items/s, median over windows of ``--window``);
  unchanged re-listings/s (``lookup_listing`` of a source's newest
  listing, three runs of ``--relist-rounds``); search latencies newest first and
  ranked (``--search-repeat`` passes);
* pick: ``claim_due_sources`` of 40 out of ``--sources`` 100,000 due sources.

PostgreSQL is the server at ``TIDINGS_BENCH_PG`` (default the local trust-auth one);
each part uses a database of its own, dropped at the end.
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

from collect import TIDINGS, FarmProcess, get, run_measured
from pg_archive import copy_of, template
from store import INDEX_BATCH, Corpus, feed_source, make_batch, query_sets, relist
from tidings.model import Source, SourceKind
from tidings.store.base import SearchQuery, UpsertBatch
from tidings.store.postgres import PostgresStorage

SERVER = os.environ.get("TIDINGS_BENCH_PG", "postgresql://postgres@127.0.0.1:5432")
TARGETS = {"scaling": 1.7, "new": 10_000, "unchanged": 30_000, "search_p95_ms": 100,
           "pick_ms": 50}


@contextmanager
def fresh_database() -> Iterator[str]:
    name = f"tidings_bench_{secrets.token_hex(4)}"
    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}".encode())
    try:
        yield f"{SERVER}/{name}"
    finally:
        with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)".encode())


def _env(data: str, url: str = "") -> dict[str, str]:
    return {**os.environ, "TIDINGS_HOME": data, "TIDINGS_ALLOW_PRIVATE_HOSTS": "127.0.0.0/8",
            "TIDINGS_PER_HOST_DELAY": "0", "TIDINGS_DATABASE_URL": url}


def sqlite_round(farm: FarmProcess) -> float:
    """Seconds of one embedded round (the summary's own figure, import excluded)."""
    import json

    data = tempfile.mkdtemp(prefix="tidings-bench-")
    env = _env(data)
    opml = Path(data) / "farm.opml"
    opml.write_bytes(get(farm.url + "/feeds.opml"))
    subprocess.run([*TIDINGS, "init", "--empty"], env=env, check=True, capture_output=True)
    subprocess.run([*TIDINGS, "import-opml", str(opml)], env=env, check=True,
                   capture_output=True)
    _, _, out = run_measured([*TIDINGS, "collect", "--once", "--no-extract", "--json"], env)
    return float(json.loads(out)["seconds"])


def _finished(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(DISTINCT source_id) FROM fetch_runs "
                           "WHERE outcome NOT IN ('running', 'abandoned')").fetchone()
    return int(row[0]) if row else 0


@contextmanager
def farm_archive(farm: FarmProcess, prefix: str) -> Iterator[tuple[str, str, dict[str, str]]]:
    """A data directory and a fresh PostgreSQL database holding the farm's feeds as
    sources, migrated (``tidings status``), with the environment to run tidings on it."""
    data = tempfile.mkdtemp(prefix=prefix)
    with fresh_database() as url:
        env = _env(data, url)
        opml = Path(data) / "farm.opml"
        opml.write_bytes(get(farm.url + "/feeds.opml"))
        subprocess.run([*TIDINGS, "import-opml", str(opml)], env=env, check=True,
                       capture_output=True)
        subprocess.run([*TIDINGS, "status"], env=env, check=True, capture_output=True)
        yield data, url, env


def cluster_round(farm: FarmProcess, workers: int, feeds: int, concurrency: int) -> float:
    """Seconds from starting ``workers`` processes until every source ran once."""
    with farm_archive(farm, "tidings-cluster-") as (data, url, env):
        start = time.perf_counter()
        logs = [(Path(data) / f"worker{n}.log").open("wb") for n in range(workers)]
        procs = [subprocess.Popen([*TIDINGS, "-v", "worker", "--concurrency", str(concurrency)],
                                  env=env, stdout=log, stderr=subprocess.STDOUT)
                 for log in logs]
        try:
            while _finished(url) < feeds:
                if time.perf_counter() - start > 600 or all(p.poll() is not None for p in procs):
                    raise SystemExit(f"{workers} workers: round not done (logs in {data})")
                time.sleep(0.1)
            return time.perf_counter() - start
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                p.wait(60)


def rounds(args: argparse.Namespace) -> None:
    farm = FarmProcess(args.feeds, args.hosts, "none")
    try:
        lite = sqlite_round(farm)
        print(f"SQLite embedded round      {args.feeds / lite:8.1f} feeds/s  ({lite:.1f} s)")
        one = 0.0
        for n in args.workers:
            farm.reset()
            seconds = statistics.median(cluster_round(farm, n, args.feeds, args.concurrency)
                                        for _ in range(args.repeat))
            rate = args.feeds / seconds
            one = one or rate
            print(f"PostgreSQL, {n} worker(s)     {rate:8.1f} feeds/s  ({seconds:.1f} s)  "
                  f"x{rate / one:.2f} of one worker, x{rate / (args.feeds / lite):.2f} of SQLite")
        print(f"target: 2 workers >= {TARGETS['scaling']}x one worker")
    finally:
        farm.close()


def archive(args: argparse.Namespace) -> None:
    """Upserts and search in a copy of the kept ``--items`` archive (pg_archive.py)."""
    corpus = Corpus(random.Random(1))
    name = template(SERVER, args.items, args.sources_archive, args.rebuild_archive,
                    args.archive_base)
    with copy_of(SERVER, name) as url, PostgresStorage(url) as storage:
        rates: list[float] = []
        done, spent, window, end = args.items, 0.0, 0, args.items + args.new_items
        while done < end:
            n = min(args.batch, end - done)
            batch, _ = make_batch(corpus, done, n, feed_source(done // 33, args.sources_archive))
            t0 = time.perf_counter()
            storage.apply_upserts(UpsertBatch(creates=batch))
            spent += time.perf_counter() - t0
            done += n
            window += n
            if done % INDEX_BATCH < n:
                while storage.index_pending(INDEX_BATCH):
                    pass
            if window >= args.window or done >= end:
                rates.append(window / spent)
                print(f"  {done:>9,} items  new {rates[-1]:8,.0f}/s  "
                      f"load {os.getloadavg()[0]:.1f}", flush=True)
                window, spent = 0, 0.0
        while storage.index_pending(INDEX_BATCH):
            pass
        print(f"PostgreSQL new items/s     {statistics.median(rates):10,.0f}  "
              f"({len(rates)} windows)  target {TARGETS['new']:,}")
        ns = argparse.Namespace(items=args.items, batch=33, sources=args.sources_archive,
                                relist_rounds=args.relist_rounds)
        for _ in range(3):
            unchanged = relist(storage, ns, "latest")  # type: ignore[arg-type]
            print(f"PostgreSQL unchanged/s     {unchanged:10,.0f}  target "
                  f"{TARGETS['unchanged']:,}  load {os.getloadavg()[0]:.1f}", flush=True)
        for _ in range(args.search_repeat):
            search(storage, corpus)


def search(storage: PostgresStorage, corpus: Corpus) -> None:
    sets = query_sets(corpus, random.Random(2))
    for ranked in (False, True):
        times = []
        for queries in sets.values():
            for q in queries:
                t0 = time.perf_counter()
                storage.search(SearchQuery(terms=(q.strip('"'),), ranked=ranked, limit=50))
                times.append((time.perf_counter() - t0) * 1000)
        times.sort()
        p95 = times[int(len(times) * 0.95)]
        mode = "ranked" if ranked else "newest-first"
        print(f"search {mode:<13} p50 {statistics.median(times):7.1f} ms  p95 {p95:7.1f} ms"
              + (f"  target < {TARGETS['search_p95_ms']} ms" if not ranked else ""))


def pick(args: argparse.Namespace) -> None:
    with fresh_database() as url, PostgresStorage(url) as storage:
        created = datetime(2024, 1, 1, tzinfo=UTC)
        with storage.write() as unit:
            for s in range(args.sources):
                unit.add_source(Source(
                    id=f"p{s}", kind=SourceKind("rss"), url=f"https://p{s}.example/feed",
                    created_at=created, priority=s % 3,
                    next_fetch_at=created + timedelta(seconds=s % 5000)))
        now = created + timedelta(days=1)
        times = []
        for n in range(200):
            t0 = time.perf_counter()
            storage.claim_due_sources(now + timedelta(seconds=n), 40, now + timedelta(hours=1))
            times.append((time.perf_counter() - t0) * 1000)
        times.sort()
        print(f"due-source pick of 40 at {args.sources:,} sources: median "
              f"{statistics.median(times):.1f} ms, p95 {times[189]:.1f} ms  "
              f"target < {TARGETS['pick_ms']} ms")


def _race_batches(thread: int, rounds: int) -> list[list[str]]:
    """Batches of 33 keys, half shared with the other threads (the same wire stories)."""
    rng = random.Random(thread)
    return [[f"shared-{r}-{k}" for k in rng.sample(range(40), 16)]
            + [f"own-{thread}-{r}-{k}" for k in range(17)] for r in range(rounds)]


def _race_once(url: str, threads: int, rounds: int, advisory: bool) -> float:
    """Items offered per second by ``threads`` writers upserting overlapping batches."""
    import threading

    from storage_contract import new  # the tests' item builder

    with PostgresStorage(url, pool_size=threads) as storage:
        with storage.write() as unit:
            for t in range(threads):
                unit.add_source(Source(id=f"w{t}", kind=SourceKind("rss"),
                                       url=f"https://w{t}.example/", created_at=datetime.now(UTC)))
        work = [_race_batches(t, rounds) for t in range(threads)]
        gate = threading.Barrier(threads + 1)

        def writer(t: int) -> None:
            gate.wait()
            for keys in work[t]:
                batch = UpsertBatch(creates=[new(f"{k}-{advisory}", f"w{t}") for k in keys])
                if not advisory:
                    storage.apply_upserts(batch)
                    continue
                with storage.write() as unit:  # the alternative: a lock per key first
                    unit._tx.conn.execute(  # type: ignore[attr-defined]
                        "SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) "
                        "FROM unnest(?::text[]) AS k ORDER BY k", (sorted(keys),))
                    unit.apply_upserts(batch)

        pool = [threading.Thread(target=writer, args=(t,)) for t in range(threads)]
        for p in pool:
            p.start()
        gate.wait()
        t0 = time.perf_counter()
        for p in pool:
            p.join()
        return threads * rounds * 33 / (time.perf_counter() - t0)


def race(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    for advisory in (False, True, False, True):
        with fresh_database() as url:
            rate = _race_once(url, 8, args.race_rounds, advisory)
        how = "advisory lock per key + ON CONFLICT" if advisory else "ON CONFLICT alone"
        print(f"8 writers, overlapping batches, {how:<36} {rate:8,.0f} items/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--feeds", type=int, default=1000)
    ap.add_argument("--hosts", type=int, default=32)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--concurrency", type=int, default=32, help="jobs per worker")
    ap.add_argument("--repeat", type=int, default=1, help="rounds per worker count (median)")
    ap.add_argument("--items", type=int, default=1_000_000)
    ap.add_argument("--new-items", type=int, default=33_000,
                    help="new items upserted into the copy of the archive")
    ap.add_argument("--window", type=int, default=6_600)
    ap.add_argument("--batch", type=int, default=33,
                    help="new items per apply_upserts (33: one feed page)")
    ap.add_argument("--relist-rounds", type=int, default=1000)
    ap.add_argument("--search-repeat", type=int, default=2)
    ap.add_argument("--rebuild-archive", action="store_true",
                    help="build the kept archive template again")
    ap.add_argument("--sources-archive", type=int, default=1000)
    ap.add_argument("--archive-base", type=int, default=None,
                    help="a new archive computes this many items' text and search "
                         "documents and copies them for the rest (pg_archive.py)")
    ap.add_argument("--sources", type=int, default=100_000)
    ap.add_argument("--skip-rounds", action="store_true")
    ap.add_argument("--skip-archive", action="store_true")
    ap.add_argument("--skip-pick", action="store_true")
    ap.add_argument("--skip-race", action="store_true")
    ap.add_argument("--race-rounds", type=int, default=150)
    args = ap.parse_args()
    print(f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", file=sys.stderr)
    if not args.skip_race:
        race(args)
    if not args.skip_pick:
        pick(args)
    if not args.skip_rounds:
        rounds(args)
    if not args.skip_archive:
        archive(args)


if __name__ == "__main__":
    main()
