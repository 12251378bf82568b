"""Scheduler benchmarks: the cost of one tick's planning, and a farm run.

    .venv/bin/python benchmarks/schedule.py plan --sources 10000 100000
    .venv/bin/python benchmarks/schedule.py farm --feeds 1000 --hosts 32 --minutes 10

``plan``: SQLite archives with N sources (a fifth of them due, varied
priorities); one tick's planning is ``claim_due_sources(now, 40, lease)``, the
atomic pick-and-lease. The peer figure from the same run is the same pick done
in Python over ``list_sources()`` (what a scheduler without SQL would do).

``farm``: the shared feed farm (../shared/bench/feedfarm.py) on 127.0.0.x; one
warm-up round fetches every feed once (validators stored), the next fetches are
spread over one 30-minute interval as in steady state, then the real runner runs
for N simulated minutes on an accelerated clock. Reported: fetches, 304 share,
failures, how late runs started after being due, peak resident memory.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from sharedfarm import start_farm
from tidings.app import SourceUpdate, Tidings
from tidings.model import RunOutcome, Source, SourceKind
from tidings.pipeline import timing
from tidings.schedule import plan
from tidings.schedule.clock import AcceleratedClock
from tidings.schedule.runner import Runner, RunnerOptions
from tidings.schedule.watchdog import resident_mb
from tidings.settings import load_settings
from tidings.store.sqlite import SqliteStorage


def bench_plan(n: int, reps: int = 11) -> None:
    now = datetime.now(UTC)
    with tempfile.TemporaryDirectory() as d, SqliteStorage(Path(d) / "plan.sqlite3") as store:
        t0 = time.perf_counter()
        for i in range(n):
            due = now - timedelta(minutes=i % 50) if i % 5 == 0 else now + timedelta(minutes=i % 60)
            store.add_source(Source(id=f"s{i:06d}", kind=SourceKind("rss"),
                                    url=f"https://h{i % 997}.example/feed/{i}",
                                    next_fetch_at=due, priority=1 if i % 101 == 0 else 0,
                                    created_at=now))
        setup = time.perf_counter() - t0
        sql, py = [], []
        for _ in range(reps):
            t0 = time.perf_counter()
            picked = store.claim_due_sources(now, plan.MAX_PER_TICK, timing.lease_until(now))
            sql.append(time.perf_counter() - t0)
            assert len(picked) == plan.MAX_PER_TICK
            t0 = time.perf_counter()
            plan.pick_due(store.list_sources(), now)
            py.append(time.perf_counter() - t0)
        ms_sql, ms_py = statistics.median(sql) * 1000, statistics.median(py) * 1000
        print(f"plan  sources={n:>7}  claim (SQL, pick+lease 40): {ms_sql:7.2f} ms median, "
              f"{min(sql) * 1000:.2f} ms best of {reps}"
              f"  | peer: list_sources + pick_due in Python: {ms_py:8.1f} ms"
              f"  | ratio {ms_py / ms_sql:6.1f}x"
              f"  (setup {setup:.0f} s, load {os.getloadavg()[0]:.1f})")


async def farm_run(base: str, data: Path, minutes: float, speed: float) -> None:
    settings = load_settings(data, env={}, overrides={
        "allow_private_hosts": "127.0.0.0/8", "per_host_delay": 0.05})
    urls = httpx.get(f"{base}/feeds.txt", timeout=30).text.split()
    t = Tidings.open(settings, create=True)
    for i, url in enumerate(urls):
        await t.sources.create(url, kind=SourceKind("rss"), source_id=f"f{i:05d}")
    t0 = time.perf_counter()
    warm = await t.collection.round(extract=False)
    print(f"farm  warm-up round: {warm.sources} sources in {time.perf_counter() - t0:.1f} s real,"
          f" {warm.failed} failed")
    await t.aclose()

    httpx.get(f"{base}/_tick", timeout=30)  # a tenth of the feeds publish something new
    httpx.get(f"{base}/_stats?reset=1", timeout=30)
    began = datetime.now(UTC) + timedelta(seconds=1)  # simulated time starts after the warm-up
    sources = []
    t = Tidings.open(settings)
    for i, s in enumerate(t.sources.all()):  # steady state: next fetches spread over one interval
        offset = timedelta(minutes=s.interval_min * i / len(urls))
        sources.append(await t.sources.update(s.id, SourceUpdate(next_fetch_at=began + offset)))
    await t.aclose()
    clock = AcceleratedClock(began, speed)
    t = Tidings.open(settings, clock=clock.now)
    runner = Runner(t.pipeline_env(), clock=clock, options=RunnerOptions(
        tz=UTC, memory_limit_mb=0, concurrency=settings.collect_concurrency))
    task = asyncio.create_task(runner.run())
    await asyncio.sleep(minutes * 60 / speed)
    runner.stop()
    await task
    runs = [r for r in t.sources.runs(limit=100_000) if r.started_at >= began]
    due = {s.id: s.next_fetch_at for s in sources}
    late = sorted((r.started_at - (due[r.source_id] or began)).total_seconds() for r in runs)
    n304 = sum(r.outcome is RunOutcome.NOT_MODIFIED for r in runs)
    failed = sum(r.outcome is RunOutcome.FAILED for r in runs)
    created = sum(r.created for r in runs)
    print(f"farm  {minutes:.0f} simulated min at {speed:.0f}x: {len(runs)} fetches "
          f"(expected ~{len(sources) * minutes / 30:.0f}), 304 share "
          f"{n304 / max(len(runs), 1):.1%}, {failed} failed, {created} new items, "
          f"start delay after due: median {statistics.median(late or [0]):.0f} s, "
          f"max {max(late or [0]):.0f} s (simulated); peak RSS {runner.watchdog.peak_mb:.0f} MiB,"
          f" now {resident_mb():.0f} MiB")
    await t.aclose()


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="what", required=True)
    p = sub.add_parser("plan")
    p.add_argument("--sources", type=int, nargs="+", default=[10_000, 100_000])
    f = sub.add_parser("farm")
    f.add_argument("--feeds", type=int, default=1000)
    f.add_argument("--hosts", type=int, default=32)
    f.add_argument("--minutes", type=float, default=10.0)
    f.add_argument("--speed", type=float, default=30.0)
    args = ap.parse_args()
    if args.what == "plan":
        for n in args.sources:
            bench_plan(n)
        return
    with tempfile.TemporaryDirectory() as d:
        proc, base = start_farm(args.feeds, args.hosts, Path(d) / "farm.url")
        try:
            asyncio.run(farm_run(base, Path(d) / "data", args.minutes, args.speed))
        finally:
            proc.terminate()
            proc.wait(10)


if __name__ == "__main__":
    main()
