"""Items, the read side: timelines, single items, user state, deletion."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tidings.errors import NotFoundError
from tidings.model import BodyState, Item, Visibility
from tidings.store.base import ItemQuery
from tidings.store.sqlite._db import Access, chunks, from_us, marks, opt_dt, to_us
from tidings.store.sqlite._search import unindex

ITEM_COLUMNS = (
    "i.id, i.key, i.source_id, i.title, i.url, i.summary, i.body, i.body_state, "
    "i.published_at, i.discovered_at, i.updated_at, i.author, i.categories, i.images, "
    "i.raw, i.content_hash, i.title_fp, i.backfill, i.revisions, i.read, i.starred, "
    "coalesce(s.title, '')"
)
ITEM_FROM = "items i LEFT JOIN sources s ON s.id = i.source_id"


def item_from_row(r: Sequence[Any]) -> Item:
    return Item(
        id=r[0], key=r[1], source_id=r[2], title=r[3], url=r[4], summary=r[5], body=r[6],
        body_state=BodyState(r[7]), published_at=opt_dt(r[8]), discovered_at=from_us(r[9]),
        updated_at=from_us(r[10]), author=r[11], categories=tuple(json.loads(r[12])),
        images=tuple(json.loads(r[13])), raw=json.loads(r[14]), content_hash=r[15] or "",
        title_fp=r[16], backfill=bool(r[17]), revisions=r[18], read=bool(r[19]),
        starred=bool(r[20]), source_title=r[21],
    )


def timeline_filters(q: ItemQuery) -> tuple[list[str], list[Any]]:
    """WHERE clauses (on alias ``i``) for the filters of a timeline query."""
    where: list[str] = []
    params: list[Any] = []
    simple: list[tuple[str, Any]] = [
        ("i.source_id = ?", q.source_id), ("i.author = ?", q.author),
        ("i.sort_time >= ?", q.since and to_us(q.since)),
        ("i.sort_time < ?", q.until and to_us(q.until)),
        ("i.body_state = ?", q.body_state and BodyState(q.body_state).value),
    ]
    for clause, value in simple:
        if value is not None:
            where.append(clause)
            params.append(value)
    if q.unread_only:
        where.append("i.read = 0")
    if q.starred_only:
        where.append("i.starred = 1")
    if not q.include_backfill:
        where.append("i.backfill = 0")
    if q.editorial_only:
        where.append("i.source_id NOT IN (SELECT id FROM sources WHERE visibility = ?)")
        params.append(Visibility.ISOLATED.value)
    if q.before is not None:
        where.append("(i.sort_time, i.id) < (?, ?)")
        params.extend((to_us(q.before[0]), q.before[1]))
    return where, params


class ItemsReadMixin(Access):

    def get_item(self, item_id: int) -> Item:
        return self._one_item("i.id = ?", item_id, f"item {item_id} not found")

    def get_item_by_key(self, key: str) -> Item:
        return self._one_item("i.key = ?", key, f"item {key!r} not found")

    def _one_item(self, where: str, value: object, missing: str) -> Item:
        with self._read() as conn:
            row = conn.execute(f"SELECT {ITEM_COLUMNS} FROM {ITEM_FROM} WHERE {where}",  # noqa: S608
                               (value,)).fetchone()
        if row is None:
            raise NotFoundError(missing)
        return item_from_row(row)

    def list_items(self, query: ItemQuery) -> list[Item]:
        where, params = timeline_filters(query)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {ITEM_COLUMNS} FROM {ITEM_FROM} {clause} "  # noqa: S608
                "ORDER BY i.sort_time DESC, i.id DESC LIMIT ?",
                (*params, max(0, query.limit))).fetchall()
        return [item_from_row(r) for r in rows]

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

    def fingerprint_groups(self, fps: Sequence[str]) -> dict[str, list[Item]]:
        out: dict[str, list[Item]] = {}
        wanted = [fp for fp in dict.fromkeys(fps) if fp]
        with self._read() as conn:
            for part in chunks(wanted, 400):
                rows = conn.execute(_FINGERPRINTS.format(marks(len(part))),
                                    (*part, fingerprint_match(part), *part)).fetchall()
                for r in rows:
                    out.setdefault(r[16], []).append(item_from_row(r))
        return out


def fingerprint_match(fps: Sequence[object]) -> str:
    """An FTS5 expression for any of these fingerprints in the search index's own column."""
    return "title_fp : (" + " OR ".join('"' + str(fp).replace('"', '""') + '"'
                                        for fp in fps) + ")"


# Title fingerprints live in the search index (no B-tree on items: see migration 5);
# items waiting for it are few and found through the partial index on search_dirty.
# The index folds case ("AA11" is "aa11" to it), hence the final check on the row.
_FINGERPRINTS = (  # column lists and "?" marks only
    "WITH hits (id) AS ("  # noqa: S608
    " SELECT id FROM items WHERE search_dirty = 1 AND title_fp IN ({0})"
    " UNION"
    " SELECT i.id FROM item_search JOIN items i ON i.search_rowid = item_search.rowid"
    " WHERE item_search MATCH ?) "
    f"SELECT {ITEM_COLUMNS} FROM {ITEM_FROM} "
    "WHERE i.id IN hits AND i.title_fp IN ({0}) ORDER BY i.sort_time, i.id"
)
