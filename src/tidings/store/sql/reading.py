"""Items, the read side (timelines, single items, user state, deletion): the columns,
row converters, timeline filters and methods both backends share."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from tidings.errors import NotFoundError
from tidings.model import BodyState, Item, ItemBrief, Visibility
from tidings.store.base import ItemQuery
from tidings.store.sql._base import EPOCH, Connected, SqlConn, from_us, marks, opt_dt, to_us

ITEM_COLUMNS = (
    "i.id, i.key, i.source_id, i.title, i.url, i.summary, i.body, i.body_state, "
    "i.published_at, i.discovered_at, i.updated_at, i.author, i.categories, i.images, "
    "i.raw, i.content_hash, i.title_fp, i.backfill, i.revisions, i.read, i.starred, "
    "coalesce(s.title, '')"
)


ITEM_FROM = "items i LEFT JOIN sources s ON s.id = i.source_id"


#: what a list row shows (ItemBrief): no body, summary or JSON columns
BRIEF_COLUMNS = (
    "i.id, i.source_id, i.title, i.url, i.published_at, i.discovered_at, i.author, "
    "i.body_state, i.title_fp, i.backfill, i.read, i.starred, coalesce(s.title, '')"
)


def item_from_row(r: Sequence[Any]) -> Item:
    return Item(
        id=r[0], key=r[1], source_id=r[2], title=r[3], url=r[4], summary=r[5], body=r[6],
        body_state=BodyState(r[7]), published_at=opt_dt(r[8]), discovered_at=from_us(r[9]),
        updated_at=from_us(r[10]), author=r[11], categories=tuple(json.loads(r[12])),
        images=tuple(json.loads(r[13])), raw=json.loads(r[14]), content_hash=r[15] or "",
        title_fp=r[16], backfill=bool(r[17]), revisions=r[18], read=bool(r[19]),
        starred=bool(r[20]), source_title=r[21],
    )


#: stored value -> BodyState: a dict look-up is cheaper than ``BodyState(value)``
BODY_STATES = {state.value: state for state in BodyState}


def brief_from_row(r: Sequence[Any]) -> ItemBrief:
    # positional, in ItemBrief's field order, and the times converted in place
    # (from_us's arithmetic): a list page builds 60+ of these
    published = None if r[4] is None else EPOCH + timedelta(0, 0, r[4])
    return ItemBrief(r[0], r[1], r[2], r[3], published, EPOCH + timedelta(0, 0, r[5]), r[6],
                     BODY_STATES[r[7]], r[8], bool(r[9]), bool(r[10]), bool(r[11]), r[12])


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
    _more_filters(q, where, params)
    return where, params


#: ORDER BY of each ``ItemQuery.order``
ORDERS = {"newest": "i.sort_time DESC, i.id DESC", "oldest": "i.sort_time, i.id",
          "id": "i.id", "id_desc": "i.id DESC"}


def _more_filters(q: ItemQuery, where: list[str], params: list[Any]) -> None:
    """The filters the compatibility APIs add (folders, id lists and ranges); an empty
    list matches nothing (``1 = 0``: a condition both backends take)."""
    if q.source_ids is not None:
        where.append(f"i.source_id IN ({marks(len(q.source_ids))})" if q.source_ids
                     else "1 = 0")
        params.extend(q.source_ids)
    if q.ids is not None:
        where.append(f"i.id IN ({marks(len(q.ids))})" if q.ids else "1 = 0")
        params.extend(q.ids)
    for clause, value in (("i.id > ?", q.min_id), ("i.id < ?", q.max_id)):
        if value is not None:
            where.append(clause)
            params.append(value)
    if q.after is not None:
        where.append("(i.sort_time, i.id) > (?, ?)")
        params.extend((to_us(q.after[0]), q.after[1]))
    if q.read_only:
        where.append("i.read = 1")
    if q.arrived_until is not None:
        where.append("i.discovered_at <= ?")
        params.append(to_us(q.arrived_until))


def timeline_statement(columns: str, query: ItemQuery,
                       tables: str = ITEM_FROM) -> tuple[str, list[Any]]:
    """The statement and parameters selecting ``columns`` of ``tables`` (items aliased
    ``i``) for ``query``, in its order, up to its limit (both backends)."""
    where, params = timeline_filters(query)
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    return (f"SELECT {columns} FROM {tables} {clause} "  # noqa: S608
            f"ORDER BY {ORDERS.get(query.order, ORDERS['newest'])} LIMIT ?",
            [*params, max(0, query.limit)])


# Only fingerprints two or more items share: most titles are nobody's reprint, and
# their rows are never read. ``title_fp != ''`` repeats the partial index's
# condition: SQLite cannot infer it from ``IN (...)`` and would scan the table, and
# PostgreSQL's planner may then use the index too. ``{0}``: ``Dialect.any_of``.
FINGERPRINTS = (  # column lists and a condition of "?" marks only
    f"SELECT {BRIEF_COLUMNS} FROM {ITEM_FROM} "  # noqa: S608
    "WHERE i.title_fp != '' AND i.title_fp IN ("
    " SELECT title_fp FROM items WHERE {0} AND title_fp != ''"
    " GROUP BY title_fp HAVING count(*) > 1) "
    "ORDER BY i.sort_time, i.id"
)


class ItemsReadMixin(Connected):

    def get_item(self, item_id: int) -> Item:
        return self._one_item("i.id = ?", item_id, f"item {item_id} not found")

    def get_item_by_key(self, key: str) -> Item:
        return self._one_item("i.key = ?", key, f"item {key!r} not found")

    def _one_item(self, where: str, value: object, missing: str) -> Item:
        if isinstance(value, int) and not -(2**63) <= value < 2**63:
            raise NotFoundError(missing)  # beyond a 64-bit integer: no item has that id
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

    def _timeline(self, columns: str, query: ItemQuery) -> Sequence[Any]:
        with self._read() as conn:
            rows: Sequence[Any] = conn.execute(*timeline_statement(columns, query)).fetchall()
        return rows

    def _set_flag(self, column: str, item_ids: Sequence[int], value: bool) -> int:
        changed = 0
        with self._write() as conn:
            for where, params in self.dialect.in_parts("id", sorted(set(item_ids))):
                changed += conn.execute(
                    f"UPDATE items SET {column} = ? WHERE {column} != ? AND {where}",  # noqa: S608
                    (int(value), int(value), *params)).rowcount
        return changed

    def set_read(self, item_ids: Sequence[int], read: bool) -> int:
        """Returns how many items changed; unknown ids are ignored."""
        return self._set_flag("read", item_ids, read)

    def set_starred(self, item_ids: Sequence[int], starred: bool) -> int:
        """Returns how many items changed; unknown ids are ignored."""
        return self._set_flag("starred", item_ids, starred)

    def _unindex(self, conn: SqlConn, item_ids: Sequence[int]) -> None:
        """Take items about to change or go out of the search index. PostgreSQL's
        index rows go with their item (``ON DELETE CASCADE``): nothing to do;
        SQLite's full-text index is told what each document held."""

    def delete_item(self, item_id: int, now: datetime) -> None:
        with self._write() as conn:
            self._unindex(conn, [item_id])  # nothing for an unknown id
            # fetchall: on SQLite a RETURNING statement left unfinished holds the transaction
            rows = conn.execute("DELETE FROM items WHERE id = ? RETURNING key",
                                (item_id,)).fetchall()
            if not rows:
                raise NotFoundError(f"item {item_id} not found")
            conn.execute("INSERT INTO tombstones (key, deleted_at) VALUES (?, ?) "
                         "ON CONFLICT (key) DO UPDATE SET deleted_at = excluded.deleted_at",
                         (rows[0][0], to_us(now)))

    def fingerprint_groups(self, fps: Sequence[str]) -> dict[str, list[ItemBrief]]:
        out: dict[str, list[ItemBrief]] = {}
        wanted = [fp for fp in dict.fromkeys(fps) if fp]
        with self._read() as conn:
            for where, params in self.dialect.in_parts("title_fp", wanted):
                for r in conn.execute(FINGERPRINTS.format(where), params).fetchall():
                    out.setdefault(r[8], []).append(brief_from_row(r))
        return out
