"""Search: newest first (FTS rowid order) or ranked (bm25), with highlighted snippets."""

from __future__ import annotations

import sqlite3
from typing import Any

from tidings.model import SearchHit
from tidings.store.base import ItemQuery, SearchQuery
from tidings.store.sql._base import to_us
from tidings.store.sql.find import _HIT_COLUMNS, RANK_WINDOW
from tidings.store.sql.reading import brief_from_row, timeline_filters
from tidings.store.sqlite._db import Access
from tidings.store.sqlite._search import US
from tidings.store.textindex import (
    exclusion_expression,
    highlighter,
    html_snippet,
    match_expression,
    snippet,
)

#: bm25 weights of the indexed columns (title, body, their characters): titles count more
_WEIGHTS = "10.0, 1.0, 10.0, 1.0"


def _filters(q: SearchQuery) -> tuple[list[str], list[Any]]:
    return timeline_filters(ItemQuery(source_id=q.source_id, author=q.author, since=q.since,
                                      until=q.until))


def _rowid_bounds(conn: sqlite3.Connection, q: SearchQuery) -> tuple[list[str], list[Any]]:
    """Bounds on the FTS rowid (a sort time, nudged up by at most a little)."""
    where: list[str] = []
    params: list[Any] = []
    if q.since is not None:
        where.append("item_search.rowid >= ?")
        params.append(to_us(q.since) // US)
    if q.before is not None:
        row = conn.execute("SELECT search_rowid FROM items WHERE id = ?",
                           (q.before[1],)).fetchone()
        where.append("item_search.rowid < ?")
        params.append(row[0] if row and row[0] is not None else to_us(q.before[0]) // US)
    return where, params


class SearchMixin(Access):

    def search(self, query: SearchQuery) -> list[SearchHit]:
        expr = match_expression(query.terms, query.title_terms, query.excluded)
        with self._read() as conn:
            rows = (self._filtered(conn, query) if expr is None
                    else self._matched(conn, query, expr))
        pattern = highlighter((*query.terms, *query.title_terms))
        hits = []
        for row in rows:
            item = brief_from_row(row)
            cut = html_snippet(row[-2], pattern) or snippet(item.title, pattern)
            hits.append(SearchHit(item=item, snippet=cut, rank=float(row[-1])))
        return hits

    @staticmethod
    def _matched(conn: sqlite3.Connection, q: SearchQuery, expr: str) -> list[Any]:
        where, params = _filters(q)
        bounds, bparams = _rowid_bounds(conn, SearchQuery(since=q.since) if q.ranked else q)
        match = " AND ".join(["item_search MATCH ?", *bounds])
        joined = ("JOIN items i ON i.search_rowid = m.r LEFT JOIN sources s ON s.id = i.source_id"
                  + (f" WHERE {' AND '.join(where)}" if where else ""))
        if q.ranked:
            sql = (f"WITH m AS (SELECT rowid AS r, -bm25(item_search, {_WEIGHTS}) AS score "  # noqa: S608
                   f"FROM item_search WHERE {match} ORDER BY rowid DESC LIMIT {RANK_WINDOW}) "
                   f"SELECT m.score, {_HIT_COLUMNS} FROM m {joined} "
                   "ORDER BY m.score DESC, m.r DESC LIMIT ?")
        else:
            sql = (f"SELECT 0.0, {_HIT_COLUMNS} FROM (SELECT rowid AS r FROM item_search "  # noqa: S608
                   f"WHERE {match}) m {joined} ORDER BY m.r DESC LIMIT ?")
        rows = conn.execute(sql, (expr, *bparams, *params, max(0, q.limit))).fetchall()
        return [(*r[1:], r[0]) for r in rows]

    @staticmethod
    def _filtered(conn: sqlite3.Connection, q: SearchQuery) -> list[Any]:
        """A query without words: the filters alone, newest first (negations apply)."""
        where, params = timeline_filters(ItemQuery(
            source_id=q.source_id, author=q.author, since=q.since, until=q.until,
            before=q.before))
        excluded = exclusion_expression(q.excluded)
        if excluded is not None:
            where.append("(i.search_rowid IS NULL OR i.search_rowid NOT IN "
                         "(SELECT rowid FROM item_search WHERE item_search MATCH ?))")
            params.append(excluded)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        rows = conn.execute(
            f"SELECT {_HIT_COLUMNS}, 0.0 FROM items i LEFT JOIN sources s ON s.id = i.source_id "  # noqa: S608
            f"{clause} ORDER BY i.sort_time DESC, i.id DESC LIMIT ?",
            (*params, max(0, q.limit))).fetchall()
        return list(rows)
