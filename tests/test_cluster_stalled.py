"""The jobs of a dead worker, against the real PostgreSQL and procrastinate's own queue:
a stalled job whose source already waits again is dropped (its run closed as
abandoned), the others go back to the queue, and one job the database refuses
is logged once and never stops the pass."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import procrastinate
import psycopg
import pytest

import pgserver
from clusterkit import dead_holder
from storage_contract import source
from tidings.model import RunOutcome
from tidings.schedule.cluster import _claim, defer_collect, make_app
from tidings.schedule.stalled import LogOnce, Stalled, retry_stalled
from tidings.store.postgres import PostgresStorage, ensure_queue_schema, queue_connector
from tidings.store.writer import Writer

pytestmark = [pytest.mark.postgres]

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


@dataclass
class Queue:
    url: str
    app: procrastinate.App
    store: PostgresStorage
    writer: Writer

    def rows(self, sql: str) -> list[tuple[object, ...]]:
        with psycopg.connect(self.url, autocommit=True) as conn:
            return list(conn.execute(sql.encode()).fetchall())

    async def die_holding(self, count: int) -> None:
        """A worker takes ``count`` jobs and dies: its heartbeat is an hour old."""
        worker = await self.app.job_manager.register_worker()
        for _ in range(count):
            assert await self.app.job_manager.fetch_job(["collect"], worker) is not None
        self.execute("UPDATE procrastinate_workers SET last_heartbeat = now() - interval "
                     "'1 hour'")

    def execute(self, sql: str) -> None:
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(sql.encode())

    def jobs(self) -> list[tuple[object, ...]]:
        return self.rows("SELECT args->>'source_id', status FROM procrastinate_jobs "
                         "ORDER BY 1, 2")


@pytest.fixture
async def queue() -> AsyncIterator[Queue]:
    url = pgserver.schema_url()
    ensure_queue_schema(url)
    store = PostgresStorage(url, pool_size=2)
    writer = Writer(store)
    app = make_app(queue_connector(url))
    try:
        for sid in ("a", "b", "c"):
            store.add_source(source(sid))
        async with app.open_async():
            yield Queue(url, app, store, writer)
    finally:
        writer.close()
        store.close()


async def test_a_stalled_job_whose_source_waits_again_is_dropped_and_its_run_abandoned(
        queue: Queue) -> None:
    """The field case of issue 30: the scheduler queued a fresh job for a source whose
    old job is stalled; putting the old one back would break the queueing lock."""
    assert await defer_collect(queue.app, ["a", "b"]) == 2
    run = queue.store.start_run("a", NOW)
    await queue.die_holding(2)
    assert await defer_collect(queue.app, ["a"]) == 1  # due again (a lapsed hub, say)
    done = await retry_stalled(queue.app, queue.writer, NOW, 20.0, LogOnce())
    assert done == Stalled(retried=1, dropped=1, failed=0)
    assert queue.jobs() == [("a", "todo"), ("b", "todo")]
    runs = queue.rows(f"SELECT outcome FROM fetch_runs WHERE id = {run}")
    assert runs == [(RunOutcome.ABANDONED.value,)]
    assert await retry_stalled(queue.app, queue.writer, NOW, 20.0, LogOnce()) == Stalled()


async def test_a_job_the_database_refuses_is_logged_once_and_the_others_go_back(
        queue: Queue, caplog: pytest.LogCaptureFixture) -> None:
    queue.execute("""CREATE FUNCTION refuse_c() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.args->>'source_id' = 'c' AND NEW.status = 'todo' THEN
            RAISE EXCEPTION 'no retry for c today';
          END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER refuse_c BEFORE UPDATE ON procrastinate_jobs
          FOR EACH ROW EXECUTE FUNCTION refuse_c()""")
    await defer_collect(queue.app, ["c", "a", "b"])
    await queue.die_holding(3)
    once = LogOnce()
    with caplog.at_level(logging.DEBUG, logger="tidings.schedule.stalled"):
        first = await retry_stalled(queue.app, queue.writer, NOW, 20.0, once)
        second = await retry_stalled(queue.app, queue.writer, NOW, 20.0, once)
    assert first == Stalled(retried=2, dropped=0, failed=1)
    assert second == Stalled(retried=0, dropped=0, failed=1)
    assert queue.jobs() == [("a", "todo"), ("b", "todo"), ("c", "doing")]
    warned = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and "no retry for c today" in warned[0].getMessage()
    assert "cannot be retried" in warned[0].getMessage()


async def test_sources_a_dead_worker_claimed_but_never_queued_are_claimed_again(
        queue: Queue) -> None:
    """A worker killed between leasing the due sources and queueing their jobs: the
    next pass on its host frees them at once instead of after the 10-minute lease."""
    queue.store.claim_due_sources(NOW, 10, NOW + timedelta(minutes=10), holder=dead_holder())
    with queue.store.write() as unit:
        picked = _claim(unit, NOW + timedelta(seconds=5), 10)
    assert sorted(s.id for s in picked) == ["a", "b", "c"]
    with queue.store.write() as unit:  # now leased by a live worker (this one): kept
        assert _claim(unit, NOW + timedelta(seconds=10), 10) == []
