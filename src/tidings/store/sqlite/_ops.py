"""Operations figures: the last run of every source and the bulk interval update as
SQLite does them (the rest is the core's ``OpsCore``)."""

from __future__ import annotations

from collections.abc import Mapping

from tidings.store.sql.ops import OpsCore
from tidings.store.sql.runs import RUN_COLUMNS_R
from tidings.store.sqlite._db import Access


class OpsMixin(OpsCore, Access):

    _LAST_RUNS = (
        f"SELECT {RUN_COLUMNS_R} FROM sources s JOIN fetch_runs r ON r.id = ("  # noqa: S608
        "SELECT id FROM fetch_runs WHERE source_id = s.id "
        "ORDER BY started_at DESC, id DESC LIMIT 1)")

    def set_intervals(self, intervals: Mapping[str, int]) -> int:
        with self._write() as conn:
            cur = conn.executemany("UPDATE sources SET interval_min = ? WHERE id = ?",
                                   [(int(v), k) for k, v in intervals.items()])
            return max(cur.rowcount, 0)
