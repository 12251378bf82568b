"""Bulk figures for the scheduler and the operations reports (``tidings.store.ops``),
written once; each backend keeps its last run per source and its bulk interval update.

Each method is one query over all sources, grouped in SQL, so the daily
interval job and the weekly report cost the same whether 10 or 100,000
sources are configured. Bookmarks live in the ``meta`` table under the
``mark:`` prefix.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import ClassVar

from tidings.model import FetchRun, RunOutcome
from tidings.store.ops import Diversity, ReprintEdge, RunTotals
from tidings.store.sql._base import DAY_US, Connected, to_us
from tidings.store.sql.runs import run_from_row

_REPRINTS = """
WITH recent AS (
    SELECT id, source_id, title_fp, coalesce(published_at, discovered_at) AS t
    FROM items WHERE title_fp != '' AND discovered_at >= ?
),
firsts AS (
    SELECT title_fp, source_id FROM (
        SELECT title_fp, source_id,
               row_number() OVER (PARTITION BY title_fp ORDER BY t, id) AS rn
        FROM recent) ranked
    WHERE rn = 1
),
edges AS (
    SELECT f.source_id AS original, r.source_id AS repeater, 'title' AS via
    FROM recent r JOIN firsts f ON f.title_fp = r.title_fp
    WHERE r.source_id != f.source_id
    UNION ALL
    SELECT i.source_id, d.source_id, 'listing'
    FROM discoveries d JOIN items i ON i.id = d.item_id
    WHERE d.source_id != i.source_id AND d.seen_at >= ?
)
SELECT original, repeater, via, count(*) FROM edges
GROUP BY original, repeater, via ORDER BY count(*) DESC, original, repeater, via
"""


class OpsCore(Connected):

    #: the latest run of every source, in ``RUN_COLUMNS`` (each backend's statement)
    _LAST_RUNS: ClassVar[str]

    def last_runs(self) -> dict[str, FetchRun]:
        with self._read() as conn:
            rows = conn.execute(self._LAST_RUNS).fetchall()
        return {row[1]: run_from_row(row) for row in rows}

    def new_item_counts(self, now: datetime, days: int) -> dict[str, tuple[int, ...]]:
        end = to_us(now)
        start = to_us(now - timedelta(days=days))
        with self._read() as conn:
            rows = conn.execute(
                "SELECT source_id, (CAST(? AS bigint) - discovered_at - 1) / CAST(? AS bigint) "
                "AS ago, count(*) FROM items WHERE discovered_at >= ? AND discovered_at < ? "
                "AND backfill = 0 GROUP BY source_id, ago",
                (end, DAY_US, start, end)).fetchall()
        out: dict[str, list[int]] = {}
        for source_id, ago, n in rows:
            out.setdefault(source_id, [0] * days)[days - 1 - ago] = n
        return {sid: tuple(counts) for sid, counts in out.items()}

    def run_totals(self, since: datetime) -> dict[str, RunTotals]:
        with self._read() as conn:
            rows = conn.execute(
                "SELECT source_id, count(*), count(*) FILTER (WHERE outcome = ?), "
                "sum(found), sum(filtered), sum(created) FROM fetch_runs "
                "WHERE started_at >= ? AND outcome != ? GROUP BY source_id",
                (RunOutcome.FAILED.value, to_us(since), RunOutcome.RUNNING.value)).fetchall()
        return {r[0]: RunTotals(r[0], *(int(v) for v in r[1:])) for r in rows}

    def diversity(self, since: datetime) -> dict[str, Diversity]:
        with self._read() as conn:
            rows = conn.execute(
                "SELECT source_id, count(*), count(DISTINCT nullif(title_fp, '')) FROM items "
                "WHERE discovered_at >= ? GROUP BY source_id", (to_us(since),)).fetchall()
        return {r[0]: Diversity(r[0], int(r[1]), int(r[2])) for r in rows}

    def reprint_edges(self, since: datetime) -> list[ReprintEdge]:
        with self._read() as conn:
            rows = conn.execute(_REPRINTS, (to_us(since), to_us(since))).fetchall()
        return [ReprintEdge(r[0], r[1], r[2], int(r[3])) for r in rows]

    def new_item_ids(self, after_id: int, limit: int) -> list[int]:
        with self._read() as conn:
            rows = conn.execute(
                "SELECT id FROM items WHERE id > ? AND backfill = 0 ORDER BY id LIMIT ?",
                (after_id, limit)).fetchall()
        return [r[0] for r in rows]

    def max_item_id(self) -> int:
        with self._read() as conn:
            (value,) = conn.execute("SELECT coalesce(max(id), 0) FROM items").fetchone()
        return int(value)

    def get_mark(self, name: str) -> str | None:
        with self._read() as conn:
            row = conn.execute("SELECT value FROM meta WHERE name = ?",
                               (f"mark:{name}",)).fetchone()
        return None if row is None else str(row[0])

    def swap_mark(self, name: str, expected: str | None, value: str) -> bool:
        """A compare-and-set that holds between machines: the conditional write itself
        decides (an insert that conflicts, an update that matches no row, loses)."""
        key = f"mark:{name}"
        with self._write() as conn:
            if expected is None:
                cur = conn.execute("INSERT INTO meta (name, value) VALUES (?, ?) "
                                   "ON CONFLICT (name) DO NOTHING", (key, value))
            else:
                cur = conn.execute("UPDATE meta SET value = ? WHERE name = ? AND value = ?",
                                   (value, key, expected))
            return cur.rowcount == 1

    def release_sources(
        self, source_ids: Sequence[str], now: datetime, due_at: datetime | None = None,
    ) -> int:
        abandoned = 0
        with self._write() as conn:
            for runs, params in self.dialect.in_parts("source_id", list(source_ids)):
                abandoned += conn.execute(
                    f"UPDATE fetch_runs SET outcome = ?, finished_at = ? "  # noqa: S608
                    f"WHERE outcome = ? AND {runs}",
                    (RunOutcome.ABANDONED.value, to_us(now), RunOutcome.RUNNING.value,
                     *params)).rowcount
            for sources, params in self.dialect.in_parts("id", list(source_ids)):
                conn.execute(f"UPDATE sources SET next_fetch_at = ? WHERE {sources}",  # noqa: S608
                             (to_us(due_at or now), *params))
        return abandoned

    def abandon_stale_runs(self, started_before: datetime, now: datetime,
                           reason: str = "") -> int:
        with self._write() as conn:
            return int(conn.execute(
                "UPDATE fetch_runs SET outcome = ?, finished_at = ?, error = ? "
                "WHERE outcome = ? AND started_at < ?",
                (RunOutcome.ABANDONED.value, to_us(now), reason or None,
                 RunOutcome.RUNNING.value, to_us(started_before))).rowcount)

    def lease_holders(self) -> list[str]:
        with self._read() as conn:
            return [r[0] for r in conn.execute(
                "SELECT DISTINCT holder FROM source_leases ORDER BY holder").fetchall()]

    def take_over_leases(self, holder: str, now: datetime, reason: str) -> int:
        """The sources are freed first, by an update whose condition (the source's next
        fetch is still the lease time the holder wrote) is checked again under the row
        lock: a source another worker claimed meanwhile is left to that worker, and two
        workers taking over the same holder free each source once."""
        with self._write() as conn:
            # fetchall: on SQLite a RETURNING statement left unfinished holds the transaction;
            # its RETURNING names the target's columns unqualified (SQLite knows no alias there)
            freed = [r[0] for r in conn.execute(
                "UPDATE sources AS s SET next_fetch_at = ? FROM source_leases l "
                "WHERE l.source_id = s.id AND l.holder = ? AND s.next_fetch_at = l.until "
                "RETURNING id", (to_us(now), holder)).fetchall()]
            for runs, params in self.dialect.in_parts("source_id", freed):
                conn.execute(
                    f"UPDATE fetch_runs SET outcome = ?, finished_at = ?, error = ? "  # noqa: S608
                    f"WHERE outcome = ? AND {runs}",
                    (RunOutcome.ABANDONED.value, to_us(now), reason,
                     RunOutcome.RUNNING.value, *params))
            conn.execute("DELETE FROM source_leases WHERE holder = ?", (holder,))
            return len(freed)
