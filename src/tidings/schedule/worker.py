"""One ``tidings worker`` process: the queue's worker, its signals and what it tells.

A worker says what it does, as ``tidings serve`` does: a start line (the
database, the queues, how many jobs at once), one line per round of collection
(the collect jobs that ran since the last line: how many were ok, what was new,
each failing source with its reason), the scheduler's stalled-job troubles (once
each), a lost database, and the stop, with its signal.

procrastinate's own signal handlers are off: this module's handlers log the stop
and ask the queue's worker to finish, giving running jobs the settings'
``shutdown_grace_seconds``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import platform
import signal
from dataclasses import dataclass, field
from typing import Any

from procrastinate import exceptions as pexc
from procrastinate.worker import Worker

from tidings.errors import StorageError
from tidings.pipeline.env import PipelineEnv
from tidings.pipeline.fair import taking_turns
from tidings.schedule import catalog, cluster
from tidings.settings import Settings

log = logging.getLogger(__name__)

@dataclass(slots=True)
class Stopper:
    """SIGTERM / SIGINT: log the stop once and ask the queue's worker to finish."""

    grace: float
    signal: str | None = None
    worker: Worker | None = None
    stopped: asyncio.Event = field(default_factory=asyncio.Event)

    def install(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.request, sig.name)

    def remove(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)

    def request(self, name: str) -> None:
        if self.signal is not None:
            return
        self.signal = name
        log.info("worker stopping on %s: running jobs get up to %.0f s to finish", name,
                 self.grace)
        self.stopped.set()
        if self.worker is not None:
            self.worker.stop()  # type: ignore[no-untyped-call]

    async def pause(self, seconds: float) -> None:
        """Sleep ``seconds``, or less when a stop comes."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stopped.wait(), seconds)


async def run_worker(envs: list[PipelineEnv], settings: Settings, connector: Any, *,
                     concurrency: int, database: str = "",
                     stalled_after: float = cluster.STALLED_AFTER,
                     heartbeat: float = cluster.HEARTBEAT_SECONDS) -> None:
    """Work until SIGTERM / SIGINT; a lost database means a retry with backoff.
    ``envs``: one per writer thread (see :class:`~tidings.schedule.cluster.WorkerContext`);
    ``database``: the archive as the start line names it (no password)."""
    turns = [taking_turns(e) for e in envs]
    ctx = cluster.WorkerContext(turns, settings, cluster.job_context(turns[0], settings),
                                stalled_after)
    name = f"{platform.node()}:{os.getpid()}"
    stopper = Stopper(settings.shutdown_grace_seconds)
    stopper.install()
    cluster.enter(ctx)
    log.info("worker %s started: database %s, queues %s, concurrency %d, %d writer "
             "thread(s)", name, database or "?", ", ".join(cluster.QUEUES), concurrency,
             max(1, len(envs) - 1))
    try:
        await _work(cluster.make_app(connector), ctx, stopper, name=name,
                    concurrency=concurrency, heartbeat=heartbeat)
    finally:
        ctx.rounds.flush()
        with contextlib.suppress(Exception):  # a lost database: the holds run out
            await catalog.give_back(ctx.jobs)
        cluster.leave(ctx)
        stopper.remove()
        log.info("worker %s stopped%s: %d source runs in all", name,
                 f" on {stopper.signal}" if stopper.signal else "", ctx.rounds.collected)


async def _work(app: Any, ctx: cluster.WorkerContext, stopper: Stopper, *, name: str,
                concurrency: int, heartbeat: float) -> None:
    delay = 1.0
    while stopper.signal is None:
        try:
            async with app.open_async():
                delay = 1.0
                worker = Worker(
                    app=app, queues=list(cluster.QUEUES), concurrency=concurrency,
                    name=name, update_heartbeat_interval=heartbeat,
                    stalled_worker_timeout=ctx.stalled_after,
                    shutdown_graceful_timeout=ctx.settings.shutdown_grace_seconds,
                    delete_jobs="successful",  # failed ones stay, for `tidings status`
                    install_signal_handlers=False)
                stopper.worker = worker
                if stopper.signal is None:  # no await since the check: no stop is lost
                    await worker.run()  # type: ignore[no-untyped-call]
                return
        except (pexc.ConnectorException, StorageError, OSError) as exc:
            log.warning("worker lost the database (%s); retrying in %.0f s",
                        " ".join(str(exc).split())[:200], delay)
            await stopper.pause(delay)
            delay = min(delay * 2, 60.0)
