"""``Tidings.sources``: what a person does with sources - add, change, remove, look.

A new source is checked here before anything is stored: its config validated
for its kind (R-SCHED-2), its id made from its title or URL (``naming``), its
first interval and cost class set; a page URL is turned into its best feed by
autodiscovery, ``x:@handle`` and ``wechat:<id>`` into accounts on the paid APIs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from tidings.app import naming
from tidings.app.accounts import AccountRef, account_ref, first_interval
from tidings.app.core import Core
from tidings.errors import ConfigError, NoFeedError
from tidings.model import CostClass, FeedCandidate, FetchRun, Source, SourceKind
from tidings.pipeline.config import cost_class_of, identity_mode_of, validate_config
from tidings.pipeline.timing import COST_CLAMPS
from tidings.readers import feed_kind, kind_of
from tidings.schedule import ops
from tidings.schedule.ops import ReportReads, SourceOverview
from tidings.store.base import UNSET, SourceStats, SourceUpdate
from tidings.store.runs import RunReads
from tidings.store.sources import SourceWrites
from tidings.store.stats import StatsReads

Progress = Callable[[int, int], None]


class _Store(ReportReads, RunReads, StatsReads, Protocol):
    """What the sources' pages read: the sources, their runs, figures and overview."""


class Sources:
    """See the module docstring."""

    def __init__(self, core: Core) -> None:
        self._core = core
        self._store: _Store = core.store
        self._writer = core.writer

    def all(self) -> list[Source]:
        return self._store.list_sources()

    def get(self, source_id: str) -> Source:
        """The source ``source_id``; NotFoundError names it when there is none."""
        return self._store.get_source(source_id)

    async def create(
        self, url: str, *, kind: SourceKind | None = None, title: str = "",
        source_id: str | None = None, config: Mapping[str, Any] | None = None,
        site_url: str | None = None, priority: int = 0, folder: str | None = None,
        taken: set[str] | None = None,
    ) -> Source:
        """Store a new source exactly as given (no discovery), its config validated.

        ``taken`` (the ids in use, kept up to date here) spares bulk imports a
        listing of every source per new one. ``kind`` defaults to the feed kind.
        """
        kind = kind or feed_kind()
        if not kind_of(kind).fetched:
            url = naming.external_url(url)
        if self._store.find_source_by_url(url) is not None:
            raise ConfigError(f"{url}: already a source")
        clean = validate_config(kind, config or {})
        if taken is None:
            taken = {s.id for s in self._store.list_sources()}
        sid = (naming.check_source_id(source_id) if source_id
               else naming.slugify(naming.source_slug(title, url), taken))
        if sid in taken:
            raise ConfigError(f"source id {sid!r} is already taken")
        now = self._core.clock()
        cost = cost_class_of(kind, clean)
        interval = first_interval(kind, self._core.settings.default_interval_min)
        if cost is CostClass.PAID_RENDER:  # a paid render starts at 60 minutes (R-SCHED-5)
            interval = min(max(interval, COST_CLAMPS[cost].low), COST_CLAMPS[cost].high)
        source = Source(
            id=sid, kind=kind, url=url, title=title, config=clean, interval_min=interval,
            next_fetch_at=now, created_at=now, site_url=site_url, priority=priority,
            folder=folder or None, cost_class=cost, identity_mode=identity_mode_of(kind, clean),
        )
        added: Source = await self._writer(_add, source)
        taken.add(sid)
        return added

    async def add(
        self, url: str, *, kind: SourceKind | None = None, title: str = "",
        source_id: str | None = None, config: Mapping[str, Any] | None = None,
        folder: str | None = None,
    ) -> Source:
        """Add a source as a person names it: a page by its best feed, an account by
        its ``x:`` / ``wechat:`` reference, any other kind as given."""
        from tidings.discovery import discover

        account = account_ref(url) if kind is None or kind_of(kind).account else None
        if account is not None:
            return await self.add_account(account, title=title, source_id=source_id,
                                          config=config, folder=folder)
        if kind is not None and kind != feed_kind():
            return await self.create(url, kind=kind, title=title, source_id=source_id,
                                     config=config, folder=folder)
        found = await discover(url, self._core.fetcher)
        if found.best is None:
            raise NoFeedError(f"{url}: no feed found on this page (try `tidings discover {url}`)")
        feed = found.best
        return await self.create(
            feed.url, title=title or feed.title, source_id=source_id, config=config,
            site_url=None if found.is_feed else found.final_url, folder=folder,
        )

    async def add_account(
        self, account: AccountRef, *, title: str = "", source_id: str | None = None,
        config: Mapping[str, Any] | None = None, folder: str | None = None,
        taken: set[str] | None = None,
    ) -> Source:
        """An X or WeChat account as a source (its config joined with ``config``)."""
        return await self.create(
            account.url, kind=account.kind, title=title or account.name,
            source_id=source_id or account.source_id,
            config={**(config or {}), **account.config}, folder=folder, taken=taken)

    async def import_accounts(self, accounts: Sequence[AccountRef], folder: str | None = None,
                              progress: Progress | None = None) -> tuple[list[Source], int]:
        """Add many accounts at once; returns (added, already present)."""
        existing = self._store.list_sources()
        urls, taken = {s.url for s in existing}, {s.id for s in existing}
        added: list[Source] = []
        for n, account in enumerate(accounts, 1):
            if account.url not in urls:
                added.append(await self.add_account(account, folder=folder, taken=taken))
                urls.add(account.url)
            if progress is not None:
                progress(n, len(accounts))
        return added, len(accounts) - len(added)

    async def discover(self, url: str) -> list[FeedCandidate]:
        """The feeds a page offers, best first (nothing stored)."""
        from tidings.discovery import discover

        return list((await discover(url, self._core.fetcher)).candidates)

    async def update(self, source_id: str, update: SourceUpdate) -> Source:
        """Change a source; a new config is validated for the source's kind first."""
        if update.config is not UNSET:
            kind = self._store.get_source(source_id).kind
            clean = validate_config(kind, update.config)
            update = replace(update, config=clean, cost_class=cost_class_of(kind, clean))
        source: Source = await self._writer(_update, source_id, update)
        return source

    async def remove(self, source_id: str) -> None:
        await self._writer(_delete, source_id)

    def runs(self, source_id: str | None = None, limit: int = 20) -> list[FetchRun]:
        """The latest fetch runs (of one source, or of all), newest first."""
        return self._store.list_runs(source_id, limit)

    def last_runs(self) -> dict[str, FetchRun]:
        """Each source's latest run (what its state is read from: ``app.state``)."""
        return self._store.last_runs()

    def stats(self, source_id: str) -> SourceStats:
        return self._store.source_stats(source_id, self._core.clock())

    def overview(self) -> list[SourceOverview]:
        """Per source: health, fail_count, interval, next fetch, last outcome and reason,
        items per day over 7 days, warnings (``tidings sources --json``: ``.as_json()``
        each). Four bulk queries in all, whatever the number of sources."""
        return ops.overview(self._store, self._core.clock())


def _add(unit: SourceWrites, source: Source) -> Source:
    return unit.add_source(source)


def _update(unit: SourceWrites, source_id: str, update: SourceUpdate) -> Source:
    return unit.update_source(source_id, update)


def _delete(unit: SourceWrites, source_id: str) -> None:
    unit.delete_source(source_id)
