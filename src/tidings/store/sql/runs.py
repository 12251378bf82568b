"""Fetch runs: one row per attempt to collect a source (R-SCHED-8). The columns, the
row converter and the methods both backends share; each says how it numbers runs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tidings.errors import NotFoundError
from tidings.model import FetchRun, RunCounts, RunOutcome
from tidings.store.sql._base import Connected, SqlConn, from_us, opt_dt, to_us

RUN_COLUMNS = (
    "id, source_id, started_at, finished_at, outcome, found, created, revised, "
    "rediscovered, filtered, pages, backlog, reused, error, http_status, bytes, warnings"
)

#: the same columns of a run named ``r`` in a join
RUN_COLUMNS_R = ", ".join(f"r.{c.strip()}" for c in RUN_COLUMNS.split(","))


def run_from_row(row: Sequence[Any]) -> FetchRun:
    return FetchRun(
        id=row[0], source_id=row[1], started_at=from_us(row[2]), finished_at=opt_dt(row[3]),
        outcome=RunOutcome(row[4]), found=row[5], created=row[6], revised=row[7],
        rediscovered=row[8], filtered=row[9], pages=row[10], backlog=row[11], reused=row[12],
        error=row[13], http_status=row[14], bytes=row[15], warnings=tuple(json.loads(row[16])),
    )


class RunsCore(Connected):

    def _run_ids(self, conn: SqlConn, n: int) -> list[int]:
        """``n`` new run ids, ascending, in one statement: the backend says how."""
        raise NotImplementedError

    def start_run(self, source_id: str, started_at: datetime) -> int:
        return self.start_runs([(source_id, started_at)])[0]

    def start_runs(self, runs: Sequence[tuple[str, datetime]]) -> list[int]:
        if not runs:
            return []
        with self._write() as conn:
            wanted = list(dict.fromkeys(source_id for source_id, _ in runs))
            known: set[str] = set()
            for where, params in self.dialect.in_parts("id", wanted):
                known.update(r[0] for r in conn.execute(
                    f"SELECT id FROM sources WHERE {where}", params).fetchall())  # noqa: S608
            missing = [source_id for source_id in wanted if source_id not in known]
            if missing:
                raise NotFoundError(f"source {missing[0]!r} not found")
            ids = self._run_ids(conn, len(runs))
            conn.executemany(
                "INSERT INTO fetch_runs (id, source_id, started_at, outcome) VALUES (?, ?, ?, ?)",
                [(run_id, source_id, to_us(at), RunOutcome.RUNNING.value)
                 for run_id, (source_id, at) in zip(ids, runs, strict=True)])
            return ids

    def finish_run(self, run_id: int, finished_at: datetime, counts: RunCounts) -> None:
        c = counts
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE fetch_runs SET finished_at = ?, outcome = ?, found = ?, created = ?, "
                "revised = ?, rediscovered = ?, filtered = ?, pages = ?, backlog = ?, "
                "reused = ?, error = ?, http_status = ?, bytes = ?, warnings = ? WHERE id = ?",
                (to_us(finished_at), RunOutcome(c.outcome).value, c.found, c.created, c.revised,
                 c.rediscovered, c.filtered, c.pages, c.backlog, c.reused, c.error,
                 c.http_status, c.bytes, json.dumps(list(c.warnings)), run_id))
            if cur.rowcount == 0:
                raise NotFoundError(f"fetch run {run_id} not found")

    def list_runs(self, source_id: str | None = None, limit: int = 20) -> list[FetchRun]:
        where, params = ("WHERE source_id = ?", (source_id,)) if source_id else ("", ())
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {RUN_COLUMNS} FROM fetch_runs {where} "  # noqa: S608
                "ORDER BY started_at DESC, id DESC LIMIT ?", (*params, limit)).fetchall()
        return [run_from_row(r) for r in rows]
