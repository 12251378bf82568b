"""Fetch runs: numbered by their sequence (the rest is the core's ``RunsCore``)."""

from __future__ import annotations

from tidings.store.postgres._db import Access
from tidings.store.sql._base import SqlConn
from tidings.store.sql.runs import RunsCore


def next_ids(conn: SqlConn, sequence: str, n: int) -> list[int]:
    """``n`` new values of a sequence, ascending, in one statement."""
    rows = conn.execute("SELECT nextval(?::regclass) FROM generate_series(1, ?)",
                        (sequence, n)).fetchall()
    return sorted(int(r[0]) for r in rows)


class RunsMixin(RunsCore, Access):

    def _run_ids(self, conn: SqlConn, n: int) -> list[int]:
        return next_ids(conn, "fetch_runs_id_seq", n)
