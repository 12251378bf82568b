"""Search in SQLite's FTS5 index: newest first (FTS rowid order) or ranked (bm25); the
hits and their snippets: ``tidings.store.sql.find``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tidings.store.base import SearchQuery
from tidings.store.sql._base import SqlConn, to_us
from tidings.store.sql.find import _HIT_COLUMNS, RANK_WINDOW, search_filters
from tidings.store.sql.find import SearchMixin as SharedSearch
from tidings.store.sqlite._db import Access
from tidings.store.sqlite._search import US
from tidings.store.textindex import exclusion_expression, match_expression

#: bm25 weights of the indexed columns (title, body, their characters): titles count more
_WEIGHTS = "10.0, 1.0, 10.0, 1.0"


def _rowid_bounds(conn: SqlConn, q: SearchQuery) -> tuple[list[str], list[Any]]:
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


class SearchMixin(SharedSearch, Access):

    def _matching(self, conn: SqlConn, q: SearchQuery) -> Sequence[Any]:
        expr = match_expression(q.terms, q.title_terms, q.excluded)
        return self._filtered(conn, q) if expr is None else self._matched(conn, q, expr)

    def _excluding(self, excluded: Sequence[str]) -> tuple[str, str] | None:
        expr = exclusion_expression(excluded)
        return None if expr is None else (
            "(i.search_rowid IS NULL OR i.search_rowid NOT IN "
            "(SELECT rowid FROM item_search WHERE item_search MATCH ?))", expr)

    @staticmethod
    def _matched(conn: SqlConn, q: SearchQuery, expr: str) -> list[Any]:
        where, params = search_filters(q)
        bounds, bparams = _rowid_bounds(conn, SearchQuery(since=q.since) if q.ranked else q)
        match = " AND ".join(["item_search MATCH ?", *bounds])
        joined = ("JOIN items i ON i.search_rowid = m.r LEFT JOIN sources s ON s.id = i.source_id"
                  + (f" WHERE {' AND '.join(where)}" if where else ""))
        if q.ranked:
            sql = (f"WITH m AS (SELECT rowid AS r, -bm25(item_search, {_WEIGHTS}) AS score "  # noqa: S608
                   f"FROM item_search WHERE {match} ORDER BY rowid DESC LIMIT {RANK_WINDOW}) "
                   f"SELECT {_HIT_COLUMNS}, m.score, 0 FROM m {joined} "
                   "ORDER BY m.score DESC, m.r DESC LIMIT ?")
        else:
            sql = (f"SELECT {_HIT_COLUMNS}, 0.0, 0 FROM (SELECT rowid AS r FROM item_search "  # noqa: S608
                   f"WHERE {match}) m {joined} ORDER BY m.r DESC LIMIT ?")
        rows: list[Any] = conn.execute(sql, (expr, *bparams, *params, max(0, q.limit))
                                       ).fetchall()
        return rows
