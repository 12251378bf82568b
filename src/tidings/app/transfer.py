"""``Tidings.transfer``: sources and items in and out - the defaults, OPML, history.

OPML keeps folders both ways and carries X and WeChat accounts as their URLs
(they come back as accounts). History is the JSON lines ``tidings export``
writes; imported items keep their identity, so importing twice adds nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from datetime import datetime
from importlib import resources
from itertools import islice
from typing import Any, Protocol

from tidings.app import kinds
from tidings.app.accounts import account_ref
from tidings.app.core import Core
from tidings.app.paging import sort_time
from tidings.app.sources import Sources
from tidings.model import Item, Source
from tidings.net import allow_list_from_settings, url_refusal
from tidings.opml import OpmlFeed, is_http, parse_opml, render_opml
from tidings.pipeline import history
from tidings.pipeline.history import HistoryReport
from tidings.pipeline.upsert import UpsertOutcome, upsert_items
from tidings.store.items import ItemQuery, ItemReads
from tidings.store.sources import SourceReads
from tidings.store.stats import StatsReads

Progress = Callable[[int, int], None]
#: items read per query while exporting (keyset pages: memory stays flat)
EXPORT_PAGE = 500


class _Store(SourceReads, ItemReads, StatsReads, Protocol):
    """What exports read: the sources, their items, and how many there are."""


class Transfer:
    """See the module docstring."""

    def __init__(self, core: Core, sources: Sources) -> None:
        self._core = core
        self._store: _Store = core.store
        self._sources = sources

    async def add_defaults(self) -> list[Source]:
        """The default sources of SPEC §13 (``data/default_sources.json``) not already present."""
        existing = self._store.list_sources()
        urls, taken = {s.url for s in existing}, {s.id for s in existing}
        return [await self._sources.create(entry["url"], title=entry["title"],
                                           source_id=entry["id"],
                                           priority=2 - int(entry["tier"]), taken=taken)
                for entry in default_sources() if entry["url"] not in urls]

    async def import_opml(self, data: bytes, origin: str = "OPML file",
                          progress: Progress | None = None,
                          notes: list[str] | None = None) -> tuple[list[Source], int]:
        """Add every feed of an OPML document; returns (added, already present).

        ``notes`` receives one line per outline skipped (and why) and per added feed
        the guard will refuse by its address alone (decided without any request)."""
        notes = [] if notes is None else notes
        feeds = parse_opml(data, origin, skipped=notes, accept=kinds.importable,
                           expected=kinds.import_forms())
        notes.extend(_refused(feeds, self._core))
        existing = self._store.list_sources()
        urls, taken = {s.url for s in existing}, {s.id for s in existing}
        added: list[Source] = []
        for n, feed in enumerate(feeds, 1):
            account = account_ref(feed.url)
            url = account.url if account is not None else feed.url
            if url not in urls and account is not None:
                added.append(await self._sources.add_account(
                    account, title=feed.title, folder=feed.category or None, taken=taken))
            elif url not in urls:
                added.append(await self._sources.create(
                    feed.url, title=feed.title, folder=feed.category or None,
                    site_url=feed.site_url or None, taken=taken))
            urls.add(url)
            if progress is not None:
                progress(n, len(feeds))
        return added, len(feeds) - len(added)

    def export_opml(self) -> str:
        return opml_of(self._store.list_sources())

    def export_total(self, source_id: str | None, since: datetime | None) -> int | None:
        """How many items ``export`` yields, when a count says so: the archive's, or the
        source's; None with ``since``, which no count matches (a count costs queries:
        ask only for a progress bar someone sees)."""
        if since is not None:
            return None
        if source_id:
            return self._store.source_stats(source_id, self._core.clock()).items_total
        return self._store.archive_stats().items

    def export(self, source_id: str | None = None,
               since: datetime | None = None) -> Iterator[list[Item]]:
        """Every item (of one source, newer than ``since``), newest first, with bodies,
        a page at a time; an unknown source is NotFoundError before the first page."""
        if source_id:
            self._store.get_source(source_id)
        query = ItemQuery(source_id=source_id, since=since, limit=EXPORT_PAGE)
        while page := self._store.list_items(query):
            yield page
            if len(page) < EXPORT_PAGE:
                return
            query = replace(query, before=(sort_time(page[-1]), page[-1].id))

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
                outcome: UpsertOutcome = await self._core.writer(
                    upsert_items, sources[sid], items, self._core.clock(), imported=True)
                report.created += outcome.created
                report.present += len(items) - outcome.created
        return report


def _refused(feeds: list[OpmlFeed], core: Core) -> list[str]:
    """A note per feed the guard will refuse by its address alone."""
    allow = allow_list_from_settings(core.settings)
    return [f"{feed.url}: added, but the guard will refuse it ({why}); "
            "allow_private_hosts lets it through" for feed in feeds
            if is_http(feed.url) and (why := url_refusal(feed.url, allow)) is not None]


def default_sources() -> list[dict[str, Any]]:
    """The default sources of SPEC §13, as shipped in ``data/default_sources.json``."""
    data: list[dict[str, Any]] = json.loads(resources.files("tidings").joinpath(
        "data/default_sources.json").read_text("utf-8"))
    return data


def opml_of(sources: Iterable[Source]) -> str:
    """OPML of the sources whose kind says their address comes back as the same kind on
    import (``Kind.opml``: feeds, and accounts); other kinds have no URL a reader
    could poll."""
    kept = kinds.opml_kinds()
    return render_opml(OpmlFeed(s.url, s.title, s.site_url or "", s.folder or "")
                       for s in sources if s.kind in kept)
