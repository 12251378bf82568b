"""The embedded runner: one asyncio process keeps every source fresh (R-SCHED-1, -6).

Every tick (a minute) the database picks the due sources and leases them in
one transaction (``claim_due_sources``: longest overdue first, starred ones
first when the tick is full, next fetch pushed 10 minutes ahead), and each
picked source runs as its own task through ``collect_source``, which records
the outcome and the next fetch time. The runner never claims more than it
has free slots for, so no lease runs out while a source waits its turn; the
shared fetcher spaces requests per host (R-HTTP-8) while different hosts run
in parallel, and one slow source never holds up a tick.

Stopping (SIGTERM, or the memory watchdog) stops claiming, gives running
fetches ``shutdown_grace_seconds`` and then cancels the rest; a cancelled
source has its run marked abandoned and its lease lifted, so nothing stays
locked for the next process.
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
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tidings.errors import ConfigError
from tidings.model import RunCounts, Source
from tidings.pipeline import timing
from tidings.pipeline.collect import PipelineEnv, collect_source
from tidings.pipeline.extraction import extract_pending, prune_archive
from tidings.pipeline.round import threaded
from tidings.pipeline.writer import in_loop
from tidings.schedule import jobs, plan
from tidings.schedule.clock import Clock, SystemClock
from tidings.schedule.watchdog import MemoryWatchdog
from tidings.schedule.webhooks import WebhookSender
from tidings.settings import Settings

#: items indexed per call; each call is one short write transaction
INDEX_BATCH = 2000

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


def local_zone(name: str) -> tzinfo:
    """The named IANA zone, or the system's own when ``name`` is empty."""
    if not name:
        local = datetime.now().astimezone().tzinfo
        return local if local is not None else ZoneInfo("UTC")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(f"setting 'timezone': unknown time zone {name!r}") from exc


@dataclass(slots=True)
class RunnerStats:
    ticks: int = 0
    started: int = 0
    finished: int = 0
    abandoned: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)


