"""Reading items: the columns, row converters and timeline filters both backends share."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from tidings.model import BodyState, Item, ItemBrief, Visibility
from tidings.store.base import ItemQuery
from tidings.store.sql._base import EPOCH, from_us, marks, opt_dt, to_us

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


def timeline_statement(columns: str, query: ItemQuery,
                       tables: str = ITEM_FROM) -> tuple[str, list[Any]]:
    """The statement and parameters selecting ``columns`` of ``tables`` (items aliased
    ``i``) for ``query``, in its order, up to its limit (both backends)."""
    where, params = timeline_filters(query)
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    return (f"SELECT {columns} FROM {tables} {clause} "  # noqa: S608
            f"ORDER BY {ORDERS.get(query.order, ORDERS['newest'])} LIMIT ?",
            [*params, max(0, query.limit)])
