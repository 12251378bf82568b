"""Story clusters (R-DEDUP-12): placements of items, hand edits, the reprint graph.

The statements of ``tidings.store.sqlite._stories`` with its converters and shingle
packing; a list of ids is one ``= ANY(?)`` instead of chunks of ``IN (...)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from tidings.model import ItemBrief
from tidings.store.postgres._db import Access
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
from tidings.store.stories import StoryInput, StoryLink, StoryMember, StoryRow

# the parameters are typed (a NULL ``matched`` has no type of its own), and the item's
# row is locked (FOR KEY SHARE) so that an item deleted meanwhile is skipped, as a
# deleted one is, instead of failing the foreign key
_PUT = ("INSERT INTO story_members (cluster_id, similarity, matched, at, hashes, "
        "title_hashes, exact, latin_hashes, item_id) SELECT ?::bigint, ?::float8, ?::bigint, "
        "?::bigint, ?::bytea, ?::bytea, ?::bigint, ?::bytea, id FROM items WHERE id = ? "
        "FOR KEY SHARE ON CONFLICT (item_id) DO UPDATE SET cluster_id = excluded.cluster_id, "
        "similarity = excluded.similarity, matched = excluded.matched, at = excluded.at, "
        "hashes = excluded.hashes, title_hashes = excluded.title_hashes, "
        "exact = excluded.exact, latin_hashes = excluded.latin_hashes")
_PUT_MEANING = ("INSERT INTO story_meaning (model, vector, marks, item_id) "
                "SELECT ?::text, ?::bytea, ?::text, id FROM items WHERE id = ? FOR KEY SHARE "
                "ON CONFLICT (item_id) DO UPDATE SET model = excluded.model, "
                "vector = excluded.vector, marks = excluded.marks")


def _limit(limit: int) -> int | None:
    """SQLite reads a negative LIMIT as none at all; PostgreSQL's is NULL."""
    return limit if limit >= 0 else None


def _ids(values: Sequence[int]) -> list[int]:
    return list(dict.fromkeys(int(v) for v in values))


class StoriesMixin(Access):
    def story_inputs(self, after_id: int, limit: int) -> list[StoryInput]:
        with self._read() as conn:
            rows = conn.execute(INPUT_SELECT + "WHERE id > ? ORDER BY id LIMIT ?",
                                (after_id, _limit(limit))).fetchall()
        return [input_from_row(r) for r in rows]

    def story_inputs_by_time(self, after: tuple[datetime, int] | None, limit: int
                             ) -> list[StoryInput]:
        sql, params = inputs_by_time(after, limit)
        with self._read() as conn:
            rows = conn.execute(sql, (*params[:-1], _limit(limit))).fetchall()
        return [input_from_row(r) for r in rows]

    def story_window(self, since: datetime) -> list[StoryMember]:
        with self._read() as conn:
            rows = conn.execute(WINDOW_SELECT, (to_us(since),)).fetchall()
        return [member_from_row(r) for r in rows]

    def story_members(self, item_ids: Sequence[int]) -> list[StoryMember]:
        with self._read() as conn:
            rows = conn.execute(MEMBER_SELECT + "WHERE m.item_id = ANY(?) ORDER BY m.item_id",
                                (_ids(item_ids),)).fetchall()
        return [member_from_row(r) for r in rows]

    def story_clusters(self, item_ids: Sequence[int]) -> dict[int, int]:
        with self._read() as conn:
            rows = conn.execute("SELECT item_id, cluster_id FROM story_members "
                                "WHERE item_id = ANY(?)", (_ids(item_ids),)).fetchall()
        return {int(a): int(b) for a, b in rows}

    def story_rows(self, cluster_ids: Sequence[int]) -> list[StoryRow]:
        with self._read() as conn:
            rows = conn.execute(ROW_SELECT + "WHERE m.cluster_id = ANY(?) "
                                "ORDER BY i.sort_time, m.item_id", (_ids(cluster_ids),)).fetchall()
        return [story_row_from_row(r) for r in rows]

    def story_briefs(self, item_ids: Sequence[int]) -> dict[int, list[ItemBrief]]:
        out: dict[int, list[ItemBrief]] = {}
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT m.cluster_id, {BRIEF_COLUMNS} FROM {ITEM_FROM} "  # noqa: S608
                "JOIN story_members m ON m.item_id = i.id WHERE m.cluster_id IN ("
                "SELECT cluster_id FROM story_members WHERE item_id = ANY(?)) "
                "ORDER BY i.sort_time, i.id", (_ids(item_ids),)).fetchall()
        for r in rows:
            out.setdefault(int(r[0]), []).append(brief_from_row(r[1:]))
        return {c: briefs for c, briefs in out.items() if len(briefs) > 1}

    def hot_stories(self, since: datetime, limit: int) -> list[int]:
        with self._read() as conn:
            rows = conn.execute(HOT_SELECT, (to_us(since), _limit(limit))).fetchall()
        return [int(r[0]) for r in rows]

    def story_links(self) -> list[StoryLink]:
        with self._read() as conn:
            rows = conn.execute(LINKS_SELECT).fetchall()
        return [link_from_row(r) for r in rows]

    def reprint_pairs(self, source_ids: Sequence[str]) -> set[tuple[str, str]]:
        ids = list(dict.fromkeys(source_ids))
        if len(ids) < 2:
            return set()
        with self._read() as conn:
            rows = conn.execute(
                "SELECT DISTINCT d.source_id, i.source_id FROM discoveries d "
                "JOIN items i ON i.id = d.item_id WHERE d.source_id = ANY(?) "
                "AND i.source_id = ANY(?) AND d.source_id != i.source_id",
                (ids, ids)).fetchall()
        return {(r[0], r[1]) for r in rows}

    def put_story_members(self, members: Sequence[StoryMember]) -> None:
        with self._write() as conn:
            conn.executemany(_PUT, [member_params(m) for m in members])
            meanings = meaning_params(members)
            if meanings:
                conn.executemany(_PUT_MEANING, meanings)

    def move_story_members(self, item_ids: Sequence[int], cluster_id: int) -> int:
        with self._write() as conn:
            return int(conn.execute(
                "UPDATE story_members SET cluster_id = ? WHERE item_id = ANY(?)",
                (cluster_id, _ids(item_ids))).rowcount)

    def clear_story_members(self) -> int:
        with self._write() as conn:
            return int(conn.execute("DELETE FROM story_members").rowcount)

    def add_story_link(self, link: StoryLink) -> None:
        with self._write() as conn:
            conn.execute("INSERT INTO story_links (a, b, apart, created_at) VALUES (?, ?, ?, ?) "
                         "ON CONFLICT (a, b) DO UPDATE SET apart = excluded.apart, "
                         "created_at = excluded.created_at",
                         link_params(link))
