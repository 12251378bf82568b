"""Items, the read side: timelines, single items, user state, deletion."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tidings.errors import NotFoundError
from tidings.model import Item, ItemBrief
from tidings.store.base import ItemQuery
from tidings.store.sql._base import chunks, marks, to_us
from tidings.store.sql.reading import (
    BRIEF_COLUMNS,
    ITEM_COLUMNS,
    ITEM_FROM,
    brief_from_row,
    item_from_row,
    timeline_statement,
)
from tidings.store.sqlite._db import Access
from tidings.store.sqlite._search import unindex


def select_timeline(conn: sqlite3.Connection, columns: str, query: ItemQuery,
                    tables: str = ITEM_FROM) -> list[Any]:
    """The rows ``timeline_statement`` selects."""
    return conn.execute(*timeline_statement(columns, query, tables)).fetchall()


class ItemsReadMixin(Access):

    def get_item(self, item_id: int) -> Item:
        return self._one_item("i.id = ?", item_id, f"item {item_id} not found")

    def get_item_by_key(self, key: str) -> Item:
        return self._one_item("i.key = ?", key, f"item {key!r} not found")

    def _one_item(self, where: str, value: object, missing: str) -> Item:
        if isinstance(value, int) and not -(2**63) <= value < 2**63:
            raise NotFoundError(missing)  # no SQLite integer is that large
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
        with self._read() as conn:
            return select_timeline(conn, columns, query)

    def _set_flag(self, column: str, item_ids: Sequence[int], value: bool) -> int:
        changed = 0
        with self._write() as conn:
            for part in chunks(list(dict.fromkeys(item_ids))):
                changed += conn.execute(
                    f"UPDATE items SET {column} = ? WHERE {column} != ? "  # noqa: S608
                    f"AND id IN ({marks(len(part))})", (int(value), int(value), *part)).rowcount
        return changed

    def set_read(self, item_ids: Sequence[int], read: bool) -> int:
        """Returns how many items changed; unknown ids are ignored."""
        return self._set_flag("read", item_ids, read)

    def set_starred(self, item_ids: Sequence[int], starred: bool) -> int:
        """Returns how many items changed; unknown ids are ignored."""
        return self._set_flag("starred", item_ids, starred)

    def delete_item(self, item_id: int, now: datetime) -> None:
        with self._write() as conn:
            row = conn.execute("SELECT key FROM items WHERE id = ?", (item_id,)).fetchone()
            if row is None:
                raise NotFoundError(f"item {item_id} not found")
            unindex(conn, [item_id])
            conn.execute("DELETE FROM items WHERE id = ?", (item_id,))
            conn.execute("INSERT OR REPLACE INTO tombstones (key, deleted_at) VALUES (?, ?)",
                         (row[0], to_us(now)))

    def fingerprint_groups(self, fps: Sequence[str]) -> dict[str, list[ItemBrief]]:
        out: dict[str, list[ItemBrief]] = {}
        wanted = [fp for fp in dict.fromkeys(fps) if fp]
        with self._read() as conn:
            for part in chunks(wanted):
                for r in conn.execute(_FINGERPRINTS.format(marks(len(part))), part):
                    out.setdefault(r[8], []).append(brief_from_row(r))
        return out


# Only fingerprints two or more items share: most titles are nobody's reprint, and
# their rows are never read. ``title_fp != ''`` repeats the partial index's
# condition: SQLite cannot infer it from ``IN (...)`` and would scan the table.
_FINGERPRINTS = (  # column lists and "?" marks only
    f"SELECT {BRIEF_COLUMNS} FROM {ITEM_FROM} "  # noqa: S608
    "WHERE i.title_fp != '' AND i.title_fp IN ("
    " SELECT title_fp FROM items WHERE title_fp IN ({0}) AND title_fp != ''"
    " GROUP BY title_fp HAVING count(*) > 1) "
    "ORDER BY i.sort_time, i.id"
)
