"""``Tidings.review``: items whose article extraction failed, their archived pages,
and a retry (the review page, R-EXTRACT-6).
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from tidings.app.core import Core
from tidings.app.paging import sort_time
from tidings.errors import NotFoundError
from tidings.model import BodyState, Item, RawResponse, Source
from tidings.pipeline.extraction import extract_item
from tidings.store.archive import RawReads
from tidings.store.items import ItemQuery, ItemReads
from tidings.store.sources import SourceReads

_PAGE = 200  # items read per query while leaving out the summary-only ones


class _Store(ItemReads, RawReads, SourceReads, Protocol):
    """What reviewing an extraction reads: the item, the pages fetched for it, its source."""


class Review:
    """See the module docstring."""

    def __init__(self, core: Core) -> None:
        self._core = core
        self._store: _Store = core.store

    def items(self, limit: int = 50, before: tuple[datetime, int] | None = None) -> list[Item]:
        """Items whose extraction failed, newest first; keyset paging as everywhere.
        Summary-only items are left out: nobody tried to extract them."""
        out: list[Item] = []
        while len(out) < limit:
            page = self._store.list_items(ItemQuery(body_state=BodyState.UNCONFIRMED,
                                                    before=before, limit=_PAGE))
            out.extend(i for i in page if not i.raw.get("summary_only"))
            if len(page) < _PAGE:
                break
            before = (sort_time(page[-1]), page[-1].id)
        return out[:limit]

    def raw_pages(self, item_id: int, limit: int = 10) -> list[RawResponse]:
        """The archived responses of one item, newest first."""
        key = self._store.get_item(item_id).key
        found = sorted(self._store.iter_raw(item_key=key), key=lambda r: r.fetched_at)
        return found[::-1][:limit]

    def raw_page(self, item_id: int) -> RawResponse | None:
        """The newest archived page of an item (what its body was extracted from)."""
        pages = self.raw_pages(item_id, limit=1)
        return pages[0] if pages else None

    async def retry(self, item_id: int) -> Item:
        """Fetch and extract one item's page again now; the item as it is after."""
        item = self._store.get_item(item_id)
        try:
            source: Source | None = self._store.get_source(item.source_id)
        except NotFoundError:
            source = None
        await extract_item(self._core.env(), item, source)
        return self._store.get_item(item_id)
