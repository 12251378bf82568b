"""The blogroll crawler as the CLI and the web reader use it (R-DISC-3).

``tidings.crawls`` (a :class:`Crawls`) starts, resumes and lists crawls, exports
their finds as OPML and turns chosen finds into sources. The crawl itself is
``tidings.pipeline.crawl``; everything it knows is in storage, so any of these
calls works from another process while a crawl runs.
"""

from __future__ import annotations

from collections.abc import Sequence

from tidings.app.core import Core
from tidings.app.sources import Sources
from tidings.errors import ConfigError, TidingsError
from tidings.model import Source
from tidings.opml import OpmlFeed, render_opml
from tidings.pipeline.crawl import CrawlLimits, CrawlProgress, run_crawl, start_crawl
from tidings.store.crawl import (
    Crawl,
    CrawlCounts,
    CrawlFinding,
    CrawlReads,
    CrawlSite,
    CrawlWrites,
    SiteState,
)

__all__ = ["CrawlLimits", "CrawlProgress", "Crawls"]


class Crawls:
    """Crawls of one archive."""

    def __init__(self, core: Core, sources: Sources) -> None:
        self._core = core
        self._store: CrawlReads = core.store
        self._sources = sources

    # ---------------------------------------------------------------- running
    async def start(self, seeds: Sequence[str], limits: CrawlLimits) -> int:
        """A new crawl from ``seeds`` (not run yet); its id."""
        return await start_crawl(self._core.env(), seeds, limits)

    def unfinished(self, seeds: Sequence[str] | None = None) -> Crawl | None:
        """The newest crawl that did not finish (with exactly these seeds, if given)."""
        for crawl in self._store.list_crawls(limit=20):
            if crawl.state != "done" and (seeds is None or list(crawl.seeds) == list(seeds)):
                return crawl
        return None

    async def run(self, crawl_id: int, progress: CrawlProgress | None = None) -> CrawlCounts:
        """Run or resume a crawl to its end."""
        return await run_crawl(self._core.env(), crawl_id, progress=progress)

    # ---------------------------------------------------------------- reading
    def get(self, crawl_id: int | None = None) -> Crawl:
        """A crawl by id, or the newest one (ConfigError when there is none)."""
        if crawl_id is not None:
            return self._store.get_crawl(crawl_id)
        crawls = self._store.list_crawls(limit=1)
        if not crawls:
            raise ConfigError("no crawl yet (start one with `tidings crawl SITE_URL...`)")
        return crawls[0]

    def recent(self, limit: int = 20) -> list[Crawl]:
        return self._store.list_crawls(limit=limit)

    def counts(self, crawl_id: int) -> CrawlCounts:
        return self._store.crawl_counts(crawl_id)

    def findings(self, crawl_id: int) -> list[CrawlFinding]:
        return self._store.crawl_findings(crawl_id)

    def troubles(self, crawl_id: int, limit: int = 200) -> list[CrawlSite]:
        """Sites that failed or were skipped, with their reasons."""
        return self._store.crawl_sites(crawl_id, (SiteState.FAILED, SiteState.SKIPPED), limit)

    def opml(self, crawl_id: int) -> str:
        """The finds as OPML: title, feed, site, and per outline ``feedType``,
        ``description`` (the abstract), ``depth`` and ``foundFrom``."""
        feeds = [OpmlFeed(f.feed_url, f.site_title or f.feed_title, f.site_url, extra=(
            ("feedType", f.feed_type), ("description", f.abstract), ("depth", str(f.depth)),
            ("foundFrom", f.found_from))) for f in self.findings(crawl_id)]
        return render_opml(feeds, title=f"tidings crawl {crawl_id}")

    # ---------------------------------------------------------------- adding
    async def add(self, crawl_id: int, finding_ids: Sequence[int] | None = None
                  ) -> tuple[list[Source], list[str]]:
        """Make finds sources (all of them when ``finding_ids`` is None); returns the new
        sources and one line per find not added (already a source, unknown id)."""
        finds = {f.id: f for f in self.findings(crawl_id)}
        wanted = list(finds) if finding_ids is None else list(dict.fromkeys(finding_ids))
        added: list[Source] = []
        problems: list[str] = []
        for fid in wanted:
            find = finds.get(fid)
            if find is None:
                problems.append(f"find {fid}: not in crawl {crawl_id}")
                continue
            try:
                source = await self._sources.create(
                    find.feed_url, title=find.site_title or find.feed_title,
                    site_url=find.site_url)
            except TidingsError as exc:
                problems.append(f"find {fid}: {exc}")
                continue
            added.append(source)
            await self._core.writer(_mark, fid, source.id)
        return added, problems


def _mark(unit: CrawlWrites, finding_id: int, source_id: str) -> None:
    unit.mark_crawl_sources([finding_id], [source_id])
