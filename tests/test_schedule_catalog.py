"""One job catalogue (issue 28): the embedded runner and the cluster's periodic tasks are
both made from it; a singleton is one at a time across the cluster (the queue's own
lock); a held job stays with the process whose memory is warm until the hold lapses
or its holder dies; the writer count is the storage's."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import pgserver
from clusterkit import dead_holder
from tidings.app import Tidings
from tidings.app.cluster import writer_threads
from tidings.schedule import catalog
from tidings.schedule.catalog import CATALOG, Job, JobContext, Scope, run_job
from tidings.schedule.cluster import cron, make_app
from tidings.schedule.jobs import Calendar
from tidings.schedule.runner import Runner
from tidings.settings import load_settings
from tidings.store.postgres import PostgresStorage, ensure_queue_schema, queue_connector
from tidings.store.sqlite import SqliteStorage

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def test_the_cadences_as_procrastinate_crons() -> None:
    assert cron(10) == "* * * * * */10"
    assert cron(15.2) == "* * * * * */15"
    assert cron(60) == "*/1 * * * *"
    assert cron(300) == "*/5 * * * *"


def test_the_embedded_runner_runs_every_catalogue_job(tmp_path: Path) -> None:
    tidings = Tidings.open(load_settings(tmp_path, env={}), create=True)
    try:
        runner = Runner(tidings.pipeline_env())
        assert list(runner.jobs) == [job.name for job in CATALOG]
    finally:
        tidings.close()


@pytest.mark.postgres
async def test_the_cluster_defers_every_catalogue_job_with_its_locks() -> None:
    """The rows procrastinate stores for each periodic job: one waiting at a time, and
    a singleton's lock, which keeps a second worker from running it meanwhile."""
    url = pgserver.schema_url()
    ensure_queue_schema(url)
    app = make_app(queue_connector(url))
    crons = {p.task.name: p.cron for p in app.periodic_registry.periodic_tasks.values()}
    async with app.open_async():
        for job in CATALOG:
            assert crons[f"tidings:{job.name}"] == cron(job.cadence)
            new = app.configure_task(f"tidings:{job.name}").make_new_job(timestamp=0)
            await app.job_manager.defer_job_async(new)
        rows = await app.job_manager.list_jobs_async()
    locks = {r.task_name: (r.lock, r.queueing_lock, r.queue) for r in rows}
    for job in CATALOG:
        name = f"tidings:{job.name}"
        lock = name if job.scope is Scope.SINGLETON else None
        assert locks[name] == (lock, name, "jobs")
    assert {job.name for job in CATALOG} >= {"extract", "index", "stories", "daily", "weekly"}


def test_a_held_job_stays_with_its_process_until_the_hold_lapses(tmp_path: Path) -> None:
    tidings = Tidings.open(load_settings(tmp_path, env={}), create=True)
    now = [NOW]
    runs: list[str] = []

    async def count(ctx: JobContext) -> str:
        runs.append(ctx.holder)
        return "ran"

    job = Job("placing", 10.0, Scope.SINGLETON, count, hold=120.0)
    env = replace(tidings.pipeline_env(), clock=lambda: now[0])
    calendar = Calendar.starting(NOW, UTC, NOW.time(), 1, NOW.time())

    def context(holder: str) -> JobContext:
        return JobContext(env, calendar, holder=holder)

    first, second = context("host-a/1/1.00"), context("host-b/2/2.00")

    async def go() -> None:
        assert await run_job(job, first) == "ran"
        assert await run_job(job, second) == ""  # held by the first
        now[0] += timedelta(seconds=100)
        assert await run_job(job, first) == "ran"  # renewed until 100 + 120 s
        now[0] += timedelta(seconds=119)
        assert await run_job(job, second) == ""
        now[0] += timedelta(seconds=2)
        assert await run_job(job, second) == "ran"  # the hold lapsed: taken over
        assert await run_job(job, first) == ""
        dead = context(dead_holder())
        assert await run_job(job, dead) == ""  # not held by it... yet
        now[0] += timedelta(seconds=200)
        assert await run_job(job, dead) == "ran"
        assert await run_job(job, first) == "ran"  # its holder died: taken at once
        await tidings.aclose()

    asyncio.run(go())
    assert runs == ["host-a/1/1.00", "host-a/1/1.00", "host-b/2/2.00", runs[3],
                    "host-a/1/1.00"]


def test_a_stopping_process_gives_its_hold_back(tmp_path: Path) -> None:
    tidings = Tidings.open(load_settings(tmp_path, env={}), create=True)
    env = replace(tidings.pipeline_env(), clock=lambda: NOW)
    calendar = Calendar.starting(NOW, UTC, NOW.time(), 1, NOW.time())
    first = JobContext(env, calendar, holder="host-a/1/1.00")
    second = JobContext(env, calendar, holder="host-b/2/2.00")

    async def ran(ctx: JobContext) -> str:
        return "ran"

    held = [job.name for job in CATALOG if job.hold]
    assert held == ["stories"]
    stories = Job("stories", 10.0, Scope.SINGLETON, ran, hold=120.0)

    async def go() -> None:
        assert await run_job(stories, first) == "ran"
        assert await run_job(stories, second) == ""
        await catalog.give_back(first)
        assert await run_job(stories, second) == "ran"
        await tidings.aclose()

    asyncio.run(go())


@pytest.mark.postgres
def test_the_writer_threads_are_what_the_storage_runs_side_by_side(tmp_path: Path) -> None:
    with SqliteStorage(tmp_path / "a.sqlite3") as lite:
        assert lite.writers == 1
        assert writer_threads(64, lite.writers) == 0  # the facade's writer is the one
    with PostgresStorage(pgserver.schema_url()) as pg:
        assert pg.writers == 7
        assert [writer_threads(c, pg.writers) for c in (1, 4, 16, 64)] == [1, 1, 4, 6]
    with PostgresStorage(pgserver.schema_url(), pool_size=4) as small:
        assert small.writers == 1 and writer_threads(16, small.writers) == 0


@pytest.mark.parametrize("name", [job.name for job in CATALOG])
def test_every_job_runs_on_an_empty_archive(tmp_path: Path, name: str) -> None:
    tidings = Tidings.open(load_settings(tmp_path, env={}), create=True)
    env = tidings.pipeline_env()
    job = next(j for j in CATALOG if j.name == name)
    context = JobContext(env, Calendar.starting(env.clock() - timedelta(days=8), UTC,
                                                NOW.time(), 1, NOW.time()))

    async def go() -> str:
        try:
            return await run_job(job, context)
        finally:
            await tidings.aclose()

    done = asyncio.run(go())
    assert done in {"", "done", "reported"}
