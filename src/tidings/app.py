"""The public facade: what the CLI and the web layer may use.

``Tidings`` wires settings, storage, the guarded HTTP client and the pipeline
together, so that the outermost layer never has to know which database or
which reader is behind a call (STYLE.md: cli/web import only this facade,
``settings`` and ``model``). Types the outer layer needs are re-exported here.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tidings.errors import ConfigError, NotFoundError
from tidings.model import (
    BodyState,
    FeedCandidate,
    FetchRun,
    Item,
    ItemBrief,
    RawResponse,
    SearchHit,
    Source,
    SourceKind,
)
from tidings.net import Fetcher
from tidings.opml import OpmlFeed, parse_opml, render_opml
from tidings.pipeline.collect import PipelineEnv
from tidings.pipeline.extraction import (
    ExtractReport,
    extract_item,
    extract_pending,
    prune_archive,
)
from tidings.pipeline.reparse import ReparseReport, reparse
from tidings.pipeline.round import RoundProgress, RoundReport, run_round
from tidings.readers import get_reader
from tidings.schedule.facade import OperationsMixin
from tidings.settings import Settings
from tidings.store import open_storage
from tidings.store.base import ArchiveStats, ItemQuery, SearchQuery, SourceStats, Storage
from tidings.store.query_syntax import parse_search

if TYPE_CHECKING:  # article extraction loads on first use (see tidings.extract)
    from tidings.extract import Extraction

__all__ = [
    "ArchiveStats",
    "ExtractReport",
    "Extraction",
    "ItemQuery",
    "ReparseReport",
    "RoundProgress",
    "RoundReport",
    "SearchQuery",
    "SourceStats",
    "Tidings",
]

Clock = Callable[[], datetime]


def utcnow() -> datetime:
    return datetime.now(UTC)


def slugify(text: str, taken: Collection[str] = ()) -> str:
    """A stable, readable source id from a title or URL host, unique among ``taken``."""
    base = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "source"
    slug, n = base, 2
    while slug in taken:
        slug = f"{base}-{n}"
        n += 1
    return slug


class Tidings(OperationsMixin):
    """One open archive: storage + fetcher + pipeline, for one process."""

    def __init__(self, settings: Settings, store: Storage, *, clock: Clock = utcnow) -> None:
        self.settings = settings
        self.store = store
        self.clock = clock
        self._fetcher: Fetcher | None = None

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
    def fetcher(self) -> Fetcher:
        """The one guarded HTTP client of this process (shared politeness limits)."""
        if self._fetcher is None:
            self._fetcher = Fetcher(self.settings)
        return self._fetcher

    def pipeline_env(self) -> PipelineEnv:
        return PipelineEnv(
            store=self.store, fetcher=self.fetcher, settings=self.settings, clock=self.clock,
        )

    async def aclose(self) -> None:
        if self._fetcher is not None:
            await self._fetcher.aclose()
            self._fetcher = None
        self.store.close()

    def close(self) -> None:
        """Close storage (use ``aclose`` when a fetcher may be open)."""
        self.store.close()

    # -------------------------------------------------------------- sources
    def sources(self) -> list[Source]:
        return self.store.list_sources()

    def source(self, source_id: str) -> Source:
        return self.store.get_source(source_id)

    def create_source(
        self, url: str, *, kind: SourceKind = SourceKind.RSS, title: str = "",
        source_id: str | None = None, config: Mapping[str, Any] | None = None,
        site_url: str | None = None, priority: int = 0, taken: set[str] | None = None,
    ) -> Source:
        """Store a new source after validating its config for its kind (R-SCHED-2).

        ``taken`` (the ids in use, kept up to date here) spares bulk imports a
        listing of every source per new one.
        """
        if self.store.find_source_by_url(url) is not None:
            raise ConfigError(f"{url}: already a source")
        clean = get_reader(kind).validate_config(dict(config or {}))
        if taken is None:
            taken = {s.id for s in self.store.list_sources()}
        sid = source_id or slugify(title or _host_of(url), taken)
        if sid in taken:
            raise ConfigError(f"source id {sid!r} is already taken")
        source = Source(
            id=sid, kind=kind, url=url, title=title, config=clean,
            interval_min=self.settings.default_interval_min, next_fetch_at=self.clock(),
            created_at=self.clock(), site_url=site_url, priority=priority,
        )
        added = self.store.add_source(source)
        taken.add(sid)
        return added

    async def add_source(
        self, url: str, *, kind: SourceKind | None = None, title: str = "",
        source_id: str | None = None, config: Mapping[str, Any] | None = None,
    ) -> Source:
        """Add a source; a page URL is turned into its best feed by autodiscovery."""
        from tidings.discovery import discover

        if kind is not None and kind is not SourceKind.RSS:
            return self.create_source(url, kind=kind, title=title, source_id=source_id,
                                      config=config)
        found = await discover(url, self.fetcher)
        if found.best is None:
            raise ConfigError(f"{url}: no feed found on this page (try `tidings discover {url}`)")
        feed = found.best
        return self.create_source(
            feed.url, title=title or feed.title, source_id=source_id, config=config,
            site_url=None if found.is_feed else found.final_url,
        )

    async def discover(self, url: str) -> list[FeedCandidate]:
        from tidings.discovery import discover

        return list((await discover(url, self.fetcher)).candidates)

    def update_source(self, source_id: str, changes: Mapping[str, Any]) -> Source:
        """Change a source; a new config is validated for the source's kind first."""
        changes = dict(changes)
        if "config" in changes:
            kind = self.store.get_source(source_id).kind
            changes["config"] = get_reader(kind).validate_config(dict(changes["config"]))
        return self.store.update_source(source_id, changes)

    def remove_source(self, source_id: str) -> None:
        self.store.delete_source(source_id)

    def runs(self, source_id: str | None = None, limit: int = 20) -> list[FetchRun]:
        return self.store.list_runs(source_id, limit)

    def source_stats(self, source_id: str) -> SourceStats:
        return self.store.source_stats(source_id, self.clock())

    # ---------------------------------------------------------------- items
    def items(self, query: ItemQuery | None = None) -> list[Item]:
        return self.store.list_items(query or ItemQuery())

    def briefs(self, query: ItemQuery) -> list[ItemBrief]:
        """What ``items`` returns, as list rows: no bodies (for pages of many items)."""
        return self.store.list_briefs(query)

    def item(self, item_id: int) -> Item:
        return self.store.get_item(item_id)

    def search(self, text: str, *, ranked: bool = False, limit: int = 50,
               before: tuple[datetime, int] | None = None) -> list[SearchHit]:
        """Search with the R-API-5 syntax; bad syntax raises ConfigError."""
        # what was collected a moment ago is found too; bounded, so a search never waits
        # long behind a big backlog (the scheduler keeps the index caught up anyway)
        self.store.index_pending(limit=2000)
        query = replace(parse_search(text, ranked=ranked, limit=limit), before=before)
        return self.store.search(query)

    def mark_read(self, item_ids: Sequence[int], read: bool = True) -> int:
        return self.store.set_read(item_ids, read)

    def star(self, item_ids: Sequence[int], starred: bool = True) -> int:
        return self.store.set_starred(item_ids, starred)

    def stats(self) -> ArchiveStats:
        return self.store.archive_stats()

    def reprints(self, fps: Sequence[str]) -> dict[str, list[ItemBrief]]:
        """Items sharing each title fingerprint, earliest first (folding in views, R-DEDUP-8)."""
        return self.store.fingerprint_groups(fps) if fps else {}

    def raw_pages(self, item_id: int, limit: int = 10) -> list[RawResponse]:
        """The archived responses of one item, newest first (review page, R-EXTRACT-6)."""
        key = self.store.get_item(item_id).key
        found = sorted(self.store.iter_raw(item_key=key), key=lambda r: r.fetched_at)
        return found[::-1][:limit]

    # ----------------------------------------------------------- collection
    async def collect(
        self, source_ids: Sequence[str] | None = None, *,
        progress: RoundProgress | None = None, extract: bool = True,
    ) -> RoundReport:
        """One round over the due sources (or exactly ``source_ids``, due or not); then,
        with ``extract``, a bounded batch of pending bodies (``report.extraction``)."""
        if source_ids:
            for sid in source_ids:
                self.store.get_source(sid)  # NotFoundError names the bad id
        return await run_round(self.pipeline_env(), only=source_ids, progress=progress,
                               extract=extract)

    # ----------------------------------------------------------- extraction
    async def extract_pending(self, limit: int | None = None,
                              source_id: str | None = None) -> ExtractReport:
        """Fetch and extract up to ``limit`` pending bodies (default: extract_per_round)."""
        return await extract_pending(self.pipeline_env(), limit=limit, source_id=source_id)

    async def retry_extraction(self, item_id: int) -> Item:
        """Fetch and extract one item's page again now (the review page's retry)."""
        item = self.store.get_item(item_id)
        try:
            source: Source | None = self.store.get_source(item.source_id)
        except NotFoundError:
            source = None
        await extract_item(self.pipeline_env(), item, source)
        return self.store.get_item(item_id)

    def review_items(self, limit: int = 50,
                     before: tuple[datetime, int] | None = None) -> list[Item]:
        """Items whose extraction failed, newest first (R-EXTRACT-6); keyset paging as in
        ``items``. Summary-only items are left out: nobody tried to extract them."""
        out: list[Item] = []
        while len(out) < limit:
            page = self.store.list_items(ItemQuery(body_state=BodyState.UNCONFIRMED,
                                                   before=before, limit=200))
            out.extend(i for i in page if not i.raw.get("summary_only"))
            if len(page) < 200:
                break
            before = (page[-1].published_at or page[-1].discovered_at, page[-1].id)
        return out[:limit]

    def raw_page(self, item_id: int) -> RawResponse | None:
        """The newest archived page of an item (what its body was extracted from)."""
        pages = self.raw_pages(item_id, limit=1)
        return pages[0] if pages else None

    def reparse(self, source_id: str | None = None,
                since: datetime | None = None) -> ReparseReport:
        """Parse feeds and extract pages again from the raw archive; no request is sent."""
        return reparse(self.store, self.settings, self.clock(), source_id=source_id,
                       since=since)

    def prune_raw(self) -> int:
        """Drop raw responses past ``raw_retention_days`` except the pages of current
        bodies; returns how many went. Run daily (the scheduler does)."""
        return prune_archive(self.store, self.settings, self.clock())

    def index_pending(self) -> int:
        """Bring the search index up to date; returns how many items were indexed."""
        total = 0
        while (n := self.store.index_pending(limit=1000)) > 0:  # bounded memory per batch
            total += n
        return total

    # ------------------------------------------------------- source lists
    def add_default_sources(self) -> list[Source]:
        """The 18 default sources of SPEC §13 (those not already present)."""
        data = json.loads(resources.files("tidings").joinpath(
            "data/default_sources.json").read_text("utf-8"))
        existing = self.store.list_sources()
        urls, taken = {s.url for s in existing}, {s.id for s in existing}
        return [self.create_source(entry["url"], title=entry["title"], source_id=entry["id"],
                                   priority=2 - int(entry["tier"]), taken=taken)
                for entry in data if entry["url"] not in urls]

    def import_opml(
        self, data: bytes, origin: str = "OPML file",
        progress: Callable[[int, int], None] | None = None,
    ) -> tuple[list[Source], int]:
        """Add every feed of an OPML document; returns (added, already present)."""
        feeds = parse_opml(data, origin)
        existing = self.store.list_sources()
        urls, taken = {s.url for s in existing}, {s.id for s in existing}
        added: list[Source] = []
        for n, feed in enumerate(feeds, 1):
            if feed.url not in urls:
                config = {"category": feed.category} if feed.category else None
                added.append(self.create_source(feed.url, title=feed.title, config=config,
                                                site_url=feed.site_url or None, taken=taken))
            if progress is not None:
                progress(n, len(feeds))
        return added, len(feeds) - len(added)

    def export_opml(self) -> str:
        return render_opml(
            OpmlFeed(s.url, s.title, s.site_url or "", str(s.config.get("category", "")))
            for s in self.store.list_sources() if s.kind is SourceKind.RSS
        )

    # -------------------------------------------------------------- backups
    def backup(self, backup_dir: Path | None = None) -> Path:
        from tidings.store.backup import make_backup

        target = backup_dir or self.settings.data_dir / "backups"
        return make_backup(self.store, target, self.clock(),
                           keep_daily=self.settings.backup_keep_daily,
                           keep_monthly=self.settings.backup_keep_monthly)


