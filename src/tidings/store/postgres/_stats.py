"""Statistics: how PostgreSQL counts the items (the rest is the core's ``StatsCore``)."""

from __future__ import annotations

from tidings.store.postgres._db import Access
from tidings.store.sql._base import SqlConn
from tidings.store.sql.stats import StatsCore


class StatsMixin(StatsCore, Access):

    def _item_counts(self, conn: SqlConn) -> tuple[int, int, int]:
        """The three counts in one scan of ``items``."""
        items, backfill, unread = conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE backfill = 1), "
            "count(*) FILTER (WHERE read = 0) FROM items").fetchone()
        return int(items), int(backfill), int(unread)
