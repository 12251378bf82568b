"""The sidebar's counts and "mark a source read" (``tidings.store.navigation``): one
code for both backends."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tidings.store.navigation import SourceCounts
from tidings.store.sql._base import Connected, chunks, to_us

#: unread (all, and since a time) from the unread-by-source index, starred from the
#: starred-by-source one, joined per source
COUNTS = (
    "SELECT source_id, sum(unread), sum(today), sum(starred) FROM ("
    " SELECT i.source_id AS source_id, count(*) AS unread,"
    " sum(CASE WHEN i.sort_time >= ? AND i.backfill = 0 THEN 1 ELSE 0 END) AS today,"
    " 0 AS starred FROM items i WHERE i.read = 0 GROUP BY i.source_id"
    " UNION ALL"
    " SELECT i.source_id, 0, 0, count(*) FROM items i WHERE i.starred = 1"
    " GROUP BY i.source_id"
    ") c GROUP BY source_id ORDER BY source_id"
)


def _counts(rows: Sequence[Sequence[Any]]) -> list[SourceCounts]:
    # PostgreSQL's sum() of counts is numeric: int() it
    return [SourceCounts(r[0], int(r[1]), int(r[2]), int(r[3])) for r in rows]


class NavigationMixin(Connected):

    def source_counts(self, since: datetime) -> list[SourceCounts]:
        with self._read() as conn:
            return _counts(conn.execute(COUNTS, (to_us(since),)).fetchall())

    def read_sources(self, source_ids: Sequence[str]) -> list[int]:
        changed: list[int] = []
        with self._write() as conn:  # a folder of thousands of sources: in parts, one commit
            for part in chunks(list(source_ids)):
                where, params = self.dialect.any_of("source_id", part)
                rows = conn.execute("UPDATE items SET read = 1 WHERE read = 0 "  # noqa: S608
                                    f"AND {where} RETURNING id", params).fetchall()
                changed += (int(r[0]) for r in rows)
        return sorted(changed)
