"""How long the background jobs make other writes wait (issue 28: CPU outside the writer).

A fresh archive of ``--items`` recent items (60 sources, ~1.5 KB of English or
Chinese text each) is indexed and then placed in stories by the catalogue's own
jobs (``schedule/catalog.py``: ``index``, then ``stories``), through one
``Writer`` as a process runs them. Meanwhile a probe submits a trivial write step
(one bookmark read in a unit of work) every 20 ms, as a collection round's small
steps arrive, and records how long each waited for its answer. Printed per job:
its wall time, and the probe's median, 95th percentile and longest wait. A job
that computes inside its write steps holds the writer for each whole batch; one
that reads, builds outside and then writes holds it only for the write.

    .venv/bin/python benchmarks/writer_hold.py [--items 6000] [--pg postgresql://…/db]

With ``--pg`` the same runs on PostgreSQL too (a fresh schema, dropped at the end).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import secrets
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

from tidings.model import BodyState, Source, SourceKind
from tidings.pipeline.env import PipelineEnv
from tidings.pipeline.upsert import ItemData, upsert_items
from tidings.schedule.catalog import CATALOG, JobContext, run_job
from tidings.schedule.jobs import Calendar
from tidings.settings import load_settings
from tidings.store.base import Storage, Unit
from tidings.store.postgres import PostgresStorage
from tidings.store.sqlite import SqliteStorage
from tidings.store.writer import Writer

WORDS = ["council", "harbour", "election", "budget", "rust", "release", "storm", "river",
         "bridge", "school", "market", "energy", "transport", "hospital", "festival",
         "museum", "court", "research", "satellite", "vaccine"]
HAN = "市政府发布新的交通计划地铁线路将延长至机场方向预计明年完工居民表示欢迎"
PROBE_EVERY = 0.02


def _text(rng: random.Random, chinese: bool) -> tuple[str, str]:
    if chinese:
        title = "".join(rng.choice(HAN) for _ in range(14))
        return title, "".join(rng.choice(HAN) for _ in range(500))
    title = " ".join(rng.choice(WORDS) for _ in range(8)).capitalize()
    return title, " ".join(rng.choice(WORDS) for _ in range(220))


def seed(store: Storage, items: int, now: datetime) -> None:
    rng = random.Random(28)
    sources = [Source(id=f"s{n}", kind=SourceKind("rss"), url=f"https://s{n}.example/feed",
                      created_at=now) for n in range(60)]
    for s in sources:
        store.add_source(s)
    per = items // len(sources)
    for n, s in enumerate(sources):
        batch = []
        for i in range(per):
            title, body = _text(rng, chinese=n % 4 == 0)
            batch.append(ItemData(
                title=title, url=f"https://{s.id}.example/{i}", guid=f"{s.id}-{i}",
                summary=body[:200], body=f"<p>{body}</p>", body_state=BodyState.OK,
                published_at=now - timedelta(minutes=rng.randrange(60 * 48))))
        upsert_items(store, s, batch, now)


def _probe(unit: Unit) -> str | None:
    return unit.get_mark("bench:probe")


async def measure(env: PipelineEnv, name: str) -> tuple[float, list[float]]:
    """Run catalogue job ``name`` to the end while the probe writes; (seconds, waits)."""
    job = next(j for j in CATALOG if j.name == name)
    now = env.clock()
    ctx = JobContext(env, Calendar.starting(now, UTC, now.time(), 1, now.time()))
    waits: list[float] = []
    done = asyncio.Event()

    async def probe() -> None:
        while not done.is_set():
            start = time.perf_counter()
            await env.writer(_probe)
            waits.append(time.perf_counter() - start)
            await asyncio.sleep(PROBE_EVERY)

    prober = asyncio.create_task(probe())
    start = time.perf_counter()
    while await run_job(job, ctx):  # a job returns "" once nothing is left
        pass
    spent = time.perf_counter() - start
    done.set()
    await prober
    return spent, waits


def _row(backend: str, job: str, spent: float, waits: list[float]) -> str:
    waits = sorted(waits)
    p95 = waits[min(len(waits) - 1, int(len(waits) * 0.95))]
    return (f"| {backend} | {job} | {spent:6.2f} s | {statistics.median(waits) * 1000:7.1f} ms "
            f"| {p95 * 1000:7.1f} ms | {waits[-1] * 1000:7.1f} ms | {len(waits)} |")


async def run(store: Storage, backend: str, items: int, data: Path) -> list[str]:
    now = datetime.now(UTC)
    seed(store, items, now)
    writer = Writer(store)
    env = PipelineEnv(store=store, writer=writer, fetcher=None,  # type: ignore[arg-type]
                      settings=load_settings(data, env={}), clock=lambda: datetime.now(UTC))
    try:
        rows = []
        for name in ("index", "stories"):
            spent, waits = await measure(env, name)
            rows.append(_row(backend, name, spent, waits))
        return rows
    finally:
        writer.close()


def _pg_schema(url: str) -> tuple[str, str]:
    schema = f"bench_{secrets.token_hex(4)}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}".encode())
    return schema, f"{url}?options=-csearch_path%3D{schema}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=6000)
    parser.add_argument("--pg", default="", help="a PostgreSQL URL (a fresh schema is used)")
    args = parser.parse_args()
    print("| backend | job | wall | probe wait p50 | p95 | max | probes |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        with SqliteStorage(Path(tmp) / "bench.sqlite3") as lite:
            for row in asyncio.run(run(lite, "SQLite", args.items, Path(tmp))):
                print(row, flush=True)
        if args.pg:
            schema, url = _pg_schema(args.pg)
            try:
                with PostgresStorage(url) as pg:
                    for row in asyncio.run(run(pg, "PostgreSQL", args.items, Path(tmp))):
                        print(row, flush=True)
            finally:
                with psycopg.connect(args.pg, autocommit=True) as conn:
                    conn.execute(f"DROP SCHEMA {schema} CASCADE".encode())


if __name__ == "__main__":
    main()
