"""The scheduler's and operations' part of the ``tidings.app.Tidings`` facade.

Kept here as a mixin so that the facade module stays small: ``Tidings``
inherits it, and the CLI and web layers call these methods on the facade
(``tidings serve``, ``tidings sources --json``, ``tidings doctor``, the weekly
report) without importing ``tidings.schedule`` themselves.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import TYPE_CHECKING, NoReturn, Protocol

from tidings.schedule import ops
from tidings.schedule.doctor import DoctorReport, doctor
from tidings.schedule.ops import DiversityReport, HealthReport, SourceOverview
from tidings.schedule.runner import Runner, StopReason
from tidings.schedule.watchdog import restart_in_place
from tidings.schedule.webhooks import WebhookSender
from tidings.settings import Settings
from tidings.store.base import Storage

if TYPE_CHECKING:
    from tidings.net import Fetcher
    from tidings.pipeline.collect import PipelineEnv

__all__ = [
    "DiversityReport",
    "DoctorReport",
    "HealthReport",
    "OperationsMixin",
    "SourceOverview",
    "StopReason",
]


class _Host(Protocol):
    """What the mixin needs from the facade that inherits it."""

    settings: Settings
    store: Storage

    def clock(self) -> datetime: ...
    @property
    def fetcher(self) -> Fetcher: ...
    def pipeline_env(self) -> PipelineEnv: ...
    def health_report(self) -> HealthReport: ...


class OperationsMixin:

    async def serve_scheduler(
        self: _Host, *, signals: bool = True, stop: asyncio.Event | None = None,
    ) -> StopReason:
        """Keep every source fresh until SIGTERM / SIGINT, ``stop`` or the memory watchdog.

        Returns ``StopReason.MEMORY`` when the process should restart itself
        (call ``restart()`` after closing), ``StopReason.REQUESTED`` otherwise.
        Every source is released before this returns (nothing stays leased).
        ``stop`` lets a host that owns the signals (the web server) ask for the
        same graceful wind-down.
        """
        webhooks = WebhookSender(self.fetcher, self.settings.webhooks, clock=self.clock)
        runner = Runner(self.pipeline_env(), webhooks=webhooks)
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

    @staticmethod
    def restart() -> NoReturn:
        """Replace this process by a fresh one with the same command line (R-OPS-4)."""
        restart_in_place()

    def source_health(self: _Host) -> list[SourceOverview]:
        """Per source: health, fail_count, interval, next fetch, last outcome and reason,
        items per day over 7 days, warnings (``tidings sources --json``: ``.as_json()``
        each). Four bulk queries in all, whatever the number of sources."""
        return ops.overview(self.store, self.clock())

    def health_report(self: _Host) -> HealthReport:
        """The weekly source-health report, now (``.text()`` / ``.as_json()``)."""
        return ops.health_report(self.store, self.clock())

    def diversity(self: _Host, days: int = 30) -> DiversityReport:
        """Distinct titles per source, the reprint graph, original vs second-hand."""
        return ops.diversity_report(self.store, self.clock(), days)

    async def doctor(self: _Host, source_id: str, *, conditional: bool = False) -> DoctorReport:
        """Every stage of collecting one source, without storing (R-OPS-5)."""
        return await doctor(self.pipeline_env(), self.store.get_source(source_id),
                            conditional=conditional)
