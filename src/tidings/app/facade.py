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
from datetime import datetime
from itertools import islice
from pathlib import Path
from typing import Any, NoReturn

from tidings.app import catalog, ingest
from tidings.app.accounts import account_ref
from tidings.app.compat import Compat
from tidings.app.core import Clock, Core, utcnow
from tidings.app.crawling import Crawls
from tidings.app.folders import Folders
from tidings.app.ingest import IngestReport, PushedItem
from tidings.app.items import Items
from tidings.app.paid import Paid
from tidings.app.reports import Reports
from tidings.app.review import Review
from tidings.app.search import Search
from tidings.app.sources import Sources
from tidings.app.stories import Stories
from tidings.app.tokens import Tokens
from tidings.app.users import Users
from tidings.app.websub import WebSub
from tidings.errors import ConfigError
from tidings.model import (
    Source,
    SourceKind,
)
from tidings.net import Fetcher, allow_list_from_settings, url_refusal
from tidings.opml import parse_opml
from tidings.pipeline import history
from tidings.pipeline.doctor import DoctorReport, doctor
from tidings.pipeline.env import PipelineEnv
from tidings.pipeline.extraction import ExtractReport, extract_pending
from tidings.pipeline.history import HistoryReport
from tidings.pipeline.reparse import ReparseReport, reparse
from tidings.pipeline.round import RoundProgress, RoundReport, run_round
from tidings.pipeline.upsert import UpsertOutcome, upsert_items
from tidings.schedule.runner import Runner, StopReason
from tidings.schedule.watchdog import restart_in_place
from tidings.schedule.webhooks import WebhookSender
from tidings.settings import Settings
from tidings.store import open_storage
from tidings.store.base import (
    Storage,
    Unit,
)


class Tidings:
    """One open archive: storage, its writer, the fetcher and the pipeline, for one process."""

    def __init__(self, settings: Settings, store: Storage, *, clock: Clock = utcnow) -> None:
        self._core = core = Core(settings, store, clock)
        self.settings = settings
        self.clock = clock
        self._store = store
        self._writer = core.writer
        self._filters = core.filters
        self._ledger = core.ledger
        #: the web reader's users, sessions and passwords, and their API tokens (R-API-6)
        self.users = Users(core)
        self.tokens = Tokens(core)
        self.sources = Sources(core)
        self.folders = Folders(core)
        self.items = Items(core)
        self.review = Review(core)
        self.search = Search(core)
        self.reports = Reports(core)
        self.paid = Paid(core)
        self.stories = Stories(store, self._writer, clock)
        #: what feeds out and the client APIs need beyond the JSON API (R-API-2/3)
        self.compat = Compat(store, self._writer, clock)
        #: the WebSub subscriber (R-RSS-8)
        self.websub = WebSub(store, self._writer, self.pipeline_env, settings, clock)

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
        return self._core.fetcher

    def use_fetcher(self, fetcher: Fetcher) -> None:
        """Fetch through ``fetcher`` from now on (an embedder's, or a test's with its own
        resolver); ``aclose`` closes it. Call before the first fetch."""
        self._core.use_fetcher(fetcher)

    def pipeline_env(self) -> PipelineEnv:
        """What the pipeline and the scheduler work with (storage to read, the writer)."""
        return self._core.env()

    async def aclose(self) -> None:
        await self._core.aclose()

    def close(self) -> None:
        """Finish queued writes and close storage (``aclose`` when a fetcher may be open)."""
        self._core.close()

    async def write(self, step: Callable[[Unit], Any]) -> Any:
        """Run one write step of the caller's own (tests, maintenance scripts)."""
        return await self._writer(step)

    # ---------------------------------------------------------------- items
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
        return [await self.sources.create(entry["url"], title=entry["title"],
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
                added.append(await self.sources.add_account(
                    account, title=feed.title, folder=feed.category or None, taken=taken))
            elif url not in urls:
                added.append(await self.sources.create(
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
