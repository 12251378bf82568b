"""Search: what both backends share around their own full-text index: the hit
columns, the ranking window, the filters, a query without words, and the hits made
from the rows (each backend matches words with its own index: ``_matching``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tidings.model import SearchHit
from tidings.store.base import ItemQuery, SearchQuery
from tidings.store.sql._base import Connected, SqlConn
from tidings.store.sql.reading import BRIEF_COLUMNS, brief_from_row, timeline_filters
from tidings.store.textindex import highlighter, html_snippet, snippet

#: ranked search orders the newest this-many matches by relevance: bm25 over every
#: match of a common word would cost a second at a million items
RANK_WINDOW = 5000


#: a hit is a list row plus the text its snippet is cut from (the body, else the summary);
#: every search statement selects these, then the rank, then a count of its own
_HIT_COLUMNS = f"{BRIEF_COLUMNS}, coalesce(nullif(i.body, ''), i.summary)"


def search_filters(q: SearchQuery) -> tuple[list[str], list[Any]]:
    """The timeline filters a search takes (source, author, dates)."""
    return timeline_filters(ItemQuery(source_id=q.source_id, author=q.author, since=q.since,
                                      until=q.until))


class SearchMixin(Connected):

    def search(self, query: SearchQuery) -> list[SearchHit]:
        with self._read() as conn:
            rows = self._matching(conn, query)
        pattern = highlighter((*query.terms, *query.title_terms))
        hits = []
        for row in rows:
            item = brief_from_row(row)
            cut = html_snippet(row[-3], pattern) or snippet(item.title, pattern)
            hits.append(SearchHit(item=item, snippet=cut, rank=float(row[-2])))
        return hits

    def _matching(self, conn: SqlConn, q: SearchQuery) -> Sequence[Any]:
        """The rows of the hits (``_HIT_COLUMNS``, rank, count), best first: the
        words matched in the backend's index, or ``_filtered`` for a query without."""
        raise NotImplementedError

    def _excluding(self, excluded: Sequence[str]) -> tuple[str, str] | None:
        """A condition on item ``i`` and its parameter: not matching any of the
        excluded words (None when there are none)."""
        raise NotImplementedError

    def _filtered(self, conn: SqlConn, q: SearchQuery) -> Sequence[Any]:
        """A query without words: the filters alone, newest first (negations apply)."""
        where, params = timeline_filters(ItemQuery(
            source_id=q.source_id, author=q.author, since=q.since, until=q.until,
            before=q.before))
        excluded = self._excluding(q.excluded)
        if excluded is not None:
            where.append(excluded[0])
            params.append(excluded[1])
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        rows: Sequence[Any] = conn.execute(
            f"SELECT {_HIT_COLUMNS}, 0.0, 0 FROM items i LEFT JOIN sources s "  # noqa: S608
            f"ON s.id = i.source_id {clause} ORDER BY i.sort_time DESC, i.id DESC LIMIT ?",
            (*params, max(0, q.limit))).fetchall()
        return rows
