"""``Tidings.collection``: collecting - a round now, the scheduler, bodies, the raw archive.

A round fetches the due sources (or exactly the named ones, due or not) and then,
unless told not to, a bounded batch of pending bodies. The scheduler keeps every
source fresh until asked to stop; the raw archive lets feeds be parsed again
without a request (``reparse``) and is pruned daily.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime

from tidings.app.core import Core
from tidings.errors import ConfigError
from tidings.pipeline.extraction import ExtractReport, extract_pending, prune_archive
from tidings.pipeline.reparse import ReparseReport, reparse
from tidings.pipeline.round import RoundProgress, RoundReport, run_round
from tidings.readers import kind_of
from tidings.schedule.runner import Runner, StopReason
from tidings.schedule.webhooks import WebhookSender


class Collection:
    """See the module docstring."""

    def __init__(self, core: Core) -> None:
        self._core = core

    async def round(
        self, source_ids: Sequence[str] | None = None, *,
        progress: RoundProgress | None = None, extract: bool = True,
    ) -> RoundReport:
        """One round over the due sources (or exactly ``source_ids``); then, with
        ``extract``, a bounded batch of pending bodies (``report.extraction``)."""
        for sid in source_ids or ():
            if not kind_of(self._core.store.get_source(sid).kind).fetched:  # or NotFound
                raise ConfigError(f"source {sid!r} is external: it receives pushed items "
                                  "and is never collected")
        return await run_round(self._core.env(), only=source_ids, progress=progress,
                               extract=extract)

    async def extract_pending(self, limit: int | None = None,
                              source_id: str | None = None) -> ExtractReport:
        """Fetch and extract up to ``limit`` pending bodies (default: extract_per_round)."""
        return await extract_pending(self._core.env(), limit=limit, source_id=source_id)

    async def reparse(self, source_id: str | None = None,
                      since: datetime | None = None) -> ReparseReport:
        """Parse feeds and extract pages again from the raw archive; no request is sent."""
        core = self._core
        return await asyncio.to_thread(reparse, core.store, core.writer, core.settings,
                                       core.clock(), source_id=source_id, since=since,
                                       filters=core.filters)

    async def prune_raw(self) -> int:
        """Drop raw responses past ``raw_retention_days`` except the pages of current
        bodies; returns how many went. Run daily (the scheduler does)."""
        pruned: int = await self._core.writer(prune_archive, self._core.settings,
                                              self._core.clock())
        return pruned

    async def serve(self, *, signals: bool = True,
                    stop: asyncio.Event | None = None) -> StopReason:
        """Keep every source fresh until SIGTERM / SIGINT, ``stop`` or the memory watchdog.

        Returns ``StopReason.MEMORY`` when the process should restart itself
        (``Tidings.restart()`` after closing), ``StopReason.REQUESTED`` otherwise.
        Every source is released before this returns (nothing stays leased).
        ``stop`` lets a host that owns the signals (the web server) ask for the
        same graceful wind-down.
        """
        core = self._core
        webhooks = WebhookSender(core.fetcher, core.settings.webhooks, clock=core.clock)
        runner = Runner(core.env(), webhooks=webhooks)
        if signals:
            runner.install_signal_handlers()
        if stop is None:
            return await runner.run()
        watcher = asyncio.create_task(stop.wait())
        watcher.add_done_callback(lambda _: runner.stop())
        try:
            return await runner.run()
        finally:
            watcher.cancel()
