"""Items, the read side: timelines, single items, user state, deletion."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tidings.errors import NotFoundError
from tidings.model import Item, ItemBrief
from tidings.store.base import ItemQuery
from tidings.store.postgres._db import Access
from tidings.store.sql._base import to_us
from tidings.store.sql.reading import (
    BRIEF_COLUMNS,
    ITEM_COLUMNS,
    ITEM_FROM,
    ORDERS,
    brief_from_row,
    item_from_row,
    timeline_filters,
)

# Only fingerprints two or more items share (as in SQLite); the partial index's
# condition is repeated so that the planner may use it.
_FINGERPRINTS = (
    f"SELECT {BRIEF_COLUMNS} FROM {ITEM_FROM} "  # noqa: S608
    "WHERE i.title_fp != '' AND i.title_fp IN ("
    " SELECT title_fp FROM items WHERE title_fp = ANY(?) AND title_fp != ''"
    " GROUP BY title_fp HAVING count(*) > 1) "
    "ORDER BY i.sort_time, i.id"
)


class ItemsReadMixin(Access):

    def get_item(self, item_id: int) -> Item:
        return self._one_item("i.id = ?", item_id, f"item {item_id} not found")

    def get_item_by_key(self, key: str) -> Item:
        return self._one_item("i.key = ?", key, f"item {key!r} not found")

    def _one_item(self, where: str, value: object, missing: str) -> Item:
        if isinstance(value, int) and not -(2**63) <= value < 2**63:
            raise NotFoundError(missing)  # beyond bigint: no item has that id
        with self._read() as conn:
            row = conn.execute(f"SELECT {ITEM_COLUMNS} FROM {ITEM_FROM} WHERE {where}",  # noqa: S608
                               (value,)).fetchone()
        if row is None:
            raise NotFoundError(missing)
        return item_from_row(row)

    def list_items(self, query: ItemQuery) -> list[Item]:
        return [item_from_row(r) for r in self._timeline(ITEM_COLUMNS, query)]

    def list_briefs(self, query: ItemQuery) -> list[ItemBrief]:
        return [brief_from_row(r) for r in self._timeline(BRIEF_COLUMNS, query)]

    def _timeline(self, columns: str, query: ItemQuery) -> list[Any]:
        where, params = timeline_filters(query)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        with self._read() as conn:
            return conn.execute(
                f"SELECT {columns} FROM {ITEM_FROM} {clause} "  # noqa: S608
                f"ORDER BY {ORDERS.get(query.order, ORDERS['newest'])} LIMIT ?",
                (*params, max(0, query.limit))).fetchall()

    def _set_flag(self, column: str, item_ids: Sequence[int], value: bool) -> int:
        with self._write() as conn:
            return int(conn.execute(
                f"UPDATE items SET {column} = ? WHERE {column} != ? AND id = ANY(?)",  # noqa: S608
                (int(value), int(value), sorted(set(item_ids)))).rowcount)

    def set_read(self, item_ids: Sequence[int], read: bool) -> int:
        return self._set_flag("read", item_ids, read)

    def set_starred(self, item_ids: Sequence[int], starred: bool) -> int:
        return self._set_flag("starred", item_ids, starred)

    def delete_item(self, item_id: int, now: datetime) -> None:
        with self._write() as conn:
            row = conn.execute("DELETE FROM items WHERE id = ? RETURNING key",
                               (item_id,)).fetchone()
            if row is None:
                raise NotFoundError(f"item {item_id} not found")
            conn.execute("INSERT INTO tombstones (key, deleted_at) VALUES (?, ?) "
                         "ON CONFLICT (key) DO UPDATE SET deleted_at = excluded.deleted_at",
                         (row[0], to_us(now)))

    def fingerprint_groups(self, fps: Sequence[str]) -> dict[str, list[ItemBrief]]:
        out: dict[str, list[ItemBrief]] = {}
        wanted = [fp for fp in dict.fromkeys(fps) if fp]
        if not wanted:
            return out
        with self._read() as conn:
            for r in conn.execute(_FINGERPRINTS, (wanted,)).fetchall():
                out.setdefault(r[8], []).append(brief_from_row(r))
        return out
