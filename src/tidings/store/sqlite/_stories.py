"""Story clusters (R-DEDUP-12): placements of items, hand edits, the reprint graph."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tidings.model import ItemBrief
from tidings.store.sql._base import to_us
from tidings.store.sql.reading import BRIEF_COLUMNS, ITEM_FROM, brief_from_row
from tidings.store.sql.stories import (
    HOT_SELECT,
    INPUT_SELECT,
    LINKS_SELECT,
    MEMBER_SELECT,
    ROW_SELECT,
    WINDOW_SELECT,
    input_from_row,
    inputs_by_time,
    link_from_row,
    link_params,
    meaning_params,
    member_from_row,
    member_params,
    story_row_from_row,
)
from tidings.store.sqlite._db import Access
from tidings.store.stories import StoryInput, StoryLink, StoryMember, StoryRow

_CHUNK = 900


def _chunks(values: Sequence[Any]) -> list[Sequence[Any]]:
    return [values[i:i + _CHUNK] for i in range(0, len(values), _CHUNK)]


class StoriesMixin(Access):
    def story_inputs(self, after_id: int, limit: int) -> list[StoryInput]:
        with self._read() as conn:
            rows = conn.execute(INPUT_SELECT + "WHERE id > ? ORDER BY id LIMIT ?",
                                (after_id, limit)).fetchall()
        return [input_from_row(r) for r in rows]

    def story_inputs_by_time(self, after: tuple[datetime, int] | None, limit: int
                             ) -> list[StoryInput]:
        with self._read() as conn:
            rows = conn.execute(*inputs_by_time(after, limit)).fetchall()
        return [input_from_row(r) for r in rows]

    def story_window(self, since: datetime) -> list[StoryMember]:
        with self._read() as conn:
            rows = conn.execute(WINDOW_SELECT, (to_us(since),)).fetchall()
        return [member_from_row(r) for r in rows]

    def story_members(self, item_ids: Sequence[int]) -> list[StoryMember]:
        out: list[StoryMember] = []
        with self._read() as conn:
            for part in _chunks(list(dict.fromkeys(item_ids))):
                marks = ",".join("?" * len(part))
                out.extend(member_from_row(r) for r in conn.execute(
                    MEMBER_SELECT + f"WHERE m.item_id IN ({marks})", tuple(part)))
        return sorted(out, key=lambda m: m.item_id)

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
                rows = conn.execute(ROW_SELECT + f"WHERE m.cluster_id IN ({marks})",
                                    tuple(part)).fetchall()
                out.extend(story_row_from_row(r) for r in rows)
        out.sort(key=lambda r: (r.at, r.item_id))
        return out

    def story_briefs(self, item_ids: Sequence[int]) -> dict[int, list[ItemBrief]]:
        out: dict[int, list[ItemBrief]] = {}
        with self._read() as conn:
            for part in _chunks(list(dict.fromkeys(item_ids))):
                earlier = set(out)  # a story met in an earlier part is whole already
                marks = ",".join("?" * len(part))
                rows = conn.execute(
                    f"SELECT m.cluster_id, {BRIEF_COLUMNS} FROM {ITEM_FROM} "  # noqa: S608
                    "JOIN story_members m ON m.item_id = i.id WHERE m.cluster_id IN ("
                    f"SELECT cluster_id FROM story_members WHERE item_id IN ({marks})) "
                    "ORDER BY i.sort_time, i.id", tuple(part)).fetchall()
                for r in rows:
                    if int(r[0]) not in earlier:
                        out.setdefault(int(r[0]), []).append(brief_from_row(r[1:]))
        return {c: briefs for c, briefs in out.items() if len(briefs) > 1}

    def hot_stories(self, since: datetime, limit: int) -> list[int]:
        with self._read() as conn:
            rows = conn.execute(HOT_SELECT, (to_us(since), limit)).fetchall()
        return [int(r[0]) for r in rows]

    def story_links(self) -> list[StoryLink]:
        with self._read() as conn:
            rows = conn.execute(LINKS_SELECT).fetchall()
        return [link_from_row(r) for r in rows]

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
                "INSERT OR REPLACE INTO story_members (cluster_id, similarity, matched, at, "
                "hashes, title_hashes, exact, latin_hashes, item_id) "
                "SELECT ?, ?, ?, ?, ?, ?, ?, ?, id FROM items WHERE id = ?",
                [member_params(m) for m in members])
            conn.executemany(
                "INSERT OR REPLACE INTO story_meaning (model, vector, marks, item_id) "
                "SELECT ?, ?, ?, id FROM items WHERE id = ?", meaning_params(members))

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
        with self._write() as conn:
            conn.execute("INSERT OR REPLACE INTO story_links (a, b, apart, created_at) "
                         "VALUES (?, ?, ?, ?)", link_params(link))
