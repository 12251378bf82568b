"""The embedded runner: one asyncio process keeps every source fresh (R-SCHED-1, -6).

It is a loop of ticks (a minute each) over parts that each do one thing:

* the :class:`~tidings.schedule.collector.Collector` claims what is due and
  runs it;
* the background jobs of the catalogue (:mod:`tidings.schedule.catalog`: pending
  bodies, the search index, story placement, the daily and weekly jobs), each a
  :class:`~tidings.schedule.background.Repeating` kicked once its cadence passed;
* webhook delivery of new items (R-API-4);
* the memory watchdog (R-OPS-4).

Stopping (SIGTERM, or the watchdog) stops claiming, gives running fetches
``shutdown_grace_seconds`` and then cancels the rest; a cancelled source has
its run marked abandoned and its lease lifted, so nothing stays locked for the
next process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, time, tzinfo
from enum import StrEnum
from functools import partial
from zoneinfo import ZoneInfo

from tidings.model import RunCounts, Source
from tidings.pipeline import holders
from tidings.pipeline.env import PipelineEnv
from tidings.pipeline.fair import taking_turns
from tidings.pipeline.timing import local_zone
from tidings.schedule import jobs, plan
from tidings.schedule.background import Repeating
from tidings.schedule.catalog import CATALOG, Job, JobContext, give_back, run_job
from tidings.schedule.clock import Clock, SystemClock
from tidings.schedule.collector import Collector, CollectorStats
from tidings.schedule.watchdog import MemoryWatchdog
from tidings.schedule.webhooks import WebhookSender
from tidings.settings import Settings
from tidings.store.ops import OpsUnit

log = logging.getLogger(__name__)


class StopReason(StrEnum):
    REQUESTED = "requested"  # stop() was called (SIGTERM, SIGINT, a test)
    MEMORY = "memory"  # the watchdog asks for a restart (R-OPS-4)


@dataclass(frozen=True, slots=True)
class RunnerOptions:
    tick_seconds: float = plan.TICK_SECONDS
    per_tick: int = plan.MAX_PER_TICK
    concurrency: int = 64
    grace_seconds: float = 20.0
    tz: tzinfo = field(default_factory=lambda: ZoneInfo("UTC"))
    adapt_at: time = plan.ADAPT_AT
    report_weekday: int = plan.REPORT_WEEKDAY
    report_at: time = plan.REPORT_AT
    memory_limit_mb: float = 800.0

    @classmethod
    def from_settings(cls, settings: Settings) -> RunnerOptions:
        return cls(
            tick_seconds=settings.tick_seconds, per_tick=settings.sources_per_tick,
            concurrency=max(1, settings.collect_concurrency),
            grace_seconds=settings.shutdown_grace_seconds, tz=local_zone(settings.timezone),
            adapt_at=plan.parse_hhmm(settings.adapt_intervals_at),
            memory_limit_mb=settings.memory_limit_mb,
        )


def _abandon_stale(unit: OpsUnit, now: datetime) -> int:
    return holders.recover(unit, now)


class Runner:
    """See the module docstring. With a ``clock``, the pipeline reads time from it too."""

    def __init__(
        self, env: PipelineEnv, *, clock: Clock | None = None,
        options: RunnerOptions | None = None, webhooks: WebhookSender | None = None,
        watchdog: MemoryWatchdog | None = None,
    ) -> None:
        self.clock = clock or SystemClock()
        self.options = o = options or RunnerOptions.from_settings(env.settings)
        # CPU steps of concurrent runs take turns through the loop the web pages share
        self.env = taking_turns(env if clock is None else replace(env, clock=clock.now))
        self.collector = Collector(self.env, concurrency=o.concurrency, per_tick=o.per_tick)
        self.webhooks = webhooks
        self.watchdog = watchdog or MemoryWatchdog(o.memory_limit_mb)
        calendar = jobs.Calendar.starting(self.clock.now(), o.tz, o.adapt_at,
                                          o.report_weekday, o.report_at)
        self.context = JobContext(self.env, calendar, webhooks=webhooks)
        self.jobs = {job.name: Repeating(job.name, partial(self._run_job, job))
                     for job in CATALOG}
        self._kicked: dict[str, datetime] = {}
        self._wake = asyncio.Event()
        self._stop = asyncio.Event()
        self._reason = StopReason.REQUESTED

    @property
    def in_flight(self) -> dict[str, asyncio.Task[dict[str, RunCounts]]]:
        return self.collector.in_flight

    @property
    def stats(self) -> CollectorStats:
        return self.collector.stats

    # ----------------------------------------------------------------- control
    def stop(self, reason: StopReason = StopReason.REQUESTED) -> None:
        """Ask the runner to wind down (safe to call from a signal handler)."""
        if not self._stop.is_set():
            log.info("scheduler stopping (%s)", reason.value)
            self._reason = reason
            self._stop.set()

    def collect_now(self, source_ids: Iterable[str]) -> None:
        """Run these sources at the next opportunity, due or not (manual priority)."""
        self.collector.collect_now(source_ids)
        self._wake.set()

    def install_signal_handlers(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.stop)

    # -------------------------------------------------------------------- loop
    async def run(self) -> StopReason:
        """Tick until stopped; returns why it stopped, after every source is released."""
        env = self.env
        await env.writer(_abandon_stale, self.clock.now())
        if self.webhooks is not None and self.webhooks.enabled:
            await env.writer(jobs.start_item_watermark)
            self.webhooks.start()
        try:
            while not self._stop.is_set():
                started = self.clock.now()
                await self.tick()
                await self._periodic(self.clock.now())
                spent = (self.clock.now() - started).total_seconds()
                await self._pause(self.options.tick_seconds - spent)
        finally:
            await self.drain()
        return self._reason

    async def tick(self) -> list[Source]:
        """Claim what is due (manual requests first) and start it; returns what started."""
        return await self.collector.tick()

    async def _periodic(self, now: datetime) -> None:
        env = self.env
        if self.webhooks is not None and self.webhooks.enabled:
            await jobs.push_new_items(env.store, env.writer, self.webhooks)
        self._kick_due(now)
        over = self.watchdog.exceeded()
        if over is not None:
            log.warning("resident memory %.0f MiB is over the %.0f MiB limit",
                        over, self.options.memory_limit_mb)
            self.stop(StopReason.MEMORY)

    async def _pause(self, seconds: float) -> None:
        """Sleep until the next tick, a manual request or a stop, whichever comes first."""
        if self._stop.is_set() or self._wake.is_set():
            self._wake.clear()
            return
        waits = [asyncio.ensure_future(self.clock.sleep(seconds)),
                 asyncio.ensure_future(self._stop.wait()),
                 asyncio.ensure_future(self._wake.wait())]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()
            await asyncio.gather(*waits, return_exceptions=True)
        self._wake.clear()

    def _kick_due(self, now: datetime) -> None:
        """Start each catalogue job whose cadence passed since its last start (half a
        tick early counts: a job due every tick runs every tick)."""
        slack = self.options.tick_seconds / 2
        for job in CATALOG:
            last = self._kicked.get(job.name)
            if last is not None and (now - last).total_seconds() < job.cadence - slack:
                continue
            repeating = self.jobs[job.name]
            if not repeating.running:
                self._kicked[job.name] = now
                repeating.kick()

    async def _run_job(self, job: Job) -> None:
        done = await run_job(job, self.context)
        if done:
            log.info("%s: %s", job.name, done)

    async def drain(self) -> None:
        """Let running fetches finish within the grace time, cancel the rest, release them."""
        for repeating in self.jobs.values():  # each step is atomic: the rest waits
            await repeating.cancel()
        with contextlib.suppress(Exception):  # a lost database: the holds run out
            await give_back(self.context)
        await self.collector.drain(self.options.grace_seconds)
        if self.webhooks is not None:
            with contextlib.suppress(Exception):
                await self.webhooks.aclose(timeout=min(5.0, self.options.grace_seconds))
