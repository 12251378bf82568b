"""The public facade: what the CLI and the web layer may use.

``Tidings`` wires settings, storage, the writer, the guarded HTTP client and the
pipeline together, so that the outermost layer never has to know which
database or which reader is behind a call (STYLE.md: cli/web import only this
facade, ``settings`` and ``model``).

Reads are plain methods. Every write is a coroutine: it is handed to the
process's one writer thread (``tidings.store.writer``), so the event loop that
serves web pages never waits for a database write, and the CLI runs the same
coroutines with ``asyncio.run``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import Any, NoReturn

from tidings.app import catalog, ingest
from tidings.app.access import Access
from tidings.app.accounts import AccountRef, account_ref, first_interval
from tidings.app.compat import Compat
from tidings.app.crawling import Crawls
from tidings.app.ingest import IngestReport, PushedItem
from tidings.app.paging import sort_time
from tidings.app.stories import Stories
from tidings.app.websub import WebSub
from tidings.errors import ConfigError, NoFeedError, NotFoundError, ReadOnlyError
from tidings.model import (
    BodyState,
    CostClass,
    FeedCandidate,
    FetchRun,
    Item,
    ItemBrief,
    PaidCall,
    RawResponse,
    SearchHit,
    Source,
    SourceKind,
    Spend,
)
from tidings.net import Fetcher, allow_list_from_settings, url_refusal
from tidings.opml import parse_opml
from tidings.pipeline import history
from tidings.pipeline.config import (
    cost_class_of,
    identity_mode_of,
    parse_global_filters,
    validate_config,
)
from tidings.pipeline.doctor import DoctorReport, doctor
from tidings.pipeline.env import PipelineEnv
from tidings.pipeline.extraction import ExtractReport, extract_item, extract_pending
from tidings.pipeline.history import HistoryReport
from tidings.pipeline.reparse import ReparseReport, reparse
from tidings.pipeline.round import RoundProgress, RoundReport, run_round
from tidings.pipeline.spend import Ledger, Trouble, parse_providers
from tidings.pipeline.timing import COST_CLAMPS, local_zone
from tidings.pipeline.upsert import UpsertOutcome, upsert_items
from tidings.schedule import jobs, ops
from tidings.schedule.ops import DiversityReport, HealthReport, SourceOverview
from tidings.schedule.runner import Runner, StopReason
from tidings.schedule.watchdog import restart_in_place
from tidings.schedule.webhooks import WebhookSender
from tidings.settings import Settings
from tidings.store import open_storage
from tidings.store.base import (
    UNSET,
    ArchiveStats,
    ItemQuery,
    SourceStats,
    SourceUpdate,
    Storage,
    Unit,
)
from tidings.store.query_syntax import parse_search
from tidings.store.writer import Writer

Clock = Callable[[], datetime]


def utcnow() -> datetime:
    return datetime.now(UTC)


class Tidings:
    """One open archive: storage, its writer, the fetcher and the pipeline, for one process."""

    def __init__(self, settings: Settings, store: Storage, *, clock: Clock = utcnow) -> None:
        self.settings = settings
        self.clock = clock
        self._filters = parse_global_filters(settings.filters)  # refused at once if bad
        self._store = store
        self._writer = Writer(store)
        self._fetcher: Fetcher | None = None
        #: the web reader's users, sessions and API tokens (R-API-6)
        self.access = Access(store, self._writer, clock)
        self.stories = Stories(store, self._writer, clock)
        #: what feeds out and the client APIs need beyond the JSON API (R-API-2/3)
        self.compat = Compat(store, self._writer, clock)
        #: the WebSub subscriber (R-RSS-8)
        self.websub = WebSub(store, self._writer, self.pipeline_env, settings, clock)
        self._ledger = Ledger(parse_providers(settings.providers), store, self._writer, clock,
                              local_zone(settings.timezone))

    # ------------------------------------------------------------ lifecycle
    @classmethod
    def open(cls, settings: Settings, *, create: bool = False, clock: Clock = utcnow) -> Tidings:
        """Open the archive in ``settings.data_dir``; with ``create`` make it if missing."""
        if not settings.database_url and not settings.database_path.exists() and not create:
            raise ConfigError(
                f"no archive in {settings.data_dir} (run `tidings init` first, "
                "or pass --data DIR / set TIDINGS_HOME)"
            )
        if create:
            settings.data_dir.mkdir(parents=True, exist_ok=True)
        return cls(settings, open_storage(settings), clock=clock)

    @property
    def crawls(self) -> Crawls:
        """The blogroll crawler's crawls (R-DISC-3)."""
        return Crawls(self, self._store)

    @property
    def fetcher(self) -> Fetcher:
        """The one guarded HTTP client of this process (shared politeness limits)."""
        if self._fetcher is None:
            self._fetcher = Fetcher(self.settings)
        return self._fetcher

    def use_fetcher(self, fetcher: Fetcher) -> None:
        """Fetch through ``fetcher`` from now on (an embedder's, or a test's with its own
        resolver); ``aclose`` closes it. Call before the first fetch."""
        self._fetcher = fetcher

    def pipeline_env(self) -> PipelineEnv:
        """What the pipeline and the scheduler work with (storage to read, the writer)."""
        return PipelineEnv(store=self._store, writer=self._writer, fetcher=self.fetcher,
                           settings=self.settings, clock=self.clock, filters=self._filters,
                           paid=self._ledger)

    async def aclose(self) -> None:
        if self._fetcher is not None:
            await self._fetcher.aclose()
            self._fetcher = None
        self.close()

    def close(self) -> None:
        """Finish queued writes and close storage (``aclose`` when a fetcher may be open)."""
        self._writer.close()
        self._store.close()

    async def write(self, step: Callable[[Unit], Any]) -> Any:
        """Run one write step of the caller's own (tests, maintenance scripts)."""
        return await self._writer(step)

    # -------------------------------------------------------------- sources
    def sources(self) -> list[Source]:
        return self._store.list_sources()

    def source(self, source_id: str) -> Source:
        return self._store.get_source(source_id)

    def folders(self) -> list[str]:
        return self._store.list_folders()

    async def create_source(
        self, url: str, *, kind: SourceKind = SourceKind.RSS, title: str = "",
        source_id: str | None = None, config: Mapping[str, Any] | None = None,
        site_url: str | None = None, priority: int = 0, folder: str | None = None,
        taken: set[str] | None = None,
    ) -> Source:
        """Store a new source after validating its config for its kind (R-SCHED-2).

        ``taken`` (the ids in use, kept up to date here) spares bulk imports a
        listing of every source per new one.
        """
        if kind is SourceKind.EXTERNAL:
            url = catalog.external_url(url)
        if self._store.find_source_by_url(url) is not None:
            raise ConfigError(f"{url}: already a source")
        clean = validate_config(kind, config or {})
        if taken is None:
            taken = {s.id for s in self._store.list_sources()}
        sid = (catalog.check_source_id(source_id) if source_id
               else catalog.slugify(catalog.source_slug(title, url), taken))
        if sid in taken:
            raise ConfigError(f"source id {sid!r} is already taken")
        now = self.clock()
        cost = cost_class_of(kind, clean)
        interval = first_interval(kind, self.settings.default_interval_min)
        if cost is CostClass.PAID_RENDER:  # a paid render starts at 60 minutes (R-SCHED-5)
            interval = min(max(interval, COST_CLAMPS[cost].low), COST_CLAMPS[cost].high)
        source = Source(
            id=sid, kind=kind, url=url, title=title, config=clean, interval_min=interval,
            next_fetch_at=now,
            created_at=now, site_url=site_url, priority=priority, folder=folder or None,
            cost_class=cost, identity_mode=identity_mode_of(kind, clean),
        )
        added: Source = await self._writer(_add_source, source)
        taken.add(sid)
        return added

    async def add_source(
        self, url: str, *, kind: SourceKind | None = None, title: str = "",
        source_id: str | None = None, config: Mapping[str, Any] | None = None,
        folder: str | None = None,
    ) -> Source:
        """Add a source; a page URL is turned into its best feed by autodiscovery,
        ``x:@handle`` and ``wechat:<id>`` into accounts on the paid APIs."""
        from tidings.discovery import discover

        account = account_ref(url) if kind in (None, SourceKind.X, SourceKind.WECHAT) else None
        if account is not None:
            return await self.add_account(account, title=title, source_id=source_id,
                                          config=config, folder=folder)

        if kind is not None and kind is not SourceKind.RSS:
            return await self.create_source(url, kind=kind, title=title, source_id=source_id,
                                            config=config, folder=folder)
        found = await discover(url, self.fetcher)
        if found.best is None:
            raise NoFeedError(f"{url}: no feed found on this page (try `tidings discover {url}`)")
        feed = found.best
        return await self.create_source(
            feed.url, title=title or feed.title, source_id=source_id, config=config,
            site_url=None if found.is_feed else found.final_url, folder=folder,
        )

    async def add_account(
        self, account: AccountRef, *, title: str = "", source_id: str | None = None,
        config: Mapping[str, Any] | None = None, folder: str | None = None,
        taken: set[str] | None = None,
    ) -> Source:
        """An X or WeChat account as a source (its config joined with ``config``)."""
        return await self.create_source(
            account.url, kind=account.kind, title=title or account.name,
            source_id=source_id or account.source_id, config={**(config or {}),
                                                               **account.config},
            folder=folder, taken=taken)

    async def import_accounts(
        self, accounts: Sequence[AccountRef], folder: str | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> tuple[list[Source], int]:
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
        from tidings.discovery import discover

        return list((await discover(url, self.fetcher)).candidates)

    async def update_source(self, source_id: str, update: SourceUpdate) -> Source:
        """Change a source; a new config is validated for the source's kind first."""
        if update.config is not UNSET:
            kind = self._store.get_source(source_id).kind
            clean = validate_config(kind, update.config)
            update = replace(update, config=clean, cost_class=cost_class_of(kind, clean))
        source: Source = await self._writer(_update_source, source_id, update)
        return source

    async def remove_source(self, source_id: str) -> None:
        await self._writer(_delete_source, source_id)

    async def rename_folder(self, old: str, new: str) -> int:
        moved: int = await self._writer(_rename_folder, old, new)
        return moved

    async def delete_folder(self, name: str) -> int:
        moved: int = await self._writer(_delete_folder, name)
        return moved

    def runs(self, source_id: str | None = None, limit: int = 20) -> list[FetchRun]:
        return self._store.list_runs(source_id, limit)

    def source_stats(self, source_id: str) -> SourceStats:
        return self._store.source_stats(source_id, self.clock())

    # ---------------------------------------------------------------- items
    def items(self, query: ItemQuery | None = None) -> list[Item]:
        return self._store.list_items(query or ItemQuery())

    def briefs(self, query: ItemQuery) -> list[ItemBrief]:
        """What ``items`` returns, as list rows: no bodies (for pages of many items)."""
        return self._store.list_briefs(query)

    def item(self, item_id: int) -> Item:
        return self._store.get_item(item_id)

    def search(self, text: str, *, ranked: bool = False, limit: int = 50,
               before: tuple[datetime, int] | None = None) -> list[SearchHit]:
        """Search with the R-API-5 syntax; bad syntax raises ConfigError.

        Call :meth:`index_recent` first so that what was collected a moment ago is
        found too (the scheduler keeps the index just behind collection anyway).
        """
        query = replace(parse_search(text, ranked=ranked, limit=limit), before=before)
        return self._store.search(query)

    async def index_recent(self) -> int:
        """Index a bounded batch of items not indexed yet, if there are any: what a
        search does first, so that a search never waits long behind a big backlog."""
        if not self._store.unindexed_count():
            return 0
        try:
            indexed = await jobs.index_batch(self._store, self._writer)
        except ReadOnlyError:
            return 0  # a read-only archive is searched as it was last indexed
        return indexed

    async def mark_read(self, item_ids: Sequence[int], read: bool = True) -> int:
        changed: int = await self._writer(_set_read, list(item_ids), read)
        return changed

    async def star(self, item_ids: Sequence[int], starred: bool = True) -> int:
        changed: int = await self._writer(_set_starred, list(item_ids), starred)
        return changed

    async def delete_item(self, item_id: int) -> Item:
        """Delete one item for good; a tombstone keeps its identity key so the next
        fetch of its feed does not bring it back (R-DEDUP-11). Returns what it was."""
        item = self._store.get_item(item_id)  # NotFoundError for an unknown id
        await self._writer(_delete_item, item_id, self.clock())
        return item

    def stats(self) -> ArchiveStats:
        return self._store.archive_stats()

    def spend_today(self) -> Mapping[str, Spend]:
        """Calls and cost of each paid API since local midnight (R-SCHED-3)."""
        return self._ledger.today()

    def paid_calls(self, provider: str | None = None, limit: int = 100) -> list[PaidCall]:
        """The latest recorded calls to paid APIs, newest first."""
        return self._store.paid_calls(provider, limit=limit)

    def spend_by_day(self, days: int = 7) -> dict[str, dict[str, Spend]]:
        """Calls and cost per local day (ISO date) and provider, the last ``days`` days."""
        return self._ledger.by_day(days)

    def paid_troubles(self) -> Mapping[str, Trouble]:
        """Paid APIs with a provider-wide problem now (bad key, no balance, down)."""
        return self._ledger.troubles()

    def reprints(self, fps: Sequence[str]) -> dict[str, list[ItemBrief]]:
        """Items sharing each title fingerprint, earliest first (folding in views, R-DEDUP-8)."""
        return self._store.fingerprint_groups(fps) if fps else {}

    def raw_pages(self, item_id: int, limit: int = 10) -> list[RawResponse]:
        """The archived responses of one item, newest first (review page, R-EXTRACT-6)."""
        key = self._store.get_item(item_id).key
        found = sorted(self._store.iter_raw(item_key=key), key=lambda r: r.fetched_at)
        return found[::-1][:limit]

    def raw_page(self, item_id: int) -> RawResponse | None:
        """The newest archived page of an item (what its body was extracted from)."""
        pages = self.raw_pages(item_id, limit=1)
        return pages[0] if pages else None

    def review_items(self, limit: int = 50,
                     before: tuple[datetime, int] | None = None) -> list[Item]:
        """Items whose extraction failed, newest first (R-EXTRACT-6); keyset paging as in
        ``items``. Summary-only items are left out: nobody tried to extract them."""
        out: list[Item] = []
        while len(out) < limit:
            page = self._store.list_items(ItemQuery(body_state=BodyState.UNCONFIRMED,
                                                    before=before, limit=200))
            out.extend(i for i in page if not i.raw.get("summary_only"))
            if len(page) < 200:
                break
            before = (sort_time(page[-1]), page[-1].id)
        return out[:limit]

    async def index_pending(self) -> int:
        """Bring the search index up to date; returns how many items were indexed."""
        return await jobs.index_pending(self._store, self._writer)

    async def ingest(self, source_id: str, items: Sequence[PushedItem]) -> IngestReport:
        """Store pushed items (R-INGEST): see ``tidings.app.ingest``. Nothing is stored
        when the request as a whole is refused (ConfigError)."""
        keep, skipped = ingest.screen(items)
        template = ingest.external_source(source_id, self.clock(),
                                          self.settings.default_interval_min)
        report: IngestReport = await self._writer(ingest.ingest_step, template, keep, skipped,
                                                  self.clock())
        return report

    # ----------------------------------------------------------- collection
    async def collect(
        self, source_ids: Sequence[str] | None = None, *,
        progress: RoundProgress | None = None, extract: bool = True,
    ) -> RoundReport:
        """One round over the due sources (or exactly ``source_ids``, due or not); then,
        with ``extract``, a bounded batch of pending bodies (``report.extraction``)."""
        if source_ids:
            for sid in source_ids:
                if self._store.get_source(sid).kind is SourceKind.EXTERNAL:  # or NotFoundError
                    raise ConfigError(f"source {sid!r} is external: it receives pushed items "
                                      "and is never collected")
        return await run_round(self.pipeline_env(), only=source_ids, progress=progress,
                               extract=extract)

    async def extract_pending(self, limit: int | None = None,
                              source_id: str | None = None) -> ExtractReport:
        """Fetch and extract up to ``limit`` pending bodies (default: extract_per_round)."""
        return await extract_pending(self.pipeline_env(), limit=limit, source_id=source_id)

    async def retry_extraction(self, item_id: int) -> Item:
        """Fetch and extract one item's page again now (the review page's retry)."""
        item = self._store.get_item(item_id)
        try:
            source: Source | None = self._store.get_source(item.source_id)
        except NotFoundError:
            source = None
        await extract_item(self.pipeline_env(), item, source)
        return self._store.get_item(item_id)

    async def reparse(self, source_id: str | None = None,
                      since: datetime | None = None) -> ReparseReport:
        """Parse feeds and extract pages again from the raw archive; no request is sent."""
        return await asyncio.to_thread(reparse, self._store, self._writer, self.settings,
                                       self.clock(), source_id=source_id, since=since,
                                       filters=self._filters)

    async def prune_raw(self) -> int:
        """Drop raw responses past ``raw_retention_days`` except the pages of current
        bodies; returns how many went. Run daily (the scheduler does)."""
        from tidings.pipeline.extraction import prune_archive

        pruned: int = await self._writer(prune_archive, self.settings, self.clock())
        return pruned

    # ------------------------------------------------------- source lists
    async def add_default_sources(self) -> list[Source]:
        """The default sources of SPEC §13 (``data/default_sources.json``) not already present."""
        existing = self._store.list_sources()
        urls, taken = {s.url for s in existing}, {s.id for s in existing}
        return [await self.create_source(entry["url"], title=entry["title"],
                                         source_id=entry["id"],
                                         priority=2 - int(entry["tier"]), taken=taken)
                for entry in catalog.default_sources() if entry["url"] not in urls]

    async def import_opml(
        self, data: bytes, origin: str = "OPML file",
        progress: Callable[[int, int], None] | None = None,
        notes: list[str] | None = None,
    ) -> tuple[list[Source], int]:
        """Add every feed of an OPML document; returns (added, already present).

        ``notes`` receives one line per outline skipped (and why) and per added feed
        the guard will refuse by its address alone (decided without any request)."""
        notes = [] if notes is None else notes
        feeds = parse_opml(data, origin, skipped=notes)
        allow = allow_list_from_settings(self.settings)
        notes.extend(f"{feed.url}: added, but the guard will refuse it ({why}); "
                     "allow_private_hosts lets it through" for feed in feeds
                     if (why := url_refusal(feed.url, allow)) is not None)
        existing = self._store.list_sources()
        urls, taken = {s.url for s in existing}, {s.id for s in existing}
        added: list[Source] = []
        for n, feed in enumerate(feeds, 1):
            account = account_ref(feed.url)
            url = account.url if account is not None else feed.url
            if url not in urls and account is not None:
                added.append(await self.add_account(
                    account, title=feed.title, folder=feed.category or None, taken=taken))
            elif url not in urls:
                added.append(await self.create_source(
                    feed.url, title=feed.title, folder=feed.category or None,
                    site_url=feed.site_url or None, taken=taken))
            urls.add(url)
            if progress is not None:
                progress(n, len(feeds))
        return added, len(feeds) - len(added)

    async def import_history(self, lines: Iterable[str],
                             source_id: str | None = None) -> HistoryReport:
        """Store exported items (JSON lines) as imported history (R-DEDUP-5), a batch
        per write; bad lines are noted in the report and skipped, good ones all kept."""
        if source_id is not None:
            self._store.get_source(source_id)  # NotFoundError names it
        sources = {s.id: s for s in self._store.list_sources()}
        report = HistoryReport()
        numbered = enumerate(lines, 1)
        while batch := list(islice(numbered, history.BATCH)):
            for sid, items in history.read_history(batch, source_id, set(sources),
                                                   report).items():
                outcome: UpsertOutcome = await self._writer(
                    upsert_items, sources[sid], items, self.clock(), imported=True)
                report.created += outcome.created
                report.present += len(items) - outcome.created
        return report

    def export_opml(self) -> str:
        return catalog.opml_of(self._store.list_sources())

    # ------------------------------------------------------------ operations
    async def serve_scheduler(
        self, *, signals: bool = True, stop: asyncio.Event | None = None,
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

    def source_health(self) -> list[SourceOverview]:
        """Per source: health, fail_count, interval, next fetch, last outcome and reason,
        items per day over 7 days, warnings (``tidings sources --json``: ``.as_json()``
        each). Four bulk queries in all, whatever the number of sources."""
        return ops.overview(self._store, self.clock())

    def health_report(self) -> HealthReport:
        """The weekly source-health report, now (``.text()`` / ``.as_json()``)."""
        return ops.health_report(self._store, self.clock())

    def diversity(self, days: int = 30) -> DiversityReport:
        """Distinct titles per source, the reprint graph, original vs second-hand."""
        return ops.diversity_report(self._store, self.clock(), days)

    async def doctor(self, source_id: str, *, conditional: bool = False) -> DoctorReport:
        """Every stage of collecting one source, without storing (R-OPS-5)."""
        return await doctor(self.pipeline_env(), self._store.get_source(source_id),
                            conditional=conditional)

    async def preview(self, kind: SourceKind, url: str,
                      config: Mapping[str, Any]) -> DoctorReport:
        """What a source not stored yet would store, nothing written (R-WEB, issue 17)."""
        from tidings.pipeline.preview import preview

        return await preview(self.pipeline_env(), kind, url, config)

    async def propose_web_list(self, url: str) -> tuple[dict[str, Any], DoctorReport] | None:
        """Selectors for the list on a page without a feed, with their preview; None
        when the page has no repeated block of entry links."""
        from tidings.pipeline.preview import propose

        return await propose(self.pipeline_env(), url)

    # -------------------------------------------------------------- backups
    def backup(self, backup_dir: Path | None = None) -> Path:
        from tidings.store.backup import make_backup

        target = backup_dir or self.settings.data_dir / "backups"
        return make_backup(self._store, target, self.clock(),
                           keep_daily=self.settings.backup_keep_daily,
                           keep_monthly=self.settings.backup_keep_monthly)

    @staticmethod
    def check_backup(settings: Settings, backup: Path) -> int:
        """How many items ``backup`` holds, if it can be restored; ConfigError if not."""
        from tidings.store.sqlite.restore import check_backup

        _sqlite_only(settings)
        return check_backup(backup)

    @staticmethod
    def restore(settings: Settings, backup: Path, now: datetime) -> Path | None:
        """Put a checked copy of ``backup`` in place of the archive (no process may have
        it open); returns where the replaced archive was kept."""
        from tidings.store.sqlite.restore import restore_backup

        _sqlite_only(settings)
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        return restore_backup(backup, settings.database_path, now)


def _sqlite_only(settings: Settings) -> None:
    if settings.database_url:
        raise ConfigError("restore works on the SQLite archive; restore a database server "
                          "with its own tools")


# ---------------------------------------------------------------- write steps
# Each runs on the writer thread inside a unit of work (see tidings.store.writer).

def _add_source(unit: Unit, source: Source) -> Source:
    return unit.add_source(source)


def _update_source(unit: Unit, source_id: str, update: SourceUpdate) -> Source:
    return unit.update_source(source_id, update)


def _delete_source(unit: Unit, source_id: str) -> None:
    unit.delete_source(source_id)


def _rename_folder(unit: Unit, old: str, new: str) -> int:
    return unit.rename_folder(old, new)


def _delete_folder(unit: Unit, name: str) -> int:
    return unit.delete_folder(name)


def _delete_item(unit: Unit, item_id: int, now: datetime) -> None:
    unit.delete_item(item_id, now)


def _set_read(unit: Unit, item_ids: list[int], read: bool) -> int:
    return unit.set_read(item_ids, read)


def _set_starred(unit: Unit, item_ids: list[int], starred: bool) -> int:
    return unit.set_starred(item_ids, starred)
