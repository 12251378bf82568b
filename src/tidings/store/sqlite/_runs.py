"""Fetch runs: one row per attempt to collect a source (R-SCHED-8)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tidings.errors import NotFoundError
from tidings.model import FetchRun, RunCounts, RunOutcome
from tidings.store.sqlite._db import Database, from_us, opt_dt, to_us

RUN_COLUMNS = (
    "id, source_id, started_at, finished_at, outcome, found, created, revised, "
    "rediscovered, filtered, pages, backlog, reused, error, http_status, bytes, warnings"
)


def run_from_row(row: Sequence[Any]) -> FetchRun:
    return FetchRun(
        id=row[0], source_id=row[1], started_at=from_us(row[2]), finished_at=opt_dt(row[3]),
        outcome=RunOutcome(row[4]), found=row[5], created=row[6], revised=row[7],
        rediscovered=row[8], filtered=row[9], pages=row[10], backlog=row[11], reused=row[12],
        error=row[13], http_status=row[14], bytes=row[15], warnings=tuple(json.loads(row[16])),
    )


class RunsMixin:
    _db: Database

    def start_run(self, source_id: str, started_at: datetime) -> int:
        with self._db.write() as conn:
            if conn.execute("SELECT 1 FROM sources WHERE id = ?", (source_id,)).fetchone() is None:
                raise NotFoundError(f"source {source_id!r} not found")
            cur = conn.execute(
                "INSERT INTO fetch_runs (source_id, started_at, outcome) VALUES (?, ?, ?)",
                (source_id, to_us(started_at), RunOutcome.RUNNING.value))
            assert cur.lastrowid is not None
            return cur.lastrowid

    def finish_run(self, run_id: int, finished_at: datetime, counts: RunCounts) -> None:
        c = counts
        with self._db.write() as conn:
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
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT {RUN_COLUMNS} FROM fetch_runs {where} "  # noqa: S608
                "ORDER BY started_at DESC, id DESC LIMIT ?", (*params, limit)).fetchall()
        return [run_from_row(r) for r in rows]

    def abandon_running(self, now: datetime) -> int:
        with self._db.write() as conn:
            return conn.execute(
                "UPDATE fetch_runs SET outcome = ?, finished_at = ? WHERE outcome = ?",
                (RunOutcome.ABANDONED.value, to_us(now), RunOutcome.RUNNING.value)).rowcount
