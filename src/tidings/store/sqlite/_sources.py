"""Sources: SQLite's order of the scheduler's pick and its lease records (the rest is
the core's ``SourcesCore``)."""

from __future__ import annotations

from tidings.store.sql._base import SqlConn
from tidings.store.sql.sources import SourcesCore
from tidings.store.sqlite._db import Access


class SourcesMixin(SourcesCore, Access):

    _CLAIM_ORDER = "coalesce(next_fetch_at, -1) ASC"

    def _lease(self, conn: SqlConn, ids: list[str], holder: str, until: int) -> None:
        conn.executemany("INSERT OR REPLACE INTO source_leases (source_id, holder, until) "
                         "VALUES (?, ?, ?)", [(i, holder, until) for i in ids])
