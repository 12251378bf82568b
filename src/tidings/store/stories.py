"""What story clustering asks of storage (R-DEDUP-12): item -> cluster, and hand edits.

Part of the :class:`tidings.store.base.Storage` protocol, in its own module as
``access`` is. A cluster's id is the id of the item that started it. Semantics
as in ``base``: aware UTC datetimes in and out, every time passed in by the caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from tidings.model import ItemBrief


@dataclass(frozen=True, slots=True)
class StoredMeaning:
    """An item's embedded meaning as stored: the model that made it, the vector's
    bytes (``tidings.identity.meaning.pack_vector``) and its marks (``Marks.pack``).
    Kept apart from the placement: a rebuild clears placements, never meanings."""

    model: str
    vector: bytes
    marks: str = ""


@dataclass(frozen=True, slots=True)
class StoryInput:
    """An item as clustering reads it: the texts it compares and the times heat needs."""

    item_id: int
    source_id: str
    title: str
    summary: str
    body: str | None  # the body's first few thousand characters
    at: datetime  # the item's time: published, else discovered
    published_at: datetime | None
    discovered_at: datetime
    backfill: bool
    url: str | None = None  # the page it links to: sources listing one page tell one story
    meaning: StoredMeaning | None = None  # embedded before (by any model), else None


@dataclass(frozen=True, slots=True)
class StoryMember:
    """An item's place in a cluster, with the shingles it was placed by (so a restart
    rebuilds the window's index without reading bodies again)."""

    item_id: int
    cluster_id: int
    source_id: str
    at: datetime
    similarity: float = 0.0
    matched: int | None = None  # the member it was most similar to when it joined
    hashes: frozenset[int] = frozenset()
    title: frozenset[int] = frozenset()
    exact: int = 0
    latin: frozenset[int] = frozenset()  # of a bilingual item, its Latin-script shingles
    url: str | None = None  # the item's link (read back from the item, not stored twice)
    meaning: StoredMeaning | None = None  # written beside the placement when given


@dataclass(frozen=True, slots=True)
class StoryRow:
    """A member as heat and the reader see it."""

    item_id: int
    cluster_id: int
    source_id: str
    source_title: str
    site_url: str
    title: str
    at: datetime
    published_at: datetime | None
    discovered_at: datetime
    backfill: bool
    language: str = ""  # of its stored meaning ("zh", "en", ...; "" before it has one)


@dataclass(frozen=True, slots=True)
class StoryLink:
    """A hand edit: ``apart`` (split: never together) or not (merged: always together)."""

    a: int
    b: int
    apart: bool
    created_at: datetime


class StoriesReads(Protocol):
    def story_inputs(self, after_id: int, limit: int) -> list[StoryInput]:
        """Items with an id above ``after_id``, ascending, at most ``limit``."""
        ...

    def story_inputs_by_time(self, after: tuple[datetime, int] | None, limit: int
                             ) -> list[StoryInput]:
        """Items in time order (``at``, id) after ``after``: the order a rebuild replays."""
        ...

    def story_window(self, since: datetime) -> list[StoryMember]:
        """Placed items whose time is ``since`` or later (a warm start of the index)."""
        ...

    def story_clusters(self, item_ids: Sequence[int]) -> dict[int, int]:
        """item id -> cluster id, for the items that are placed."""
        ...

    def story_rows(self, cluster_ids: Sequence[int]) -> list[StoryRow]:
        """Every member of these clusters, earliest first."""
        ...

    def story_members(self, item_ids: Sequence[int]) -> list[StoryMember]:
        """The placements of these items (with their shingles), by item id."""
        ...

    def story_briefs(self, item_ids: Sequence[int]) -> dict[int, list[ItemBrief]]:
        """cluster id -> list rows of every member, earliest first, for the clusters of
        these items that have two members or more (one query, whatever the page)."""
        ...

    def hot_stories(self, since: datetime, limit: int) -> list[int]:
        """Clusters with members from two or more sources at ``since`` or later, the
        most sources first."""
        ...

    def story_links(self) -> list[StoryLink]:
        """Every hand edit, oldest first."""
        ...

    def reprint_pairs(self, source_ids: Sequence[str]) -> set[tuple[str, str]]:
        """(second-hand source, owner) pairs among ``source_ids``: a source that has
        listed items another of them owns (the reprint graph, from discoveries)."""
        ...


class StoriesWrites(Protocol):
    def put_story_members(self, members: Sequence[StoryMember]) -> None:
        """Insert or replace the placements of these items (ignored for deleted items),
        and the meanings of those that carry one."""
        ...

    def move_story_members(self, item_ids: Sequence[int], cluster_id: int) -> int:
        """Put these items in ``cluster_id``; returns how many moved."""
        ...

    def clear_story_members(self) -> int:
        """Forget every placement (a rebuild starts over); hand edits and meanings stay."""
        ...

    def add_story_link(self, link: StoryLink) -> None:
        """Remember a hand edit (a later one of the same pair replaces it)."""
        ...
