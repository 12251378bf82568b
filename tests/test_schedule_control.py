"""Runner control: the per-tick cap, manual runs, graceful stop, two runners, the watchdog,
and the daily / weekly jobs with webhooks (R-SCHED-1, -5, R-OPS-3, -4, R-API-4)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, time, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from netservers import serve
from schedfeeds import SchedFeeds
from tidings.app import SourceUpdate, Tidings
from tidings.model import RunOutcome, SourceKind
from tidings.pipeline import timing
from tidings.schedule import jobs
from tidings.schedule.clock import AcceleratedClock
from tidings.schedule.runner import Runner, RunnerOptions, StopReason
from tidings.schedule.watchdog import MemoryWatchdog
from tidings.schedule.webhooks import WebhookSender
from tidings.settings import Settings

NOW = datetime.now(UTC).replace(microsecond=0)
QUIET = RunnerOptions(tz=UTC, grace_seconds=0.3, memory_limit_mb=0,
                      adapt_at=(NOW - timedelta(hours=1)).time(),
                      report_weekday=(NOW.weekday() + 3) % 7)


@pytest.fixture
async def feeds() -> AsyncIterator[tuple[SchedFeeds, str]]:
    clock = AcceleratedClock(NOW, 1.0)
    f = SchedFeeds(clock.now)
    async with serve(f.app()) as base:
        yield f, base
        f.released.set()


@pytest.fixture
async def tidings(settings: Settings) -> AsyncIterator[Tidings]:
    t = Tidings.open(settings, create=True)
    yield t
    await t.aclose()


async def add(t: Tidings, base: str, name: str, due: datetime, **changes: Any) -> None:
    await t.sources.create(f"{base}/{name}.xml", kind=SourceKind("rss"), source_id=name)
    await t.sources.update(name, SourceUpdate(next_fetch_at=due, **changes))


async def test_a_tick_takes_forty_and_never_more_than_free_slots(
    tidings: Tidings, feeds: tuple[SchedFeeds, str],
) -> None:
    f, base = feeds
    f.delay = 5.0  # every fetch hangs past the test: slots stay taken
    now = datetime.now(UTC)
    for i in range(100):
        await add(tidings, base, f"s{i:03d}", now - timedelta(minutes=100 - i))
    await tidings.sources.update("s099", SourceUpdate(priority=1))  # the least overdue, but starred
    runner = Runner(tidings.pipeline_env(), options=replace(QUIET, concurrency=64))
    first = await runner.tick()
    assert len(first) == 40
    assert {s.id for s in first} == {f"s{i:03d}" for i in range(39)} | {"s099"}
    assert len(await runner.tick()) == 24  # 64 slots, 40 busy
    assert await runner.tick() == []
    assert len(runner.in_flight) == 64
    leased = {s.id: s.next_fetch_at for s in tidings.sources.all() if s.id in runner.in_flight}
    assert all(t is not None and t > now + timedelta(minutes=9) for t in leased.values())

    await runner.drain()  # grace 0.3 s: every fetch is cancelled and released
    after = datetime.now(UTC)
    sources = {s.id: s for s in tidings.sources.all()}
    for sid in leased:
        nxt = sources[sid].next_fetch_at
        assert nxt is not None and nxt <= after, f"{sid} is still leased"
    runs = tidings.sources.runs(limit=200)
    assert len(runs) == 64
    assert {r.outcome for r in runs} == {RunOutcome.ABANDONED}
    assert runner.stats.abandoned == 64


async def test_sigterm_finishes_quick_fetches_and_releases_hung_ones(
    tidings: Tidings, feeds: tuple[SchedFeeds, str],
) -> None:
    f, base = feeds
    f.slow_seconds = 30.0  # "slow" hangs far longer than the grace time
    now = datetime.now(UTC)
    await add(tidings, base, "healthy", now)
    await add(tidings, base, "slow", now)
    runner = Runner(tidings.pipeline_env(), options=replace(QUIET, grace_seconds=1.0))
    runner.install_signal_handlers()
    task = asyncio.create_task(runner.run())
    while "slow" not in f.hits:
        await asyncio.sleep(0.01)
    os.kill(os.getpid(), signal.SIGTERM)
    t0 = asyncio.get_running_loop().time()
    assert await asyncio.wait_for(task, 10) is StopReason.REQUESTED
    assert asyncio.get_running_loop().time() - t0 < 3.0
    by_source = {r.source_id: r for r in tidings.sources.runs(limit=10)}
    assert by_source["healthy"].outcome is RunOutcome.OK
    assert by_source["slow"].outcome is RunOutcome.ABANDONED
    slow = tidings.sources.get("slow")
    assert slow.next_fetch_at is not None and slow.next_fetch_at <= datetime.now(UTC)
    assert slow.fail_count == 0  # being stopped is not the source's failure


async def test_collect_now_runs_a_source_that_is_not_due(
    tidings: Tidings, feeds: tuple[SchedFeeds, str],
) -> None:
    _, base = feeds
    later = datetime.now(UTC) + timedelta(hours=5)
    await add(tidings, base, "healthy", later)
    runner = Runner(tidings.pipeline_env(), options=replace(QUIET, tick_seconds=3600))
    task = asyncio.create_task(runner.run())
    await asyncio.sleep(0.2)
    assert tidings.sources.runs("healthy") == []
    runner.collect_now(["healthy", "healthy"])
    for _ in range(200):
        if runner.stats.finished:
            break
        await asyncio.sleep(0.02)
    runner.stop()
    await asyncio.wait_for(task, 10)
    runs = tidings.sources.runs("healthy")
    assert [r.outcome for r in runs] == [RunOutcome.OK]


async def test_the_memory_watchdog_stops_the_runner_for_a_restart(
    tidings: Tidings, feeds: tuple[SchedFeeds, str],
) -> None:
    _, base = feeds
    await add(tidings, base, "healthy", datetime.now(UTC))
    watchdog = MemoryWatchdog(limit_mb=1)
    runner = Runner(tidings.pipeline_env(), options=QUIET, watchdog=watchdog)
    assert await asyncio.wait_for(runner.run(), 10) is StopReason.MEMORY
    assert watchdog.peak_mb > 1
    assert all(r.outcome is not RunOutcome.RUNNING for r in tidings.sources.runs(limit=10))
    assert MemoryWatchdog(limit_mb=0).exceeded() is None  # 0 disables the check


def test_restart_in_place_replaces_the_process(tmp_path: Path) -> None:
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent("""
        import os, sys
        from tidings.schedule.watchdog import restart_in_place
        if len(sys.argv) == 1:
            print("first", os.getpid(), flush=True)
            restart_in_place([sys.argv[0], "again"])
        print("second", os.getpid(), flush=True)
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=60, check=True).stdout.split()
    assert out[0] == "first"
    assert out[2] == "second"
    assert out[1] == out[3]  # the same process, a fresh program


