"""Stories: the statements and row converters both backends share."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tidings.store.sql._base import from_us, to_us
from tidings.store.stories import StoredMeaning, StoryInput, StoryLink, StoryMember, StoryRow

#: an item as clustering reads it (the converter: ``input_from_row``)
INPUT_SELECT = ("SELECT id, source_id, title, summary, substr(body, 1, 4000), sort_time, "
                "published_at, discovered_at, backfill, url, v.model, v.vector, v.marks "
                "FROM items LEFT JOIN story_meaning v ON v.item_id = items.id ")


#: a placement with its shingles (the converter: ``member_from_row``)
MEMBER_SELECT = ("SELECT m.item_id, m.cluster_id, i.source_id, m.at, m.similarity, "
                 "m.matched, m.hashes, m.title_hashes, m.exact, m.latin_hashes, i.url, "
                 "v.model, v.vector, v.marks FROM story_members m "
                 "JOIN items i ON i.id = m.item_id "
                 "LEFT JOIN story_meaning v ON v.item_id = m.item_id ")


#: the placements of a time window, as a warm start reads them
WINDOW_SELECT = MEMBER_SELECT + "WHERE m.at >= ? ORDER BY m.at, m.item_id"


#: a member as heat sees it (the converter: ``story_row_from_row``)
ROW_SELECT = ("SELECT m.item_id, m.cluster_id, i.source_id, coalesce(s.title, ''), "
              "coalesce(s.site_url, s.url, ''), i.title, i.sort_time, i.published_at, "
              "i.discovered_at, i.backfill, v.marks FROM story_members m "
              "JOIN items i ON i.id = m.item_id LEFT JOIN sources s ON s.id = i.source_id "
              "LEFT JOIN story_meaning v ON v.item_id = m.item_id ")


#: ties (as many sources, as recent) in cluster order, the same on every backend
HOT_SELECT = ("SELECT m.cluster_id FROM story_members m JOIN items i ON i.id = m.item_id "
              "WHERE m.at >= ? AND i.backfill = 0 GROUP BY m.cluster_id "
              "HAVING count(DISTINCT i.source_id) >= 2 "
              "ORDER BY count(DISTINCT i.source_id) DESC, max(m.at) DESC, m.cluster_id LIMIT ?")


LINKS_SELECT = "SELECT a, b, apart, created_at FROM story_links ORDER BY created_at, a, b"


def pack_hashes(hashes: frozenset[int]) -> bytes:
    return array("I", sorted(hashes)).tobytes()


def _unpack(blob: bytes) -> frozenset[int]:
    values = array("I")
    values.frombytes(blob)
    return frozenset(values)


def _meaning(model: str | None, vector: bytes | None, marks: str | None
             ) -> StoredMeaning | None:
    return StoredMeaning(model, bytes(vector), marks or "") \
        if model is not None and vector is not None else None


def input_from_row(r: Sequence[Any]) -> StoryInput:
    return StoryInput(int(r[0]), r[1], r[2] or "", r[3] or "", r[4], from_us(r[5]),
                      from_us(r[6]) if r[6] is not None else None, from_us(r[7]), bool(r[8]),
                      r[9], _meaning(r[10], r[11], r[12]))


def member_from_row(r: Sequence[Any]) -> StoryMember:
    return StoryMember(int(r[0]), int(r[1]), r[2], from_us(r[3]), float(r[4]),
                       int(r[5]) if r[5] is not None else None, _unpack(r[6]), _unpack(r[7]),
                       int(r[8]), _unpack(r[9]), r[10], _meaning(r[11], r[12], r[13]))


def meaning_params(members: Sequence[StoryMember]) -> list[tuple[str, bytes, str, int]]:
    """model, vector, marks, then the item id, of the members that carry a meaning."""
    return [(m.meaning.model, m.meaning.vector, m.meaning.marks, m.item_id)
            for m in members if m.meaning is not None]


def _language(marks: str | None) -> str:
    """The language a meaning's marks name ("l:zh"), "" when none does."""
    return next((t[2:] for t in (marks or "").split() if t.startswith("l:")), "")


def story_row_from_row(r: Sequence[Any]) -> StoryRow:
    return StoryRow(int(r[0]), int(r[1]), r[2], r[3], r[4], r[5] or "", from_us(r[6]),
                    from_us(r[7]) if r[7] is not None else None, from_us(r[8]), bool(r[9]),
                    _language(r[10]))


def link_from_row(r: Sequence[Any]) -> StoryLink:
    return StoryLink(int(r[0]), int(r[1]), bool(r[2]), from_us(r[3]))


def inputs_by_time(after: tuple[datetime, int] | None, limit: int
                   ) -> tuple[str, tuple[int, ...]]:
    """The statement and parameters of ``story_inputs_by_time``."""
    if after is None:
        return INPUT_SELECT + "ORDER BY sort_time, id LIMIT ?", (limit,)
    return (INPUT_SELECT + "WHERE (sort_time, id) > (?, ?) ORDER BY sort_time, id LIMIT ?",
            (to_us(after[0]), after[1], limit))


def member_params(m: StoryMember) -> tuple[Any, ...]:
    """cluster_id .. latin_hashes, then the item id (the placement's statement)."""
    return (m.cluster_id, m.similarity, m.matched, to_us(m.at), pack_hashes(m.hashes),
            pack_hashes(m.title), m.exact, pack_hashes(m.latin), m.item_id)


def link_params(link: StoryLink) -> tuple[int, int, int, int]:
    """A pair is stored smaller id first, so that (a, b) and (b, a) are one edit."""
    a, b = sorted((link.a, link.b))
    return a, b, int(link.apart), to_us(link.created_at)
