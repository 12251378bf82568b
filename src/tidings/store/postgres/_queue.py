"""The job queue's tables (procrastinate's) as the cluster runner needs them: created once,
and read for ``tidings status``.

procrastinate owns its schema (``procrastinate_jobs``, ``_workers``, ``_events``…);
tidings only creates it when it is missing, under the same advisory lock as its
own migrations (two workers starting at once create it once), and reads it.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import procrastinate
import psycopg
from procrastinate.schema import SchemaManager

from tidings.errors import StorageError
from tidings.store.postgres._db import connect, one_line
from tidings.store.postgres._schema import _LOCK
from tidings.store.sql._base import opt_dt, to_us


@dataclass(frozen=True, slots=True)
class QueueStatus:
    """What ``tidings status`` shows of a cluster."""

    workers: int  # workers with a heartbeat in the last minute
    queued: dict[str, int]  # jobs waiting, per queue
    running: int
    failed_last_hour: int
    due_sources: int
    oldest_due_at: datetime | None  # the longest-overdue source's due time


def queue_connector(url: str, max_size: int = 4) -> procrastinate.PsycopgConnector:
    """procrastinate's connection to the archive's database (its own small pool)."""
    return procrastinate.PsycopgConnector(conninfo=url, min_size=1, max_size=max_size)


def ensure_queue_schema(url: str) -> bool:
    """Create procrastinate's tables unless they exist; True if this call created them."""
    schema_sql = SchemaManager.get_schema()
    conn = connect(url)
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
            row = conn.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()
            if row is not None and row[0] is not None:
                return False
            conn.execute(schema_sql.encode())
            return True
    except psycopg.Error as exc:
        raise StorageError(f"cannot create the job queue's tables: {one_line(exc)}") from exc
    finally:
        conn.close()


def queue_status(url: str, now: datetime) -> QueueStatus:
    conn = connect(url)
    try:
        alive = conn.execute("SELECT count(*) FROM procrastinate_workers "
                             "WHERE last_heartbeat > %s", (now - timedelta(minutes=1),)
                             ).fetchone()
        queued = dict(conn.execute(
            "SELECT queue_name, count(*) FROM procrastinate_jobs WHERE status = 'todo' "
            "GROUP BY queue_name ORDER BY queue_name").fetchall())
        running = conn.execute(
            "SELECT count(*) FROM procrastinate_jobs WHERE status = 'doing'").fetchone()
        failed = conn.execute(
            "SELECT count(DISTINCT job_id) FROM procrastinate_events "
            "WHERE type = 'failed' AND at > %s", (now - timedelta(hours=1),)).fetchone()
        due = conn.execute(
            "SELECT count(*), min(coalesce(next_fetch_at, created_at)) FROM sources "
            "WHERE muted_reason IS NULL AND kind != 'external' "
            "AND (next_fetch_at IS NULL OR next_fetch_at <= %s)", (to_us(now),)).fetchone()
    except psycopg.Error as exc:
        raise StorageError(f"cannot read the job queue: {one_line(exc)} "
                           "(has a `tidings worker` ever run on this database?)") from exc
    finally:
        conn.close()
    assert alive and running and failed and due
    return QueueStatus(workers=int(alive[0]), queued={k: int(v) for k, v in queued.items()},
                       running=int(running[0]), failed_last_hour=int(failed[0]),
                       due_sources=int(due[0]), oldest_due_at=opt_dt(due[1]))


class SessionLock:
    """A PostgreSQL session advisory lock held by one process of the cluster at a time,
    on a connection of its own: the lock lasts as long as that connection, so a holder
    killed or cut off frees it for the next process that asks.

    For a role only one process may play, with state in its memory (the story index:
    one placer keeps it warm, as the embedded runner does, instead of every worker
    rebuilding it in turn).
    """

    def __init__(self, url: str, name: str) -> None:
        self.url = url
        self.name = name
        self._conn: psycopg.Connection[Any] | None = None

    def held(self) -> bool:
        """Take the lock if it is free; True while this process holds it (checked on
        its connection, so a lost connection is noticed here)."""
        try:
            if self._conn is not None:
                self._conn.execute("SELECT 1")
                return True
            conn = connect(self.url)
            # advisory locks are per database: the schema keeps archives apart
            row = conn.execute("SELECT pg_try_advisory_lock(hashtextextended("
                               "current_schema() || ':' || %s, 0))", (self.name,)).fetchone()
            if row and row[0]:
                self._conn = conn
                return True
            conn.close()
            return False
        except (psycopg.Error, StorageError):
            self.release()
            return False

    def release(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            with contextlib.suppress(psycopg.Error):
                conn.close()
