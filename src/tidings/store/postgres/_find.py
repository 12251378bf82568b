"""Search: newest first (an index walk by sort time) or ranked (ts_rank), with snippets."""

from __future__ import annotations

from typing import Any

from tidings.model import SearchHit
from tidings.store.base import ItemQuery, SearchQuery
from tidings.store.postgres._db import Access, Conn
from tidings.store.postgres._search import RANK_WEIGHTS, exclusion_query, tsquery
from tidings.store.sqlite._db import to_us
from tidings.store.sqlite._find import _HIT_COLUMNS, RANK_WINDOW
from tidings.store.sqlite._reading import brief_from_row, timeline_filters
from tidings.store.textindex import highlighter, html_snippet, snippet

_JOIN = "JOIN items i ON i.id = m.item_id LEFT JOIN sources s ON s.id = i.source_id"


def _filters(q: SearchQuery) -> tuple[list[str], list[Any]]:
    return timeline_filters(ItemQuery(source_id=q.source_id, author=q.author, since=q.since,
                                      until=q.until))


class SearchMixin(Access):

    def search(self, query: SearchQuery) -> list[SearchHit]:
        expr = tsquery(query.terms, query.title_terms, query.excluded)
        weighted = tsquery(query.terms, query.title_terms, query.excluded, weighted=True)
        with self._read() as conn:
            rows = (self._filtered(conn, query) if expr is None or weighted is None
                    else self._ranked(conn, query, expr, weighted) if query.ranked
                    else self._newest(conn, query, weighted))
        pattern = highlighter((*query.terms, *query.title_terms))
        hits = []
        for row in rows:
            item = brief_from_row(row)
            cut = html_snippet(row[-2], pattern) or snippet(item.title, pattern)
            hits.append(SearchHit(item=item, snippet=cut, rank=float(row[-1])))
        return hits

    @staticmethod
    def _newest(conn: Conn, q: SearchQuery, expr: str) -> list[Any]:
        """Matched by the weighted query (the same items): measured at 100,000 items,
        its estimates lead the planner to walk ``(sort_time, item_id)`` backwards for
        common words, where the unweighted one sorts every match (docs/benchmarks.md,
        issue 21)."""
        where, params = _filters(q)
        if q.before is not None:
            where.append("(m.sort_time, m.item_id) < (?, ?)")
            params.extend((to_us(q.before[0]), q.before[1]))
        clause = "".join(f" AND {w}" for w in where)
        return conn.execute(
            f"SELECT {_HIT_COLUMNS}, 0.0 FROM item_search m {_JOIN} "  # noqa: S608
            f"WHERE m.doc @@ ?::tsquery{clause} "
            "ORDER BY m.sort_time DESC, m.item_id DESC LIMIT ?",
            (expr, *params, max(0, q.limit))).fetchall()

    @staticmethod
    def _ranked(conn: Conn, q: SearchQuery, expr: str, scored: str) -> list[Any]:
        """The newest RANK_WINDOW matches ordered by relevance (as SQLite does); found
        by ``expr``, scored by ``scored`` (the same query with weights)."""
        where, params = _filters(q)
        window = "m.doc @@ ?::tsquery" + (" AND m.sort_time >= ?" if q.since else "")
        wparams: list[Any] = [expr, *([to_us(q.since)] if q.since else [])]
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        return conn.execute(
            f"WITH w AS (SELECT m.item_id, m.sort_time, m.doc FROM item_search m "  # noqa: S608
            f"WHERE {window} ORDER BY m.sort_time DESC, m.item_id DESC LIMIT {RANK_WINDOW}), "
            f"r AS (SELECT w.item_id, w.sort_time, ts_rank(?, w.doc, ?::tsquery) AS score "
            f"FROM w) SELECT {_HIT_COLUMNS}, r.score FROM r "
            f"JOIN items i ON i.id = r.item_id LEFT JOIN sources s ON s.id = i.source_id"
            f"{clause} ORDER BY r.score DESC, r.sort_time DESC, r.item_id DESC LIMIT ?",
            (*wparams, RANK_WEIGHTS, scored, *params, max(0, q.limit))).fetchall()

    @staticmethod
    def _filtered(conn: Conn, q: SearchQuery) -> list[Any]:
        """A query without words: the filters alone, newest first (negations apply)."""
        where, params = timeline_filters(ItemQuery(
            source_id=q.source_id, author=q.author, since=q.since, until=q.until,
            before=q.before))
        excluded = exclusion_query(q.excluded)
        if excluded is not None:
            where.append("NOT EXISTS (SELECT 1 FROM item_search x WHERE x.item_id = i.id "
                         "AND x.doc @@ ?::tsquery)")
            params.append(excluded)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        return conn.execute(
            f"SELECT {_HIT_COLUMNS}, 0.0 FROM items i LEFT JOIN sources s "  # noqa: S608
            f"ON s.id = i.source_id {clause} ORDER BY i.sort_time DESC, i.id DESC LIMIT ?",
            (*params, max(0, q.limit))).fetchall()
