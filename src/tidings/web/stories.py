"""A story as the reader's pages show it (R-DEDUP-12): the article's other sources."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tidings.app import Tidings
from tidings.model import Item

__all__ = ["StoryView", "languages", "shown", "story_of"]


@dataclass(frozen=True, slots=True)
class StoryView:
    """A story as a page shows it: its heat and the items of its other sources."""

    cluster_id: int
    heat: float
    head: Any  # StoryRow of the earliest visible item
    others: list[Any]  # StoryRow, earliest first
    languages: list[str] = field(default_factory=list)  # told in, most rows first

    @property
    def sources(self) -> int:
        return len({self.head.source_id, *(o.source_id for o in self.others)})


def story_of(tid: Tidings, item: Item, visible: Any) -> StoryView | None:
    """The story of ``item`` (for its article page), when other sources told it too."""
    cluster = tid.stories.of_items([item.id]).get(item.id)
    if cluster is None:
        return None
    story = tid.stories.stories([cluster]).get(cluster)
    if story is None:
        return None
    rows = [r for r in story.rows if r.item_id == item.id or shown(visible, r)]
    others = [r for r in rows if r.item_id != item.id]
    if not others:
        return None
    return StoryView(cluster, story.heat, rows[0], others, languages(rows))


def languages(rows: Any) -> list[str]:
    """The languages these rows were told in, most rows first (issue 31)."""
    counts: dict[str, int] = {}
    for r in rows:
        if r.language:
            counts[r.language] = counts.get(r.language, 0) + 1
    return sorted(counts, key=lambda lang: (-counts[lang], lang))


def shown(visible: Any, row: Any) -> bool:
    return bool(visible(row))
