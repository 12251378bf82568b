"""Bulk figures for the scheduler and the operations reports (``tidings.store.ops``).

Each method is one query over all sources, grouped in SQL, so the daily
interval job and the weekly report cost the same whether 10 or 100,000
sources are configured. Bookmarks live in the ``meta`` table under the
``mark:`` prefix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

from tidings.model import FetchRun, RunOutcome
from tidings.store.ops import Diversity, ReprintEdge, RunTotals
from tidings.store.sql._base import DAY_US as _DAY_US
from tidings.store.sql._base import chunks, marks, to_us
from tidings.store.sql.runs import RUN_COLUMNS, run_from_row
from tidings.store.sqlite._db import Access

_REPRINTS = """
WITH recent AS (
    SELECT id, source_id, title_fp, coalesce(published_at, discovered_at) AS t
    FROM items WHERE title_fp != '' AND discovered_at >= :since
),
firsts AS (
    SELECT title_fp, source_id FROM (
        SELECT title_fp, source_id,
               row_number() OVER (PARTITION BY title_fp ORDER BY t, id) AS rn
        FROM recent)
    WHERE rn = 1
),
edges AS (
    SELECT f.source_id AS original, r.source_id AS repeater, 'title' AS via
    FROM recent r JOIN firsts f ON f.title_fp = r.title_fp
    WHERE r.source_id != f.source_id
    UNION ALL
    SELECT i.source_id, d.source_id, 'listing'
    FROM discoveries d JOIN items i ON i.id = d.item_id
    WHERE d.source_id != i.source_id AND d.seen_at >= :since
)
SELECT original, repeater, via, count(*) FROM edges
GROUP BY original, repeater, via ORDER BY count(*) DESC, original, repeater, via
"""


class OpsMixin(Access):

    def new_item_counts(self, now: datetime, days: int) -> dict[str, tuple[int, ...]]:
        end = to_us(now)
        start = to_us(now - timedelta(days=days))
        with self._read() as conn:
            rows = conn.execute(
                "SELECT source_id, (? - discovered_at - 1) / ? AS ago, count(*) FROM items "
                "WHERE discovered_at >= ? AND discovered_at < ? AND backfill = 0 "
                "GROUP BY source_id, ago", (end, _DAY_US, start, end)).fetchall()
        out: dict[str, list[int]] = {}
        for source_id, ago, n in rows:
            out.setdefault(source_id, [0] * days)[days - 1 - ago] = n
        return {sid: tuple(counts) for sid, counts in out.items()}

    def run_totals(self, since: datetime) -> dict[str, RunTotals]:
        with self._read() as conn:
            rows = conn.execute(
                "SELECT source_id, count(*), sum(outcome = ?), sum(found), sum(filtered), "
                "sum(created) FROM fetch_runs WHERE started_at >= ? AND outcome != ? "
                "GROUP BY source_id",
                (RunOutcome.FAILED.value, to_us(since), RunOutcome.RUNNING.value)).fetchall()
        return {r[0]: RunTotals(*r) for r in rows}

    def last_runs(self) -> dict[str, FetchRun]:
        columns = ", ".join(f"r.{c.strip()}" for c in RUN_COLUMNS.split(","))
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {columns} FROM sources s JOIN fetch_runs r ON r.id = ("  # noqa: S608
                "SELECT id FROM fetch_runs WHERE source_id = s.id "
                "ORDER BY started_at DESC, id DESC LIMIT 1)").fetchall()
        return {row[1]: run_from_row(row) for row in rows}

    def diversity(self, since: datetime) -> dict[str, Diversity]:
        with self._read() as conn:
            rows = conn.execute(
                "SELECT source_id, count(*), count(DISTINCT nullif(title_fp, '')) FROM items "
                "WHERE discovered_at >= ? GROUP BY source_id", (to_us(since),)).fetchall()
        return {r[0]: Diversity(*r) for r in rows}

    def reprint_edges(self, since: datetime) -> list[ReprintEdge]:
        with self._read() as conn:
            rows = conn.execute(_REPRINTS, {"since": to_us(since)}).fetchall()
        return [ReprintEdge(*r) for r in rows]

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
        key = f"mark:{name}"
        with self._write() as conn:
            row = conn.execute("SELECT value FROM meta WHERE name = ?", (key,)).fetchone()
            if (None if row is None else row[0]) != expected:
                return False
            conn.execute("INSERT INTO meta (name, value) VALUES (?, ?) "
                         "ON CONFLICT (name) DO UPDATE SET value = excluded.value", (key, value))
            return True

    def set_intervals(self, intervals: Mapping[str, int]) -> int:
        with self._write() as conn:
            cur = conn.executemany("UPDATE sources SET interval_min = ? WHERE id = ?",
                                   [(int(v), k) for k, v in intervals.items()])
            return max(cur.rowcount, 0)

    def release_sources(
        self, source_ids: Sequence[str], now: datetime, due_at: datetime | None = None,
    ) -> int:
        abandoned = 0
        with self._write() as conn:
            for part in chunks(list(source_ids)):
                place = marks(len(part))
                abandoned += conn.execute(
                    f"UPDATE fetch_runs SET outcome = ?, finished_at = ? "  # noqa: S608
                    f"WHERE outcome = ? AND source_id IN ({place})",
                    (RunOutcome.ABANDONED.value, to_us(now), RunOutcome.RUNNING.value,
                     *part)).rowcount
                conn.execute(f"UPDATE sources SET next_fetch_at = ? WHERE id IN ({place})",  # noqa: S608
                             (to_us(due_at or now), *part))
        return abandoned

    def abandon_stale_runs(self, started_before: datetime, now: datetime,
                           reason: str = "") -> int:
        with self._write() as conn:
            return conn.execute(
                "UPDATE fetch_runs SET outcome = ?, finished_at = ?, error = ? "
                "WHERE outcome = ? AND started_at < ?",
                (RunOutcome.ABANDONED.value, to_us(now), reason or None,
                 RunOutcome.RUNNING.value, to_us(started_before))).rowcount

    def lease_holders(self) -> list[str]:
        with self._read() as conn:
            return [r[0] for r in conn.execute("SELECT DISTINCT holder FROM source_leases")]

    def take_over_leases(self, holder: str, now: datetime, reason: str) -> int:
        # still held: the source's next fetch is the lease time the holder wrote
        held = ("SELECT l.source_id FROM source_leases l JOIN sources s ON s.id = l.source_id "
                "WHERE l.holder = ? AND s.next_fetch_at = l.until")
        with self._write() as conn:
            conn.execute(
                f"UPDATE fetch_runs SET outcome = ?, finished_at = ?, error = ? "  # noqa: S608
                f"WHERE outcome = ? AND source_id IN ({held})",
                (RunOutcome.ABANDONED.value, to_us(now), reason, RunOutcome.RUNNING.value,
                 holder))
            freed = conn.execute(f"UPDATE sources SET next_fetch_at = ? WHERE id IN ({held})",  # noqa: S608
                                 (to_us(now), holder)).rowcount
            conn.execute("DELETE FROM source_leases WHERE holder = ?", (holder,))
            return freed
