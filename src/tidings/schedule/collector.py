"""The scheduler's collection part: each tick, claim what is due and run it (R-SCHED-1, -6).

The database picks the due sources and leases them in one write step
(``claim_due_sources``: longest overdue first, starred ones first when the tick
is full, next fetch pushed 10 minutes ahead), and each picked source runs as a
task of its own through ``collect_source``, which records the outcome and the
next fetch time. Never more is claimed than there are free slots for, so no
lease runs out while a source waits its turn; the shared fetcher spaces
requests per host (R-HTTP-8) while different hosts run in parallel, and one
slow source never holds up a tick.

A source cancelled by a stop has its run marked abandoned and its lease lifted,
so nothing stays locked for the next process.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from tidings.model import RunCounts, RunOutcome, Source
from tidings.pipeline import holders, timing
from tidings.pipeline.batch import Group, collect_group, groups
from tidings.pipeline.env import PipelineEnv
from tidings.schedule import plan
from tidings.store.ops import OpsWrites
from tidings.textutil import plural

log = logging.getLogger(__name__)


@dataclass(slots=True)
class CollectorStats:
    ticks: int = 0
    started: int = 0
    finished: int = 0
    abandoned: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)


def _claim(unit: holders.Claiming, now: datetime, manual: list[str], busy: int, concurrency: int,
           per_tick: int) -> list[Source]:
    """Manual requests first (due or not), then what is due, as far as slots are free."""
    holders.recover(unit, now)
    lease, holder = timing.lease_until(now), holders.lease_name()
    picked = (unit.claim_due_sources(now, len(manual), lease, only=manual, holder=holder)
              if manual else [])
    room = plan.tick_capacity(busy + len(picked), concurrency, per_tick)
    return picked + unit.claim_due_sources(now, room, lease, holder=holder)


def _release(unit: OpsWrites, source_ids: list[str], now: datetime,
             due_at: datetime | None = None) -> int:
    return unit.release_sources(source_ids, now, due_at=due_at)


class Collector:
    """Claims and runs sources; ``in_flight`` holds what runs now, by source id."""

    def __init__(self, env: PipelineEnv, *, concurrency: int, per_tick: int) -> None:
        self.env = env
        self.concurrency = concurrency
        self.per_tick = per_tick
        self.in_flight: dict[str, asyncio.Task[dict[str, RunCounts]]] = {}
        self._reports: set[asyncio.Task[None]] = set()  # round lines not written yet
        self.stats = CollectorStats()
        self._manual: list[str] = []

    def collect_now(self, source_ids: Iterable[str]) -> None:
        """Run these sources at the next tick, due or not (manual priority)."""
        self._manual.extend(source_ids)

    async def tick(self) -> list[Source]:
        """Claim what is due (manual requests first) and start it; returns what started."""
        now = self.env.clock()
        manual = [i for i in dict.fromkeys(self._manual) if i not in self.in_flight]
        self._manual.clear()
        picked = await self.env.writer(_claim, now, manual, len(self.in_flight),
                                       self.concurrency, self.per_tick)
        fresh = [s for s in picked if s.id not in self.in_flight]  # a lease ran out meanwhile
        started = []
        for group in groups(fresh):
            ids = [s.id for s in group.sources]
            task = asyncio.create_task(self._collect(group), name=f"collect {', '.join(ids)}")
            started.append(task)
            for source_id in ids:
                self.in_flight[source_id] = task
        if started:
            report = asyncio.create_task(_log_round(started))
            self._reports.add(report)
            report.add_done_callback(self._reports.discard)
        self.stats.ticks += 1
        self.stats.started += len(picked)
        return picked

    async def _collect(self, group: Group) -> dict[str, RunCounts]:
        ids = [s.id for s in group.sources]
        try:
            counts = await collect_group(self.env, group)
        except asyncio.CancelledError:
            await asyncio.shield(self.env.writer(_release, ids, self.env.clock()))
            self.stats.abandoned += len(ids)
            raise
        except Exception:  # a bug must not take the scheduler down; the lease retries it
            log.exception("collecting %s crashed", ", ".join(ids))
            now = self.env.clock()
            await self.env.writer(_release, ids, now, timing.lease_until(now))
            return {}
        else:
            for result in counts.values():
                self._count(result)
            return dict(counts)
        finally:
            for source_id in ids:
                self.in_flight.pop(source_id, None)

    def _count(self, counts: RunCounts) -> None:
        self.stats.finished += 1
        key = counts.outcome.value
        self.stats.outcomes[key] = self.stats.outcomes.get(key, 0) + 1

    async def drain(self, grace_seconds: float) -> None:
        """Let running fetches finish within the grace time, cancel the rest (released)."""
        tasks = list(set(self.in_flight.values()))
        if not tasks:
            return
        log.info("waiting up to %.0f s for %d running fetches", grace_seconds, len(tasks))
        _, pending = await asyncio.wait(tasks, timeout=grace_seconds)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)


async def _log_round(tasks: list[asyncio.Task[dict[str, RunCounts]]]) -> None:
    """One console line per tick's round once its sources are done (see ``log_round``)."""
    done = await asyncio.gather(*tasks, return_exceptions=True)
    log_round({sid: c for d in done if isinstance(d, dict) for sid, c in d.items()})


def log_round(results: Mapping[str, RunCounts]) -> None:
    """How many sources were ok, what was new, and each failing source with its reason:
    the line ``tidings serve`` and ``tidings worker`` show per round."""
    if not results:
        return
    ok = [c for c in results.values() if c.outcome in (RunOutcome.OK, RunOutcome.NOT_MODIFIED)]
    failed = {sid: c.error or c.outcome.value for sid, c in results.items()
              if c.outcome is RunOutcome.FAILED}
    line = (f"round: {len(ok)} of {plural(len(results), 'source')} ok, "
            f"{plural(sum(c.created for c in results.values()), 'new item')}")
    if failed:
        log.warning("%s; failed: %s", line, "; ".join(f"{k} ({v})" for k, v in failed.items()))
    else:
        log.info("%s", line)
