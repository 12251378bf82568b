"""Stories for the CLI and the web (R-DEDUP-12): the clustering job, rebuild, hand
edits, explanations, heat and trending, over the process's one writer."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Protocol

from tidings.errors import NotFoundError
from tidings.model import ItemBrief
from tidings.pipeline.stories import (
    Clusterer,
    ClusterReads,
    Explanation,
    Story,
    StoryTexts,
    explain,
    finish_rebuild,
    merge,
    split,
    story_heat,
    trending,
)
from tidings.store.stats import StatsReads
from tidings.store.stories import StoriesWrites, StoryMember
from tidings.store.writer import Writer

__all__ = ["Explanation", "Stories", "Story"]


class _Store(ClusterReads, StoryTexts, StatsReads, Protocol):
    """What the stories read: placement's and explanations' reads, and the archive's size."""


class Stories:
    """``Tidings.stories``: one clusterer (and its 72 h index) per process."""

    def __init__(self, store: _Store, writer: Writer, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._writer = writer
        self._clock = clock
        self.clusterer = Clusterer()

    async def cluster_pending(self) -> int:
        """Place every item created since the last call (the runner's job)."""
        total = 0
        # read, embedded and placed on a worker thread, then stored in a write step
        while batch := await asyncio.to_thread(self.clusterer.prepare, self._store,
                                               self._clock()):
            n = await self._writer(self.clusterer.commit, batch)
            if not n:
                break  # another process placed meanwhile: the next call warms and goes on
            total += int(n)
        return total

    async def rebuild(self, progress: Callable[[int], None] = lambda _n: None,
                      page: int = 2000) -> int:
        """Cluster the whole archive again in time order; hand edits are kept."""
        await self._writer(_clear)
        self.clusterer.restart()
        links = self._store.story_links()
        after: tuple[datetime, int] | None = None
        total = 0
        while inputs := self._store.story_inputs_by_time(after, page):
            members = self.clusterer.replay(inputs, links)
            await self._writer(_put, members)
            total += len(inputs)
            progress(len(inputs))
            after = (inputs[-1].at, inputs[-1].item_id)
        await self._writer(finish_rebuild)
        return total

    def archive_size(self) -> int:
        return self._store.archive_stats().items

    def explain(self, item_id: int) -> Explanation:
        self._exists(item_id)
        return explain(self._store, item_id)

    async def split(self, item_id: int) -> int:
        self._exists(item_id)
        moved: int = await self._writer(split, item_id, self._clock())
        self._forget()
        return moved

    async def merge(self, item_id: int, other_id: int) -> int:
        self._exists(item_id, other_id)
        moved: int = await self._writer(merge, item_id, other_id, self._clock())
        self._forget()
        return moved

    def _exists(self, *item_ids: int) -> None:
        """NotFoundError "no item N" for an id the archive lacks: "not clustered yet
        (run a rebuild)" would send the person after the wrong fix."""
        for item_id in item_ids:
            try:
                self._store.get_item(item_id)
            except NotFoundError:
                raise NotFoundError(f"no item {item_id}") from None

    def _forget(self) -> None:
        """A hand edit changes clusters under the index: it is warmed again from storage."""
        self.clusterer.index = None

    def of_items(self, item_ids: Sequence[int]) -> dict[int, int]:
        """item id -> cluster id."""
        return self._store.story_clusters(item_ids) if item_ids else {}

    def folds(self, item_ids: Sequence[int]) -> tuple[dict[int, int], dict[int, list[ItemBrief]]]:
        """For a list page: item id -> cluster id, and cluster id -> its members' list
        rows (earliest first), for the stories of two items or more."""
        if not item_ids:
            return {}, {}
        return self._store.story_clusters(item_ids), self._store.story_briefs(item_ids)

    def stories(self, cluster_ids: Sequence[int]) -> dict[int, Story]:
        """These clusters with their members and heat now."""
        return story_heat(self._store, cluster_ids, self._clock()) if cluster_ids else {}

    def trending(self, limit: int = 30) -> list[Story]:
        return trending(self._store, self._clock(), limit)


def _clear(unit: StoriesWrites) -> int:
    return unit.clear_story_members()


def _put(unit: StoriesWrites, members: Sequence[StoryMember]) -> None:
    unit.put_story_members(members)
