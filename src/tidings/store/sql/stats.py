"""Figures for the sources page, the health page and the status bar (R-UI-3), written
once; each backend says how it counts the items (``_item_counts``)."""

from __future__ import annotations

from datetime import datetime, timedelta

from tidings.errors import NotFoundError
from tidings.model import RunOutcome
from tidings.store.base import ArchiveStats, SourceStats
from tidings.store.sql._base import DAY_US, Connected, SqlConn, opt_dt, to_us
from tidings.store.sql.runs import RUN_COLUMNS, run_from_row

#: runs started within this long before the latest run start form the "last round"
ROUND_WINDOW = timedelta(minutes=10)
_DAY = DAY_US


class StatsCore(Connected):

    def _item_counts(self, conn: SqlConn) -> tuple[int, int, int]:
        """All items, the backfilled ones and the unread ones: the backend says how
        (each count is the archive's largest scan)."""
        raise NotImplementedError

    def source_stats(self, source_id: str, now: datetime) -> SourceStats:
        """``items_per_day[6]`` counts the source's items discovered in the 24 hours up
        to ``now``, ``[5]`` the 24 hours before, and so on (rolling days, no time zone)."""
        end = to_us(now)
        with self._read() as conn:
            if conn.execute("SELECT 1 FROM sources WHERE id = ?", (source_id,)).fetchone() is None:
                raise NotFoundError(f"source {source_id!r} not found")
            (total,) = conn.execute("SELECT count(*) FROM items WHERE source_id = ?",
                                    (source_id,)).fetchone()
            per_day = [0] * 7
            for (age_days, n) in conn.execute(
                    "SELECT (CAST(? AS bigint) - discovered_at) / CAST(? AS bigint) AS age, "
                    "count(*) FROM items "
                    "WHERE source_id = ? AND discovered_at > ? AND discovered_at <= ? "
                    "GROUP BY age", (end, _DAY, source_id, end - 7 * _DAY, end)).fetchall():
                if 0 <= age_days < 7:
                    per_day[6 - age_days] += n
            row = conn.execute(
                f"SELECT {RUN_COLUMNS} FROM fetch_runs WHERE source_id = ? "  # noqa: S608
                "ORDER BY started_at DESC, id DESC LIMIT 1", (source_id,)).fetchone()
        return SourceStats(source_id=source_id, items_total=int(total),
                           items_per_day=tuple(per_day),
                           last_run=None if row is None else run_from_row(row))

    def archive_stats(self) -> ArchiveStats:
        """The last round is every run started within ROUND_WINDOW (10 minutes) before
        the latest run start; its sources count as ok when a run ended ok or not modified.
        ``oldest_success_at`` is the oldest last success among sources that are not muted."""
        with self._read() as conn:
            health = dict(conn.execute(
                "SELECT health, count(*) FROM sources GROUP BY health").fetchall())
            items, backfill, unread = self._item_counts(conn)
            (raw,) = conn.execute("SELECT count(*) FROM raw_responses").fetchone()
            (latest,) = conn.execute("SELECT max(started_at) FROM fetch_runs").fetchone()
            started, sources, ok, new = None, 0, 0, 0
            if latest is not None:
                window = latest - ROUND_WINDOW // timedelta(microseconds=1)
                started, sources, ok, new = conn.execute(
                    "SELECT min(started_at), count(DISTINCT source_id), "
                    "count(DISTINCT source_id) FILTER (WHERE outcome IN (?, ?)), "
                    "coalesce(sum(created), 0) FROM fetch_runs WHERE started_at >= ? "
                    "AND outcome NOT IN (?, ?)",  # a stopped process's runs are no round's
                    (RunOutcome.OK.value, RunOutcome.NOT_MODIFIED.value, window,
                     RunOutcome.ABANDONED.value, RunOutcome.RUNNING.value)).fetchone()
            (oldest,) = conn.execute(
                "SELECT min(last_success_at) FROM sources WHERE muted_reason IS NULL").fetchone()
        return ArchiveStats(
            sources_by_health={k: int(v) for k, v in health.items()}, items=int(items),
            items_backfill=int(backfill), items_unread=int(unread), raw_responses=int(raw),
            last_round_started=opt_dt(started), last_round_sources=int(sources),
            last_round_ok=int(ok), last_round_new_items=int(new),
            oldest_success_at=opt_dt(oldest))