class Runner:
    """See the module docstring. With a ``clock``, the pipeline reads time from it too."""

    def __init__(
        self, env: PipelineEnv, *, clock: Clock | None = None,
        options: RunnerOptions | None = None, webhooks: WebhookSender | None = None,
        watchdog: MemoryWatchdog | None = None,
    ) -> None:
        self.env = env if clock is None else replace(env, clock=clock.now)
        self.clock = clock or SystemClock()
        self.options = options or RunnerOptions.from_settings(env.settings)
        self.webhooks = webhooks
        self.watchdog = watchdog or MemoryWatchdog(self.options.memory_limit_mb)
        self.in_flight: dict[str, asyncio.Task[None]] = {}
        self._extracting: asyncio.Task[None] | None = None
        self._indexing: asyncio.Task[None] | None = None
        self.stats = RunnerStats()
        self._manual: list[str] = []
        self._wake = asyncio.Event()
        self._stop = asyncio.Event()
        self._reason = StopReason.REQUESTED
        now = self.clock.now()
        self._next_adapt = plan.next_daily(now, self.options.adapt_at, self.options.tz)
        self._next_report = plan.next_weekly(now, self.options.report_weekday,
                                             self.options.report_at, self.options.tz)

    # ----------------------------------------------------------------- control
    def stop(self, reason: StopReason = StopReason.REQUESTED) -> None:
        """Ask the runner to wind down (safe to call from a signal handler)."""
        if not self._stop.is_set():
            log.info("scheduler stopping (%s)", reason.value)
            self._reason = reason
            self._stop.set()

    def collect_now(self, source_ids: Iterable[str]) -> None:
        """Run these sources at the next opportunity, due or not (manual priority)."""
        self._manual.extend(source_ids)
        self._wake.set()

    def install_signal_handlers(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.stop)

    # -------------------------------------------------------------------- loop
    async def run(self) -> StopReason:
        """Tick until stopped; returns why it stopped, after every source is released."""
        store = self.env.store
        now = self.clock.now()
        store.abandon_stale_runs(timing.stale_runs_before(now), now)
        if self.webhooks is not None and self.webhooks.enabled:
            jobs.start_item_watermark(store)
            self.webhooks.start()
        # runs are stored on a thread of their own, off the loop the web pages share, and
        # CPU steps take turns through the loop, so neither sockets nor web pages wait
        offload = self.env.offload
        self.env, writer = threaded(self.env, offload)
        try:
            while not self._stop.is_set():
                started = self.clock.now()
                self.tick()
                self._periodic(self.clock.now())
                spent = (self.clock.now() - started).total_seconds()
                await self._pause(self.options.tick_seconds - spent)
        finally:
            await self.drain()
            writer.close()
            self.env = replace(self.env, writer=in_loop, offload=offload, starts=None)
        return self._reason

    def tick(self) -> list[Source]:
        """Claim what is due (manual requests first) and start it; returns what started."""
        now = self.clock.now()
        lease = timing.lease_until(now)
        store = self.env.store
        picked: list[Source] = []
        manual = [i for i in dict.fromkeys(self._manual) if i not in self.in_flight]
        self._manual.clear()
        if manual:
            picked += store.claim_due_sources(now, len(manual), lease, only=manual)
        o = self.options
        room = plan.tick_capacity(len(self.in_flight) + len(picked), o.concurrency, o.per_tick)
        picked += store.claim_due_sources(now, room, lease)
        for source in picked:
            if source.id in self.in_flight:  # its lease ran out while it still runs
                continue
            self.in_flight[source.id] = asyncio.create_task(
                self._collect(source), name=f"collect {source.id}")
        self.stats.ticks += 1
        self.stats.started += len(picked)
        return picked

    def _periodic(self, now: datetime) -> None:
        store = self.env.store
        if self.webhooks is not None and self.webhooks.enabled:
            jobs.push_new_items(store, self.webhooks)
        self._start_extraction()
        self._start_indexing()
        if now >= self._next_adapt:
            if jobs.daily_maintenance(store, now, self.options.tz):
                prune_archive(store, self.env.settings, now)
            self._next_adapt = plan.next_daily(now, self.options.adapt_at, self.options.tz)
        if now >= self._next_report:
            jobs.weekly_report(store, now, self.webhooks)
            self._next_report = plan.next_weekly(now, self.options.report_weekday,
                                                 self.options.report_at, self.options.tz)
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

    def _start_extraction(self) -> None:
        """Fetch pending article bodies behind collection, one bounded batch at a time
        (R-EXTRACT-1); a batch still running when the next tick comes is left alone."""
        if self._extracting is not None and not self._extracting.done():
            return
        self._extracting = asyncio.create_task(self._extract(), name="extract pending")

    def _start_indexing(self) -> None:
        """Keep the search index just behind collection (R-STORE-4), off the event loop."""
        if self._indexing is not None and not self._indexing.done():
            return
        self._indexing = asyncio.create_task(self._index(), name="search index")

    async def _index(self) -> None:
        store = self.env.store
        try:
            while await asyncio.to_thread(store.index_pending, INDEX_BATCH) > 0:
                pass
        except Exception:  # the index catches up on the next tick
            log.exception("search indexing failed")

    async def _extract(self) -> None:
        try:
            report = await extract_pending(self.env)
        except Exception:  # extraction trouble must not stop collection
            log.exception("extracting pending bodies failed")
            return
        if report.tried:
            log.info("extraction: %d tried, %d ok, %d unconfirmed", report.tried, report.ok,
                     report.unconfirmed)

    # ---------------------------------------------------------------- one source
    async def _collect(self, source: Source) -> None:
        try:
            counts = await collect_source(self.env, source)
        except asyncio.CancelledError:
            self.env.store.release_sources([source.id], self.clock.now())
            self.stats.abandoned += 1
            raise
        except Exception:  # a bug must not take the scheduler down; the lease retries it
            log.exception("collecting %s crashed", source.id)
            now = self.clock.now()
            self.env.store.release_sources([source.id], now, due_at=timing.lease_until(now))
            return
        else:
            self._count(counts)
        finally:
            self.in_flight.pop(source.id, None)

    def _count(self, counts: RunCounts) -> None:
        self.stats.finished += 1
        key = counts.outcome.value
        self.stats.outcomes[key] = self.stats.outcomes.get(key, 0) + 1

    async def drain(self) -> None:
        """Let running fetches finish within the grace time, cancel the rest, release them."""
        for job in (self._extracting, self._indexing):
            if job is not None and not job.done():
                job.cancel()  # pending bodies stay pending; unindexed items stay queued
                await asyncio.gather(job, return_exceptions=True)
        tasks = list(self.in_flight.values())
        if tasks:
            log.info("waiting up to %.0f s for %d running fetches",
                     self.options.grace_seconds, len(tasks))
            _, pending = await asyncio.wait(tasks, timeout=self.options.grace_seconds)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        if self.webhooks is not None:
            with contextlib.suppress(Exception):
                await self.webhooks.aclose(timeout=min(5.0, self.options.grace_seconds))
