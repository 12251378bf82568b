"""The embedded runner against real servers on 127.0.0.1, in accelerated time (R-SCHED-1..6).

Hours of schedule are replayed in seconds: the runner, the pipeline and the
test server all read one AcceleratedClock. Every fetch time recorded in the
fetch-run table is then checked against the rules of SPEC section 5.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Any

import pytest

from netservers import serve
from schedfeeds import SchedFeeds
from tidings.app import SearchQuery, SourceUpdate, Tidings
from tidings.model import FetchRun, Health, RunOutcome, SourceKind
from tidings.schedule.clock import AcceleratedClock
from tidings.schedule.runner import Runner, RunnerOptions, StopReason
from tidings.settings import Settings

pytestmark = pytest.mark.slow

#: simulated time starts at the real time: the fetcher reads Retry-After dates against it
START = datetime.now(UTC).replace(microsecond=0)
SPEED = 900.0
#: a run starts within one tick (60 s) plus scheduling noise after it is due
LATE = timedelta(minutes=3)
#: the daily and weekly jobs stay out of the way here (they have their own test)
OPTIONS = RunnerOptions(tz=UTC, grace_seconds=2.0, memory_limit_mb=0,
                        adapt_at=(START - timedelta(hours=1)).time(),
                        report_weekday=(START.weekday() + 3) % 7)


@dataclass
class Sim:
    clock: AcceleratedClock
    feeds: SchedFeeds
    base: str
    tidings: Tidings
    started: datetime = START

    async def add(self, name: str, interval: int = 30, **changes: Any) -> None:
        await self.tidings.sources.create(f"{self.base}/{name}.xml", kind=SourceKind("rss"),
                                          source_id=name)
        await self.tidings.sources.update(name, SourceUpdate(
            interval_min=interval, next_fetch_at=self.clock.now(), **changes))

    def runner(self, **options: object) -> Runner:
        return Runner(self.tidings.pipeline_env(), clock=self.clock,
                      options=replace(OPTIONS, **options))  # type: ignore[arg-type]

    async def run_for(self, runner: Runner, sim: timedelta) -> StopReason:
        self.started = self.clock.now()
        task = asyncio.create_task(runner.run())
        await asyncio.sleep(sim.total_seconds() / self.clock.speed)
        runner.stop()
        return await asyncio.wait_for(task, 30)

    def runs(self, source_id: str) -> list[FetchRun]:
        return sorted(self.tidings.sources.runs(source_id, limit=1000), key=lambda r: r.started_at)


async def make_sim(settings: Settings, start: datetime) -> AsyncIterator[Sim]:
    clock = AcceleratedClock(start, SPEED)
    feeds = SchedFeeds(clock.now)
    async with serve(feeds.app()) as base:
        t = Tidings.open(settings, create=True, clock=clock.now)
        try:
            yield Sim(clock, feeds, base, t)
        finally:
            await t.aclose()


@pytest.fixture
async def sim(settings: Settings) -> AsyncIterator[Sim]:
    async for s in make_sim(settings, START):
        yield s


def gaps(runs: list[FetchRun]) -> list[timedelta]:
    return [b.started_at - a.started_at for a, b in pairwise(runs)]


def assert_gaps(source_id: str, runs: list[FetchRun], expected_min: list[int]) -> None:
    """Each gap is at least the rule's minutes and at most a tick (plus noise) later."""
    got = gaps(runs)
    assert len(got) >= len(expected_min) - 1, f"{source_id}: only {len(runs)} runs"
    for i, (gap, want) in enumerate(zip(got, expected_min, strict=False)):
        low = timedelta(minutes=want)
        assert low <= gap <= low + LATE, (
            f"{source_id}: gap {i} is {gap}, the rule says {want} min "
            f"(all gaps: {[str(g) for g in got]})")


def assert_single_flight(source_id: str, runs: list[FetchRun]) -> None:
    for a, b in pairwise(runs):
        assert a.finished_at is not None
        assert a.finished_at <= b.started_at, f"{source_id}: runs overlap"


async def test_five_simulated_hours_follow_every_rule(sim: Sim) -> None:
    await sim.add("healthy")
    await sim.add("slow")
    await sim.add("failing", interval=15)
    await sim.add("recovering", interval=15)
    await sim.add("limited")
    await sim.add("gone")
    await sim.add("cached")
    reason = await sim.run_for(sim.runner(), timedelta(hours=5))
    assert reason is StopReason.REQUESTED

    runs = {sid: sim.runs(sid) for sid in
            ("healthy", "slow", "failing", "recovering", "limited", "gone", "cached")}
    for sid, rs in runs.items():
        assert rs, f"{sid} never ran"
        assert rs[0].started_at - sim.started <= LATE, f"{sid} started late"
        assert_single_flight(sid, rs)
        assert len(sim.feeds.hits[sid]) == len(rs), f"{sid}: one request per run"
    assert sim.feeds.overlaps == []

    assert_gaps("healthy", runs["healthy"], [30] * 9)
    assert {r.outcome for r in runs["healthy"][1:]} == {RunOutcome.NOT_MODIFIED}
    assert_gaps("slow", runs["slow"], [30] * 9)
    # backoff: interval x (fail_count + 2), fail_count before the failure
    assert_gaps("failing", runs["failing"], [30, 45, 60, 75])
    assert_gaps("recovering", runs["recovering"], [30, 45, 60, 15, 15, 15, 15])
    assert_gaps("limited", runs["limited"], [120, 30, 30, 30, 30, 30])  # Retry-After: 2 h
    assert_gaps("cached", runs["cached"], [90, 90])  # max-age pushes later than 30 min

    sources = {s.id: s for s in sim.tidings.sources.all()}
    assert sources["failing"].health is Health.FAILING
    assert sources["failing"].fail_count >= 5
    assert runs["failing"][1].outcome is RunOutcome.FAILED
    assert (sources["recovering"].health, sources["recovering"].fail_count) == (Health.OK, 0)
    assert sources["limited"].health is Health.OK
    assert len(runs["gone"]) == 1
    assert sources["gone"].muted_reason is not None
    now = sim.clock.now()
    for s in sources.values():  # nothing is left leased or running after the stop
        assert s.muted_reason or s.next_fetch_at is not None
    assert all(r.outcome is not RunOutcome.RUNNING for rs in runs.values() for r in rs)
    assert sources["healthy"].next_fetch_at is not None
    assert sources["healthy"].next_fetch_at <= now + timedelta(minutes=30)


async def test_the_runner_keeps_items_searchable(sim: Sim) -> None:
    """Indexing runs behind collection: items collected early are searchable later on."""
    await sim.add("healthy")
    await sim.run_for(sim.runner(), timedelta(minutes=45))
    store = sim.tidings.pipeline_env().store
    items = sim.tidings.items.query()
    assert items, "the feed produced items"
    assert store.unindexed_count() == 0
    hits = store.search(SearchQuery(terms=(items[0].title.split()[0],)))
    assert hits
