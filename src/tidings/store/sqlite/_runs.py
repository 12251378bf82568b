"""Fetch runs: how SQLite numbers them (the rest is the core's ``RunsCore``)."""

from __future__ import annotations

from tidings.store.sql._base import SqlConn
from tidings.store.sql.runs import RunsCore
from tidings.store.sqlite._db import Access


class RunsMixin(RunsCore, Access):

    def _run_ids(self, conn: SqlConn, n: int) -> list[int]:
        """The ids SQLite would give one by one (max + 1), given in one statement."""
        (first,) = conn.execute("SELECT coalesce(max(id), 0) + 1 FROM fetch_runs").fetchone()
        return list(range(first, first + n))
