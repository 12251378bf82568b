"""Statistics: how SQLite counts the items (the rest is the core's ``StatsCore``)."""

from __future__ import annotations

from tidings.store.sql._base import SqlConn
from tidings.store.sql.stats import StatsCore
from tidings.store.sqlite._db import Access


class StatsMixin(StatsCore, Access):

    def _item_counts(self, conn: SqlConn) -> tuple[int, int, int]:
        """One count each: a bare ``count(*)`` is SQLite's fast count of the smallest
        index, and the unread one walks the partial index of unread items."""
        (items,) = conn.execute("SELECT count(*) FROM items").fetchone()
        (backfill,) = conn.execute("SELECT count(*) FROM items WHERE backfill = 1").fetchone()
        (unread,) = conn.execute(
            "SELECT count(*) FROM items INDEXED BY items_unread WHERE read = 0").fetchone()
        return int(items), int(backfill), int(unread)
