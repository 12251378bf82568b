"""Search in PostgreSQL's tsvector index: newest first (an index walk by sort time) or
ranked (ts_rank); the hits and their snippets: ``tidings.store.sql.find``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from tidings.store.base import SearchQuery
from tidings.store.postgres._db import Access, Conn
from tidings.store.postgres._search import RANK_WEIGHTS, exclusion_query, time_windows, tsquery
from tidings.store.sql._base import SqlConn, to_us
from tidings.store.sql.find import _HIT_COLUMNS, RANK_WINDOW, search_filters
from tidings.store.sql.find import SearchMixin as SharedSearch

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


class SearchMixin(SharedSearch, Access):

    def _matching(self, conn: SqlConn, q: SearchQuery) -> Sequence[Any]:
        expr = tsquery(q.terms, q.title_terms, q.excluded)
        weighted = tsquery(q.terms, q.title_terms, q.excluded, weighted=True)
        return (self._filtered(conn, q) if expr is None or weighted is None
                else self._windows(cast(Conn, conn), q, expr, weighted))

    def _excluding(self, excluded: Sequence[str]) -> tuple[str, str] | None:
        query = exclusion_query(excluded)
        return None if query is None else (
            "NOT EXISTS (SELECT 1 FROM item_search x WHERE x.item_id = i.id "
            "AND x.doc @@ ?::tsquery)", query)

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
        where, params = search_filters(q)
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
        where, params = search_filters(q)
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
