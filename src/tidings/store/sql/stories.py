"""Story clusters (R-DEDUP-12): placements of items, hand edits, the reprint graph.

The statements, row converters and methods both backends share, an item's stored
meaning (``story_meaning``) read beside its placement; how a placement is written
(``put_story_members``: row locks, typed parameters) is each backend's own.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tidings.model import ItemBrief
from tidings.store.sql._base import Connected, from_us, to_us
from tidings.store.sql.reading import BRIEF_COLUMNS, ITEM_FROM, brief_from_row
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


def _ids(values: Sequence[int]) -> list[int]:
    return list(dict.fromkeys(int(v) for v in values))


class StoriesMixin(Connected):
    def story_inputs(self, after_id: int, limit: int) -> list[StoryInput]:
        with self._read() as conn:
            rows = conn.execute(INPUT_SELECT + "WHERE id > ? ORDER BY id LIMIT ?",
                                (after_id, self.dialect.limit(limit))).fetchall()
        return [input_from_row(r) for r in rows]

    def story_inputs_by_time(self, after: tuple[datetime, int] | None, limit: int
                             ) -> list[StoryInput]:
        sql, params = inputs_by_time(after, limit)
        with self._read() as conn:
            rows = conn.execute(sql, (*params[:-1], self.dialect.limit(limit))).fetchall()
        return [input_from_row(r) for r in rows]

    def story_window(self, since: datetime) -> list[StoryMember]:
        with self._read() as conn:
            rows = conn.execute(WINDOW_SELECT, (to_us(since),)).fetchall()
        return [member_from_row(r) for r in rows]

    def story_members(self, item_ids: Sequence[int]) -> list[StoryMember]:
        out: list[StoryMember] = []
        with self._read() as conn:
            for where, params in self.dialect.in_parts("m.item_id", _ids(item_ids)):
                out.extend(member_from_row(r) for r in conn.execute(
                    MEMBER_SELECT + f"WHERE {where} ORDER BY m.item_id", params).fetchall())
        out.sort(key=lambda m: m.item_id)  # parts in the order given
        return out

    def story_clusters(self, item_ids: Sequence[int]) -> dict[int, int]:
        out: dict[int, int] = {}
        with self._read() as conn:
            for where, params in self.dialect.in_parts("item_id", _ids(item_ids)):
                out.update((int(a), int(b)) for a, b in conn.execute(
                    f"SELECT item_id, cluster_id FROM story_members WHERE {where}",  # noqa: S608
                    params).fetchall())
        return out

    def story_rows(self, cluster_ids: Sequence[int]) -> list[StoryRow]:
        out: list[StoryRow] = []
        with self._read() as conn:
            for where, params in self.dialect.in_parts("m.cluster_id", _ids(cluster_ids)):
                out.extend(story_row_from_row(r) for r in conn.execute(
                    ROW_SELECT + f"WHERE {where} ORDER BY i.sort_time, m.item_id",
                    params).fetchall())
        out.sort(key=lambda r: (r.at, r.item_id))  # parts in the order given
        return out

    def story_briefs(self, item_ids: Sequence[int]) -> dict[int, list[ItemBrief]]:
        out: dict[int, list[ItemBrief]] = {}
        with self._read() as conn:
            for where, params in self.dialect.in_parts("item_id", _ids(item_ids)):
                earlier = set(out)  # a story met in an earlier part is whole already
                rows = conn.execute(
                    f"SELECT m.cluster_id, {BRIEF_COLUMNS} FROM {ITEM_FROM} "  # noqa: S608
                    "JOIN story_members m ON m.item_id = i.id WHERE m.cluster_id IN ("
                    f"SELECT cluster_id FROM story_members WHERE {where}) "
                    "ORDER BY i.sort_time, i.id", params).fetchall()
                for r in rows:
                    if int(r[0]) not in earlier:
                        out.setdefault(int(r[0]), []).append(brief_from_row(r[1:]))
        return {c: briefs for c, briefs in out.items() if len(briefs) > 1}

    def hot_stories(self, since: datetime, limit: int) -> list[int]:
        with self._read() as conn:
            rows = conn.execute(HOT_SELECT, (to_us(since), self.dialect.limit(limit))).fetchall()
        return [int(r[0]) for r in rows]

    def story_links(self) -> list[StoryLink]:
        with self._read() as conn:
            rows = conn.execute(LINKS_SELECT).fetchall()
        return [link_from_row(r) for r in rows]

    def reprint_pairs(self, source_ids: Sequence[str]) -> set[tuple[str, str]]:
        ids = list(dict.fromkeys(source_ids))
        if len(ids) < 2:
            return set()
        listed, lparams = self.dialect.any_of("d.source_id", ids)
        owned, oparams = self.dialect.any_of("i.source_id", ids)
        with self._read() as conn:
            rows = conn.execute(
                "SELECT DISTINCT d.source_id, i.source_id FROM discoveries d "  # noqa: S608
                f"JOIN items i ON i.id = d.item_id WHERE {listed} AND {owned} "
                "AND d.source_id != i.source_id", (*lparams, *oparams)).fetchall()
        return {(r[0], r[1]) for r in rows}

    def move_story_members(self, item_ids: Sequence[int], cluster_id: int) -> int:
        moved = 0
        with self._write() as conn:
            for where, params in self.dialect.in_parts("item_id", _ids(item_ids)):
                moved += conn.execute(
                    f"UPDATE story_members SET cluster_id = ? WHERE {where}",  # noqa: S608
                    (cluster_id, *params)).rowcount
        return moved

    def clear_story_members(self) -> int:
        with self._write() as conn:
            return int(conn.execute("DELETE FROM story_members").rowcount)

    def add_story_link(self, link: StoryLink) -> None:
        with self._write() as conn:
            conn.execute("INSERT INTO story_links (a, b, apart, created_at) VALUES (?, ?, ?, ?) "
                         "ON CONFLICT (a, b) DO UPDATE SET apart = excluded.apart, "
                         "created_at = excluded.created_at", link_params(link))
