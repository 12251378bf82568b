"""What every use case of one open archive shares: storage, its writer, the fetcher.

``Tidings`` (the lifecycle object) makes one :class:`Core` and hands it to each
use case (``tidings.sources``, ``tidings.items.query``, ...); a use case reads through
``store`` and writes through ``writer``, never around them, so the process keeps
one writer whichever use case a request goes through.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from tidings.net import Fetcher
from tidings.pipeline.config import parse_global_filters
from tidings.pipeline.env import PipelineEnv
from tidings.pipeline.spend import Ledger, parse_providers
from tidings.pipeline.timing import local_zone
from tidings.settings import Settings
from tidings.store.base import Storage
from tidings.store.writer import Writer

Clock = Callable[[], datetime]


def utcnow() -> datetime:
    return datetime.now(UTC)


class Core:
    """One archive's storage, writer, settings, clock, filters, paid-API ledger and
    (made on first use) guarded HTTP client."""

    def __init__(self, settings: Settings, store: Storage, clock: Clock = utcnow) -> None:
        self.settings = settings
        self.clock = clock
        self.filters = parse_global_filters(settings.filters)  # refused at once if bad
        self.store = store
        self.writer = Writer(store)
        self.ledger = Ledger(parse_providers(settings.providers), store, self.writer, clock,
                             local_zone(settings.timezone))
        self._fetcher: Fetcher | None = None

    @property
    def fetcher(self) -> Fetcher:
        """The one guarded HTTP client of this process (shared politeness limits)."""
        if self._fetcher is None:
            self._fetcher = Fetcher(self.settings)
        return self._fetcher

    def use_fetcher(self, fetcher: Fetcher) -> None:
        self._fetcher = fetcher

    def env(self) -> PipelineEnv:
        """What the pipeline and the scheduler work with (storage to read, the writer)."""
        return PipelineEnv(store=self.store, writer=self.writer, fetcher=self.fetcher,
                           settings=self.settings, clock=self.clock, filters=self.filters,
                           paid=self.ledger)

    async def aclose(self) -> None:
        if self._fetcher is not None:
            await self._fetcher.aclose()
            self._fetcher = None
        self.close()

    def close(self) -> None:
        """Finish queued writes and close storage."""
        self.writer.close()
        self.store.close()
