"""Story clusters (R-DEDUP-12): placements of items, hand edits, the reprint graph."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tidings.model import ItemBrief
from tidings.store.sqlite._db import Access, from_us, to_us
from tidings.store.sqlite._reading import BRIEF_COLUMNS, ITEM_FROM, brief_from_row
from tidings.store.stories import StoryInput, StoryLink, StoryMember, StoryRow

_INPUT = ("SELECT id, source_id, title, summary, substr(body, 1, 4000), sort_time, "
          "published_at, discovered_at, backfill, url FROM items ")
_MEMBER = ("SELECT m.item_id, m.cluster_id, i.source_id, m.at, m.similarity, m.matched, "
           "m.hashes, m.title_hashes, m.exact, m.latin_hashes, i.url FROM story_members m "
           "JOIN items i ON i.id = m.item_id ")
_CHUNK = 900


def _pack(hashes: frozenset[int]) -> bytes:
    return array("I", sorted(hashes)).tobytes()


def _unpack(blob: bytes) -> frozenset[int]:
    values = array("I")
    values.frombytes(blob)
    return frozenset(values)


def _input(r: Sequence[Any]) -> StoryInput:
    return StoryInput(int(r[0]), r[1], r[2] or "", r[3] or "", r[4], from_us(r[5]),
                      from_us(r[6]) if r[6] is not None else None, from_us(r[7]), bool(r[8]),
                      r[9])


def _member(r: Sequence[Any]) -> StoryMember:
    return StoryMember(int(r[0]), int(r[1]), r[2], from_us(r[3]), float(r[4]),
                       int(r[5]) if r[5] is not None else None, _unpack(r[6]), _unpack(r[7]),
                       int(r[8]), _unpack(r[9]), r[10])


def _chunks(values: Sequence[Any]) -> list[Sequence[Any]]:
    return [values[i:i + _CHUNK] for i in range(0, len(values), _CHUNK)]


class StoriesMixin(Access):
    def story_inputs(self, after_id: int, limit: int) -> list[StoryInput]:
        with self._read() as conn:
            rows = conn.execute(_INPUT + "WHERE id > ? ORDER BY id LIMIT ?",
                                (after_id, limit)).fetchall()
        return [_input(r) for r in rows]

    def story_inputs_by_time(self, after: tuple[datetime, int] | None, limit: int
                             ) -> list[StoryInput]:
        where = ""
        params_t: tuple[int, ...] = ()
        if after is not None:
            where, params_t = "WHERE (sort_time, id) > (?, ?) ", (to_us(after[0]), after[1])
        with self._read() as conn:
            rows = conn.execute(_INPUT + where + "ORDER BY sort_time, id LIMIT ?",
                                (*params_t, limit)).fetchall()
        return [_input(r) for r in rows]

    def story_window(self, since: datetime) -> list[StoryMember]:
        with self._read() as conn:
            rows = conn.execute(_MEMBER + "WHERE m.at >= ? ORDER BY m.at, m.item_id",
                                (to_us(since),)).fetchall()
        return [_member(r) for r in rows]

    def story_members(self, item_ids: Sequence[int]) -> list[StoryMember]:
        out: list[StoryMember] = []
        with self._read() as conn:
            for part in _chunks(list(item_ids)):
                marks = ",".join("?" * len(part))
                out.extend(_member(r) for r in conn.execute(
                    _MEMBER + f"WHERE m.item_id IN ({marks})", tuple(part)))
        return out

    def story_clusters(self, item_ids: Sequence[int]) -> dict[int, int]:
        out: dict[int, int] = {}
        with self._read() as conn:
            for part in _chunks(list(item_ids)):
                marks = ",".join("?" * len(part))
                out.update((int(a), int(b)) for a, b in conn.execute(
                    f"SELECT item_id, cluster_id FROM story_members "  # noqa: S608
                    f"WHERE item_id IN ({marks})", tuple(part)))
        return out

    def story_rows(self, cluster_ids: Sequence[int]) -> list[StoryRow]:
        out: list[StoryRow] = []
        with self._read() as conn:
            for part in _chunks(list(cluster_ids)):
                marks = ",".join("?" * len(part))
                rows = conn.execute(
                    "SELECT m.item_id, m.cluster_id, i.source_id, coalesce(s.title, ''), "  # noqa: S608
                    "coalesce(s.site_url, s.url, ''), i.title, i.sort_time, i.published_at, "
                    "i.discovered_at, i.backfill FROM story_members m "
                    "JOIN items i ON i.id = m.item_id LEFT JOIN sources s ON s.id = i.source_id "
                    f"WHERE m.cluster_id IN ({marks})",
                    tuple(part)).fetchall()
                out.extend(StoryRow(int(r[0]), int(r[1]), r[2], r[3], r[4], r[5] or "",
                                    from_us(r[6]),
                                    from_us(r[7]) if r[7] is not None else None,
                                    from_us(r[8]), bool(r[9])) for r in rows)
        out.sort(key=lambda r: (r.at, r.item_id))
        return out

    def story_briefs(self, item_ids: Sequence[int]) -> dict[int, list[ItemBrief]]:
        out: dict[int, list[ItemBrief]] = {}
        with self._read() as conn:
            for part in _chunks(list(dict.fromkeys(item_ids))):
                marks = ",".join("?" * len(part))
                rows = conn.execute(
                    f"SELECT m.cluster_id, {BRIEF_COLUMNS} FROM {ITEM_FROM} "  # noqa: S608
                    "JOIN story_members m ON m.item_id = i.id WHERE m.cluster_id IN ("
                    f"SELECT cluster_id FROM story_members WHERE item_id IN ({marks})) "
                    "ORDER BY i.sort_time, i.id", tuple(part)).fetchall()
                for r in rows:
                    out.setdefault(int(r[0]), []).append(brief_from_row(r[1:]))
        return {c: briefs for c, briefs in out.items() if len(briefs) > 1}

    def hot_stories(self, since: datetime, limit: int) -> list[int]:
        with self._read() as conn:
            rows = conn.execute(
                "SELECT m.cluster_id FROM story_members m JOIN items i ON i.id = m.item_id "
                "WHERE m.at >= ? AND i.backfill = 0 GROUP BY m.cluster_id "
                "HAVING count(DISTINCT i.source_id) >= 2 "
                "ORDER BY count(DISTINCT i.source_id) DESC, max(m.at) DESC LIMIT ?",
                (to_us(since), limit)).fetchall()
        return [int(r[0]) for r in rows]

    def story_links(self) -> list[StoryLink]:
        with self._read() as conn:
            rows = conn.execute("SELECT a, b, apart, created_at FROM story_links "
                                "ORDER BY created_at, a, b").fetchall()
        return [StoryLink(int(r[0]), int(r[1]), bool(r[2]), from_us(r[3])) for r in rows]

    def reprint_pairs(self, source_ids: Sequence[str]) -> set[tuple[str, str]]:
        ids = list(dict.fromkeys(source_ids))
        if len(ids) < 2:
            return set()
        marks = ",".join("?" * len(ids))
        with self._read() as conn:
            rows = conn.execute(
                "SELECT DISTINCT d.source_id, i.source_id FROM discoveries d "  # noqa: S608
                f"JOIN items i ON i.id = d.item_id WHERE d.source_id IN ({marks}) "
                f"AND i.source_id IN ({marks}) AND d.source_id != i.source_id",
                (*ids, *ids)).fetchall()
        return {(r[0], r[1]) for r in rows}

    def put_story_members(self, members: Sequence[StoryMember]) -> None:
        with self._write() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO story_members (item_id, cluster_id, similarity, matched, "
                "at, hashes, title_hashes, exact, latin_hashes) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? "
                "WHERE EXISTS (SELECT 1 FROM items WHERE id = ?)",
                [(m.item_id, m.cluster_id, m.similarity, m.matched, to_us(m.at), _pack(m.hashes),
                  _pack(m.title), m.exact, _pack(m.latin), m.item_id) for m in members])

    def move_story_members(self, item_ids: Sequence[int], cluster_id: int) -> int:
        moved = 0
        with self._write() as conn:
            for part in _chunks(list(item_ids)):
                marks = ",".join("?" * len(part))
                moved += conn.execute(
                    f"UPDATE story_members SET cluster_id = ? "  # noqa: S608
                    f"WHERE item_id IN ({marks})", (cluster_id, *part)).rowcount
        return moved

    def clear_story_members(self) -> int:
        with self._write() as conn:
            return int(conn.execute("DELETE FROM story_members").rowcount)

    def add_story_link(self, link: StoryLink) -> None:
        a, b = sorted((link.a, link.b))
        with self._write() as conn:
            conn.execute("INSERT OR REPLACE INTO story_links (a, b, apart, created_at) "
                         "VALUES (?, ?, ?, ?)", (a, b, int(link.apart), to_us(link.created_at)))
