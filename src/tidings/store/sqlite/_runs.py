"""Fetch runs: one row per attempt to collect a source (R-SCHED-8)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from tidings.errors import NotFoundError
from tidings.model import FetchRun, RunCounts, RunOutcome
from tidings.store.sql._base import chunks, marks, to_us
from tidings.store.sql.runs import RUN_COLUMNS, run_from_row
from tidings.store.sqlite._db import Access


class RunsMixin(Access):

    def start_run(self, source_id: str, started_at: datetime) -> int:
        return self.start_runs([(source_id, started_at)])[0]

    def start_runs(self, runs: Sequence[tuple[str, datetime]]) -> list[int]:
        if not runs:
            return []
        with self._write() as conn:
            wanted = list(dict.fromkeys(source_id for source_id, _ in runs))
            known: set[str] = set()
            for part in chunks(wanted):
                known.update(r[0] for r in conn.execute(
                    f"SELECT id FROM sources WHERE id IN ({marks(len(part))})", part))  # noqa: S608
            missing = [source_id for source_id in wanted if source_id not in known]
            if missing:
                raise NotFoundError(f"source {missing[0]!r} not found")
            # the ids SQLite would give one by one (max + 1), given in one statement
            (first,) = conn.execute("SELECT coalesce(max(id), 0) + 1 FROM fetch_runs").fetchone()
            ids = list(range(first, first + len(runs)))
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
