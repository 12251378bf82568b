"""``Tidings.search``: full-text search with the R-API-5 syntax, and the index behind it.

The scheduler keeps the index just behind collection; a search first indexes a
bounded batch of what is not indexed yet (``index_recent``), so what was
collected a moment ago is found too and a search never waits long behind a big
backlog.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Protocol

from tidings.app.core import Core
from tidings.errors import ReadOnlyError
from tidings.model import SearchHit
from tidings.schedule import jobs
from tidings.store.items import ItemReads
from tidings.store.query_syntax import parse_search
from tidings.store.searchindex import SearchIndexReads


class _Store(ItemReads, SearchIndexReads, Protocol):
    """What searching reads: the matches, and the index it first brings up to date."""


class Search:
    """See the module docstring."""

    def __init__(self, core: Core) -> None:
        self._store: _Store = core.store
        self._writer = core.writer

    def find(self, text: str, *, ranked: bool = False, limit: int = 50,
             before: tuple[datetime, int] | None = None) -> list[SearchHit]:
        """The hits of ``text``, newest first (or best first when ``ranked``); bad
        syntax raises ConfigError. Call ``index_recent`` first."""
        query = replace(parse_search(text, ranked=ranked, limit=limit), before=before)
        return self._store.search(query)

    async def index_recent(self) -> int:
        """Index a bounded batch of items not indexed yet, if there are any."""
        if not self._store.unindexed_count():
            return 0
        try:
            indexed = await jobs.index_batch(self._store, self._writer)
        except ReadOnlyError:
            return 0  # a read-only archive is searched as it was last indexed
        return indexed

    async def index_pending(self) -> int:
        """Bring the search index up to date; returns how many items were indexed."""
        return await jobs.index_pending(self._store, self._writer)
