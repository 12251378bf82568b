"""Search: newest first (an index walk by sort time) or ranked (ts_rank), with snippets."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from tidings.model import SearchHit
from tidings.store.base import ItemQuery, SearchQuery
from tidings.store.postgres._db import Access, Conn
from tidings.store.postgres._search import RANK_WEIGHTS, exclusion_query, time_windows, tsquery
from tidings.store.sql._base import to_us
from tidings.store.sql.find import _HIT_COLUMNS, RANK_WINDOW
from tidings.store.sql.reading import brief_from_row, timeline_filters
from tidings.store.textindex import highlighter, html_snippet, snippet

_JOIN = "JOIN items i ON i.id = m.item_id LEFT JOIN sources s ON s.id = i.source_id"


@dataclass(frozen=True, slots=True)
class _Match:
    """Which documents a span matches: ``spanned`` (the query and the span's hours), and
    with ``after`` set, also those dated after it that match ``plain`` (the query)."""

    spanned: str
    after: int | None
    plain: str

    @property
    def sql(self) -> str:
        if self.after is None:
            return "m.doc @@ ?::tsquery"
        return "(m.doc @@ ?::tsquery OR (m.sort_time > ? AND m.doc @@ ?::tsquery))"

    @property
    def params(self) -> tuple[Any, ...]:
        if self.after is None:
            return (self.spanned,)
        return (self.spanned, self.after, self.plain)


def _filters(q: SearchQuery) -> tuple[list[str], list[Any]]:
    return timeline_filters(ItemQuery(source_id=q.source_id, author=q.author, since=q.since,
                                      until=q.until))


class SearchMixin(Access):

    def search(self, query: SearchQuery) -> list[SearchHit]:
        expr = tsquery(query.terms, query.title_terms, query.excluded)
        weighted = tsquery(query.terms, query.title_terms, query.excluded, weighted=True)
        with self._read() as conn:
            rows = (self._filtered(conn, query) if expr is None or weighted is None
                    else self._windows(conn, query, expr, weighted))
        pattern = highlighter((*query.terms, *query.title_terms))
        hits = []
        for row in rows:
            item = brief_from_row(row)
            cut = html_snippet(row[-3], pattern) or snippet(item.title, pattern)
            hits.append(SearchHit(item=item, snippet=cut, rank=float(row[-2])))
        return hits

    def _windows(self, conn: Conn, q: SearchQuery, expr: str, weighted: str) -> list[Any]:
        """The search in growing spans of time back from the newest indexed item (or
        ``before``): the newest hours, days, months, then all. A span holds
        every item from its start on, so once its newest matches fill the page (or
        the ranked window) they are the newest of all; the GIN index intersects the
        query with the span's hour lexemes, so a common word costs the matches of
        its last hours, not all its matches (docs/benchmarks.md, issue 21).

        Items dated in the future (a feed's typo: 2099) would move every span there
        and leave them empty; the spans end at the newest item not in the future
        instead, and the few items after it join each span through the sort index."""
        top, present = conn.row(
            "SELECT (SELECT max(sort_time) FROM item_search), "
            "(SELECT max(sort_time) FROM item_search WHERE sort_time <= ?)",
            (to_us(datetime.now(UTC)),))
        if top is None or q.limit <= 0:
            return []
        newest = int(top if present is None else present)
        after = None if present is None or present == top else newest
        if q.before is not None and not q.ranked:  # the ranked window ignores ``before``
            newest = min(newest, to_us(q.before[0]))
        rows: list[Any] = []
        for span in [*time_windows(newest), None]:
            match = _Match(expr if span is None else f"({expr}) & ({span})",
                           None if span is None else after, expr)
            if q.ranked:
                rows = self._ranked(conn, q, match, weighted)
                if rows and rows[0][-1] >= RANK_WINDOW:
                    break
            else:
                rows = self._newest(conn, q, match)
                if len(rows) >= q.limit:
                    break
        return rows

    @staticmethod
    def _newest(conn: Conn, q: SearchQuery, match: _Match) -> list[Any]:
        """Matched by the unweighted query (a GIN index stores no weights, so a
        weighted one rechecks every candidate against its document), ordered by
        ``sort_time + 0`` so that the planner never walks the sort index for it
        (reading every document when the words are rarer than it guessed): the
        span's GIN bitmap is what bounds the work."""
        where, params = _filters(q)
        if q.before is not None:
            where.append("(m.sort_time, m.item_id) < (?, ?)")
            params.extend((to_us(q.before[0]), q.before[1]))
        clause = "".join(f" AND {w}" for w in where)
        return conn.execute_unprepared(
            f"SELECT {_HIT_COLUMNS}, 0.0, 0 FROM item_search m {_JOIN} "  # noqa: S608
            f"WHERE {match.sql}{clause} "
            "ORDER BY m.sort_time + 0 DESC, m.item_id DESC LIMIT ?",
            (*match.params, *params, max(0, q.limit))).fetchall()

    @staticmethod
    def _ranked(conn: Conn, q: SearchQuery, match: _Match, scored: str) -> list[Any]:
        """The newest RANK_WINDOW matches ordered by relevance (as SQLite does); found
        by ``match``, scored by ``scored`` (the same query with weights); the last
        column is how many matches the window holds."""
        where, params = _filters(q)
        window = match.sql + (" AND m.sort_time >= ?" if q.since else "")
        wparams: list[Any] = [*match.params, *([to_us(q.since)] if q.since else [])]
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        return conn.execute_unprepared(
            f"WITH w AS (SELECT m.item_id, m.sort_time, m.doc FROM item_search m "  # noqa: S608
            f"WHERE {window} ORDER BY m.sort_time + 0 DESC, m.item_id DESC LIMIT {RANK_WINDOW}), "
            f"r AS (SELECT w.item_id, w.sort_time, ts_rank(?, w.doc, ?::tsquery) AS score, "
            f"count(*) OVER () AS n FROM w) SELECT {_HIT_COLUMNS}, r.score, r.n FROM r "
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
            f"SELECT {_HIT_COLUMNS}, 0.0, 0 FROM items i LEFT JOIN sources s "  # noqa: S608
            f"ON s.id = i.source_id {clause} ORDER BY i.sort_time DESC, i.id DESC LIMIT ?",
            (*params, max(0, q.limit))).fetchall()