# ------------------------------------------------------------- two runners


def _runner_thread(settings: Settings, start: datetime, seconds: float) -> dict[str, int]:
    async def main() -> dict[str, int]:
        clock = AcceleratedClock(start, 600.0)
        t = Tidings.open(settings, clock=clock.now)
        try:
            # five per tick: one runner cannot take all sixteen due sources at once,
            # so both get work whichever ticks first
            runner = Runner(t.pipeline_env(), clock=clock, options=replace(QUIET, per_tick=5))
            task = asyncio.create_task(runner.run())
            await asyncio.sleep(seconds)
            runner.stop()
            await task
            return {"started": runner.stats.started, "finished": runner.stats.finished}
        finally:
            await t.aclose()

    return asyncio.run(main())


@pytest.mark.slow
async def test_two_runners_on_one_database_never_fetch_a_source_twice_at_once(
    settings: Settings, tidings: Tidings, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Both tick at the same instants over the same due sources; only the atomic claim
    keeps them apart. (Few sources, and a lease of an hour: at 600x the 10-minute
    lease is one real second, which a fetch on a loaded machine can outlast; real runs
    cannot: their timeout is far shorter than the lease.)"""
    monkeypatch.setattr(timing, "LEASE_MIN", 60)
    clock = AcceleratedClock(NOW, 600.0)
    f = SchedFeeds(clock.now, delay=0.02)
    settings = replace(settings, per_host_concurrency=4)
    async with serve(f.app()) as base:
        for i in range(16):
            await add(tidings, base, f"healthy{i}", NOW, interval_min=15)
        a, b = await asyncio.gather(
            asyncio.to_thread(_runner_thread, settings, NOW, 8.0),
            asyncio.to_thread(_runner_thread, settings, NOW, 8.5))  # not closing at once
    assert f.overlaps == []
    assert a["finished"] > 0 and b["finished"] > 0, (a, b)
    for source in tidings.sources.all():
        runs = sorted(tidings.sources.runs(source.id, limit=100), key=lambda r: r.started_at)
        assert len(runs) >= 4, source.id  # 80 simulated minutes at a 15-minute interval
        for r1, r2 in pairwise(runs):
            assert r1.finished_at is not None and r1.finished_at <= r2.started_at


# ---------------------------------------------- daily, weekly jobs and webhooks


class Hook:
    def __init__(self) -> None:
        self.got: list[dict[str, Any]] = []

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/hook", self.handle)
        return app

    async def handle(self, request: web.Request) -> web.Response:
        self.got.append(await request.json())
        return web.Response(text="ok")


@pytest.mark.slow
async def test_daily_intervals_weekly_report_and_item_webhooks(
    tidings: Tidings,
) -> None:
    monday = datetime(2026, 3, 2, 4, 0, tzinfo=UTC)
    clock = AcceleratedClock(monday, 600.0)
    f = SchedFeeds(clock.now)
    hook = Hook()
    async with serve(f.app()) as base, serve(hook.app()) as hook_base:
        await add(tidings, base, "healthy", monday)
        await add(tidings, base, "failing", monday)
        options = replace(QUIET, adapt_at=time(4, 20), report_weekday=0, report_at=time(4, 40))
        sender = WebhookSender(tidings.fetcher, [f"{hook_base}/hook"], clock=clock.now,
                               sleep=clock.sleep)
        runner = Runner(tidings.pipeline_env(), clock=clock, options=options, webhooks=sender)
        task = asyncio.create_task(runner.run())
        await asyncio.sleep(3600 / clock.speed)  # 04:00 -> 05:00
        runner.stop()
        await asyncio.wait_for(task, 10)

    items = [e for e in hook.got if e["type"] == "items"]
    reports = [e for e in hook.got if e["type"] == "health_report"]
    assert sorted(i["title"] for e in items for i in e["items"]) == [
        "healthy post 0", "healthy post 1", "healthy post 2"]
    assert len(reports) == 1
    assert "failing" in reports[0]["text"]
    assert reports[0]["report"]["sources"]["degraded"] + \
        reports[0]["report"]["sources"]["failing"] == 1
    # 04:20: 3 items in 7 days is far below one a day, so both go to the free maximum
    assert tidings.sources.get("healthy").interval_min == 60
    assert tidings.sources.get("failing").interval_min == 60
    env = tidings.pipeline_env()
    assert env.store.get_mark(jobs.ADAPT_MARK) == "2026-03-02"
    assert not await jobs.weekly_report(env.store, env.writer, clock.now(), None)  # once a week
