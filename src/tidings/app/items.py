"""``Tidings.items``: reading the archive - lists, one item, read and starred marks.

Lists page by keyset (``app/paging.py``); list pages read ``briefs`` (rows
without bodies). Deleting an item leaves a tombstone of its identity key, so the
next fetch of its feed does not bring it back (R-DEDUP-11).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from tidings.app.core import Core
from tidings.model import Item, ItemBrief
from tidings.store.archive import MediaReads
from tidings.store.items import ItemQuery, ItemReads, ItemWrites


class _Store(ItemReads, MediaReads, Protocol):
    """What the reader's items come from: the items, and their localized images."""


class Items:
    """See the module docstring."""

    def __init__(self, core: Core) -> None:
        self._core = core
        self._store: _Store = core.store
        self._writer = core.writer

    def query(self, query: ItemQuery | None = None) -> list[Item]:
        """Items with their bodies, newest first (all of them up to the query's limit)."""
        return self._store.list_items(query or ItemQuery())

    def briefs(self, query: ItemQuery) -> list[ItemBrief]:
        """What ``query`` returns, as list rows: no bodies (for pages of many items)."""
        return self._store.list_briefs(query)

    def get(self, item_id: int) -> Item:
        """The item ``item_id``; NotFoundError when there is none."""
        return self._store.get_item(item_id)

    def media(self, name: str) -> bytes | None:
        """A localized image kept in the archive (cluster mode: ``pipeline.media``)."""
        return self._store.get_media(name)

    async def mark_read(self, item_ids: Sequence[int], read: bool = True) -> int:
        """Mark items read (or unread); returns how many changed."""
        changed: int = await self._writer(_set_read, list(item_ids), read)
        return changed

    async def star(self, item_ids: Sequence[int], starred: bool = True) -> int:
        """Star items (or take the star away); returns how many changed."""
        changed: int = await self._writer(_set_starred, list(item_ids), starred)
        return changed

    async def delete(self, item_id: int) -> Item:
        """Delete one item for good (leaving its tombstone); returns what it was."""
        item = self._store.get_item(item_id)  # NotFoundError for an unknown id
        await self._writer(_delete, item_id, self._core.clock())
        return item

    def reprints(self, fps: Sequence[str]) -> dict[str, list[ItemBrief]]:
        """Items sharing each title fingerprint, earliest first (folding in views, R-DEDUP-8)."""
        return self._store.fingerprint_groups(fps) if fps else {}


def _delete(unit: ItemWrites, item_id: int, now: datetime) -> None:
    unit.delete_item(item_id, now)


def _set_read(unit: ItemWrites, item_ids: list[int], read: bool) -> int:
    return unit.set_read(item_ids, read)


def _set_starred(unit: ItemWrites, item_ids: list[int], starred: bool) -> int:
    return unit.set_starred(item_ids, starred)
