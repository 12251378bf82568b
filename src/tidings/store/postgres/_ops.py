"""Operations figures: the last run of every source (``DISTINCT ON``) and the bulk
interval update (one ``unnest``) as PostgreSQL does them (the rest is the core's
``OpsCore``)."""

from __future__ import annotations

from collections.abc import Mapping

from tidings.store.postgres._db import Access
from tidings.store.sql.ops import OpsCore
from tidings.store.sql.runs import RUN_COLUMNS_R


class OpsMixin(OpsCore, Access):

    _LAST_RUNS = (
        f"SELECT DISTINCT ON (r.source_id) {RUN_COLUMNS_R} FROM fetch_runs r "  # noqa: S608
        "JOIN sources s ON s.id = r.source_id "
        "ORDER BY r.source_id, r.started_at DESC, r.id DESC")

    def set_intervals(self, intervals: Mapping[str, int]) -> int:
        if not intervals:
            return 0
        with self._write() as conn:
            return int(conn.execute(
                "UPDATE sources s SET interval_min = v.minutes "
                "FROM unnest(?::text[], ?::integer[]) AS v(id, minutes) WHERE s.id = v.id",
                (list(intervals), [int(v) for v in intervals.values()])).rowcount)
