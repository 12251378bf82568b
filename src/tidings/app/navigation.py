"""``Tidings.navigation``: the reader's sidebar, as Miniflux's and FreshRSS's give.

Folders with their sources and unread counts, and the counts of Today, All,
Starred and Trending, from one store query (``source_counts``) and the source
list the caller already holds. "Mark this source (or folder) read" records the
ids it changed under a token for a while, so an undo marks exactly those
unread again (not items read before, nor items that arrived since). The undo
lives in this process's memory: a reader process restarted in between cannot
undo, which a person clicking "Undo" seconds later does not notice.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from tidings.errors import NotFoundError
from tidings.model import Source, Visibility
from tidings.store.items import ItemWrites
from tidings.store.navigation import NavigationReads, SourceCounts
from tidings.store.writer import Writer

#: how long, and how many, marks can be undone
UNDO_FOR = timedelta(minutes=30)
UNDO_KEPT = 64


@dataclass(frozen=True, slots=True)
class SourceEntry:
    id: str
    title: str
    unread: int
    today: int
    starred: int


@dataclass(frozen=True, slots=True)
class FolderEntry:
    name: str
    sources: tuple[SourceEntry, ...]

    @property
    def unread(self) -> int:
        return sum(s.unread for s in self.sources)


@dataclass(frozen=True, slots=True)
class Sidebar:
    """What the sidebar shows: the views' counts, folders, and sources in no folder."""

    today: int  # unread items of Today (last 24 h, no backfill)
    all: int  # unread items
    starred: int
    trending: int  # stories on the Trending page
    folders: tuple[FolderEntry, ...]
    unfiled: tuple[SourceEntry, ...]

    def order(self) -> list[str]:
        """Source ids in the order shown (what next/previous source walks)."""
        return [s.id for f in self.folders for s in f.sources] + [s.id for s in self.unfiled]


@dataclass(frozen=True, slots=True)
class MarkedRead:
    """One "mark read" that can still be undone."""

    token: str
    label: str  # what was marked, as the page names it
    item_ids: tuple[int, ...]
    at: datetime


def sidebar(sources: Iterable[Source], counts: Sequence[SourceCounts], *, admin: bool,
            trending: int) -> Sidebar:
    """The sidebar of these sources (a visitor's without isolated ones): folders by name
    and sources by title, folders without a shown source left out."""
    shown = [s for s in sources if admin or s.visibility is Visibility.EDITORIAL]
    by_id = {c.source_id: c for c in counts}
    entries = {s.id: _entry(s, by_id.get(s.id)) for s in shown}
    filed: dict[str, list[SourceEntry]] = {}
    for s in sorted(shown, key=lambda s: (entries[s.id].title.casefold(), s.id)):
        filed.setdefault(s.folder or "", []).append(entries[s.id])
    unfiled = filed.pop("", [])
    return Sidebar(
        today=sum(e.today for e in entries.values()),
        all=sum(e.unread for e in entries.values()),
        starred=sum(e.starred for e in entries.values()),
        trending=trending,
        folders=tuple(FolderEntry(name, tuple(filed[name]))
                      for name in sorted(filed, key=lambda n: (n.casefold(), n))),
        unfiled=tuple(unfiled),
    )


def _entry(source: Source, counts: SourceCounts | None) -> SourceEntry:
    title = source.title or source.id
    if counts is None:
        return SourceEntry(source.id, title, 0, 0, 0)
    return SourceEntry(source.id, title, counts.unread, counts.today, counts.starred)


class Navigation:
    """See the module docstring; one per open archive."""

    def __init__(self, store: NavigationReads, writer: Writer,
                 clock: Callable[[], datetime]) -> None:
        self._store = store
        self._writer = writer
        self._clock = clock
        self._marks: OrderedDict[str, MarkedRead] = OrderedDict()
        self._lock = threading.Lock()

    def sidebar(self, sources: Iterable[Source], *, admin: bool, since: datetime,
                trending: int) -> Sidebar:
        """Counts since ``since`` (Today's start) for ``sources`` (the caller's list):
        one query."""
        return sidebar(sources, self._store.source_counts(since), admin=admin,
                       trending=trending)

    async def mark_read(self, sources: Sequence[Source], label: str) -> MarkedRead:
        """Mark every unread item of ``sources`` read; the result's token undoes it."""
        ids = [s.id for s in sources]
        changed: list[int] = await self._writer(lambda unit: unit.read_sources(ids))
        mark = MarkedRead(secrets.token_urlsafe(12), label, tuple(changed), self._clock())
        with self._lock:
            self._expire()
            self._marks[mark.token] = mark
            while len(self._marks) > UNDO_KEPT:
                self._marks.popitem(last=False)
        return mark

    def marked(self, token: str) -> MarkedRead | None:
        """The mark ``token`` names, while it can be undone."""
        with self._lock:
            self._expire()
            return self._marks.get(token)

    async def undo(self, token: str) -> int:
        """Mark unread again what the mark ``token`` marked read (once); how many."""
        with self._lock:
            self._expire()
            mark = self._marks.pop(token, None)
        if mark is None:
            raise NotFoundError("nothing to undo: that mark is older than "
                                f"{int(UNDO_FOR.total_seconds() // 60)} minutes or was undone")
        restored: int = await self._writer(_unread, list(mark.item_ids))
        return restored

    def _expire(self) -> None:
        oldest = self._clock() - UNDO_FOR
        while self._marks and next(iter(self._marks.values())).at < oldest:
            self._marks.popitem(last=False)


def _unread(unit: ItemWrites, ids: list[int]) -> int:
    return unit.set_read(ids, False)