def discover_feeds(settings: Settings, url: str) -> list[FeedCandidate]:
    """Autodiscovery without an archive (``tidings discover`` works anywhere)."""
    from tidings.discovery import discover

    async def run() -> list[FeedCandidate]:
        async with Fetcher(settings) as fetcher:
            return list((await discover(url, fetcher)).candidates)

    return asyncio.run(run())


def extract_target(settings: Settings, target: str, *, page_url: str | None = None,
                   stdin: bytes | None = None) -> Extraction:
    """Extract the article of a URL (fetched through the guard), of an HTML file or of
    ``stdin`` (target ``-``), without an archive (``tidings extract``). ``page_url`` is
    where a file's page came from (relative links, metadata)."""
    from tidings.extract import extract_article
    from tidings.net import decode_body, decode_text

    if re.match(r"^https?://", target, re.IGNORECASE):
        async def fetch() -> tuple[str, str]:
            async with Fetcher(settings) as fetcher:
                resp = await fetcher.fetch(target)
                return decode_body(resp), resp.final_url

        html, url = asyncio.run(fetch())
        return extract_article(html, url)
    path = Path(target)
    if target == "-" and stdin is not None:
        content = stdin
    elif not path.is_file():
        raise ConfigError(f"{target}: neither an http(s) URL nor a readable file")
    else:
        try:
            content = path.read_bytes()
        except OSError as exc:
            raise ConfigError(f"{target}: cannot read ({exc.strerror})") from exc
    base = page_url or ("" if target == "-" else path.resolve().as_uri())
    return extract_article(decode_text(content), base)


def _host_of(url: str) -> str:
    match = re.match(r"^[a-z][a-z0-9+.-]*://([^/:?#]+)", url, re.IGNORECASE)
    if not match:
        raise ConfigError(f"{url}: not an http(s) URL")
    return match.group(1).removeprefix("www.")
