"""Operations figures: the last run of every source (``DISTINCT ON``) and the bulk
interval update (one ``unnest``) as PostgreSQL does them (the rest is the core's
``OpsCore``)."""

from __future__ import annotations

from collections.abc import Mapping

from tidings.model import FetchRun
from tidings.store.postgres._db import Access
from tidings.store.sql.ops import OpsCore
from tidings.store.sql.runs import RUN_COLUMNS, run_from_row


class OpsMixin(OpsCore, Access):

    def last_runs(self) -> dict[str, FetchRun]:
        columns = ", ".join(f"r.{c.strip()}" for c in RUN_COLUMNS.split(","))
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT DISTINCT ON (r.source_id) {columns} FROM fetch_runs r "  # noqa: S608
                "JOIN sources s ON s.id = r.source_id "
                "ORDER BY r.source_id, r.started_at DESC, r.id DESC").fetchall()
        return {row[1]: run_from_row(row) for row in rows}

    def set_intervals(self, intervals: Mapping[str, int]) -> int:
        if not intervals:
            return 0
        with self._write() as conn:
            return int(conn.execute(
                "UPDATE sources s SET interval_min = v.minutes "
                "FROM unnest(?::text[], ?::integer[]) AS v(id, minutes) WHERE s.id = v.id",
                (list(intervals), [int(v) for v in intervals.values()])).rowcount)
