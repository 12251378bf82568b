"""The cluster runner (R-SCHED-7): the embedded runner's work as procrastinate tasks.

Any number of ``tidings worker`` processes, on any number of machines, share one
PostgreSQL archive and the job queue in it (procrastinate). The work is:

* ``schedule`` (periodic, every few seconds): claim the due sources (the same
  leased pick as the embedded runner) and defer one ``collect`` job per source,
  with ``queueing_lock`` = the source (one job waiting per source, however often
  it is picked) and ``lock`` = the source (procrastinate never runs two jobs
  with one lock at once: a source is never fetched twice at the same time). It
  also hands the jobs of dead workers back to the queue (stalled jobs);
* ``collect`` (one source): take the source (its run lock is held, so a run
  still marked running belongs to a dead worker and is abandoned), fetch,
  store, done;
* the background jobs of the catalogue (:mod:`tidings.schedule.catalog`:
  pending bodies, the search index, story placement, the daily and weekly jobs),
  each a periodic task at its cadence; a singleton holds a procrastinate lock
  named after it, so one worker at a time runs it. Story placement keeps its
  72 h index in the memory of the worker that ran it last; a worker that finds
  the bookmark moved by another warms its index from storage first, as a restart
  does.

procrastinate defers each periodic job once per time slot however many workers
run (a unique row per task and timestamp), so two schedulers never pick twice.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import procrastinate
from procrastinate import exceptions as pexc

from tidings.errors import ConfigError, StorageError
from tidings.model import RunCounts, Source
from tidings.pipeline import holders, timing
from tidings.pipeline.batch import collect_group, groups
from tidings.pipeline.env import PipelineEnv
from tidings.pipeline.timing import local_zone
from tidings.schedule import jobs, plan
from tidings.schedule.catalog import CATALOG, Job, JobContext, Scope, run_job
from tidings.schedule.rounds import RoundLog
from tidings.schedule.stalled import LogOnce, Stalled, retry_stalled, why
from tidings.settings import Settings

log = logging.getLogger(__name__)

COLLECT_QUEUE = "collect"
JOBS_QUEUE = "jobs"
QUEUES = (COLLECT_QUEUE, JOBS_QUEUE)
#: sources deferred per schedule tick at most (the queue absorbs bursts; a source
#: whose job waits keeps its lease, and its queueing lock refuses a second job)
PICK_PER_TICK = 2000
#: a worker writes a heartbeat this often; one silent for STALLED_AFTER is dead and its
#: jobs go back to the queue
HEARTBEAT_SECONDS = 5.0
DEFER_BATCH = 200
STALLED_AFTER = 20.0

tasks = procrastinate.Blueprint()


@dataclass(slots=True)
class WorkerContext:
    """What the tasks of this worker process work with (``jobs``: the catalogue's).

    ``envs`` differ only in their writer: PostgreSQL runs transactions side by side,
    so a worker spreads its jobs' write steps over several writer threads instead
    of queueing every job behind one; indexing, a long step, has the first writer
    to itself, collection jobs take turns on the others.
    """

    envs: list[PipelineEnv]
    settings: Settings
    jobs: JobContext
    stalled_after: float = STALLED_AFTER
    turn: int = 0
    once: LogOnce = field(default_factory=LogOnce)
    rounds: RoundLog = field(default_factory=RoundLog)

    @property
    def env(self) -> PipelineEnv:
        """The env of the catalogue's jobs (indexing, extraction, placement, upkeep)."""
        return self.envs[0]

    def next_env(self) -> PipelineEnv:
        """The env of the next collection job."""
        self.turn += 1
        pool = self.envs[1:] or self.envs
        return pool[self.turn % len(pool)]


_context: list[WorkerContext] = []


def enter(ctx: WorkerContext) -> None:
    """The tasks of this process work with ``ctx`` until :func:`leave`."""
    _context.append(ctx)


def leave(ctx: WorkerContext) -> None:
    _context.remove(ctx)


def job_context(env: PipelineEnv, settings: Settings) -> JobContext:
    """The catalogue's context in a worker. Its calendar starts a day back: a daily or
    weekly job not yet done today is due at once (the bookmarks keep it once across
    the cluster), as workers come and go at any hour."""
    now = env.clock()
    calendar = jobs.Calendar.starting(now - timedelta(days=1), local_zone(settings.timezone),
                                      plan.parse_hhmm(settings.adapt_intervals_at),
                                      plan.REPORT_WEEKDAY, plan.REPORT_AT)
    return JobContext(env, calendar)


def _ctx() -> WorkerContext:
    if not _context:
        raise ConfigError("cluster tasks run inside `tidings worker` only")
    return _context[-1]


def source_lock(source_id: str) -> str:
    return f"source:{source_id}"


# ------------------------------------------------------------------ steps
def _claim(unit: holders.Claiming, now: datetime, limit: int) -> list[Source]:
    """The due sources, leased in this worker's name. A worker killed between this
    step and queueing the jobs leaves sources leased with no job: the next pass on
    its host frees them at once (the lease holders' own check); a dead worker on
    another host cannot be checked from here, so its claims wait out the lease."""
    for text in unit.lease_holders():
        holder = holders.Holder.parse(text)
        if holder is None or holders.is_gone(holder):
            unit.take_over_leases(text, now, "abandoned: the worker that claimed it died")
    return unit.claim_due_sources(now, limit, timing.lease_until(now),
                                  holder=holders.lease_name())


def _take(unit: holders.Claiming, source_id: str, now: datetime) -> list[Source]:
    """The job holds the source's run lock: a run still marked running is a dead
    worker's. Abandon it, then lease the source for this run (muted: nothing)."""
    unit.release_sources([source_id], now)
    return unit.claim_due_sources(now, 1, timing.lease_until(now), only=[source_id])


# ------------------------------------------------------------------ tasks
#: a job that raised (a lost connection, a full pool) runs again soon instead of leaving
#: its source leased until the lease ends; a source's own faults never raise
_RETRY = procrastinate.RetryStrategy(max_attempts=4, exponential_wait=2)


@tasks.task(name="collect", queue=COLLECT_QUEUE, retry=_RETRY)
async def collect(source_id: str) -> str:
    ctx = _ctx()
    env = ctx.next_env()
    results: dict[str, RunCounts] = {}
    ctx.rounds.start()
    try:
        picked = await env.writer(_take, source_id, env.clock())
        for group in groups(picked):
            results.update(await collect_group(env, group))
    finally:
        ctx.rounds.end(results)  # the worker's round line (schedule/worker.py)
    return ",".join(c.outcome.value for c in results.values()) or "skipped"


async def defer_collect(app: procrastinate.App, source_ids: list[str]) -> int:
    """One collect job per source, unless one is already waiting; returns how many.

    Jobs go in batches (one statement for 200 jobs instead of one each: deferring
    1,000 sources one by one took a worker half a minute). A batch with a source
    that already has a waiting job is refused whole; it is then deferred one by
    one, skipping that source.
    """
    deferred = 0
    for start in range(0, len(source_ids), DEFER_BATCH):
        part = source_ids[start:start + DEFER_BATCH]
        jobs = [app.configure_task("tidings:collect", lock=source_lock(sid),
                                   queueing_lock=source_lock(sid)).make_new_job(source_id=sid)
                for sid in part]
        try:
            await app.job_manager.batch_defer_jobs_async(jobs)
            deferred += len(jobs)
            continue
        except pexc.AlreadyEnqueued:
            pass
        for sid in part:
            try:
                await app.configure_task("tidings:collect", lock=source_lock(sid),
                                         queueing_lock=source_lock(sid)
                                         ).defer_async(source_id=sid)
                deferred += 1
            except pexc.AlreadyEnqueued:
                continue
    return deferred


@tasks.periodic(cron="* * * * * */5")  # the sixth field is seconds
@tasks.task(name="schedule", queue=JOBS_QUEUE, queueing_lock="tidings:schedule",
            pass_context=True)
async def schedule(context: procrastinate.JobContext, timestamp: int) -> int:
    """The dead workers' jobs back in the queue, then the due sources deferred; a
    failure of the first never keeps the second from running."""
    ctx = _ctx()
    app = context.app
    env = ctx.env
    try:
        stalled = await retry_stalled(app, env.writer, env.clock(), ctx.stalled_after,
                                      ctx.once)
        ctx.once.forget("stalled")
    except (pexc.ConnectorException, StorageError) as exc:
        stalled = Stalled()
        ctx.once.warn("stalled", "schedule: cannot read the stalled jobs: %s", why(exc))
    now = env.clock()
    picked = await env.writer(_claim, now, PICK_PER_TICK)
    deferred = await defer_collect(app, [s.id for s in picked])
    if deferred or stalled.retried or stalled.dropped:
        log.info("schedule: %d due sources deferred, %d stalled jobs retried, %d dropped "
                 "(their source had a job waiting)", deferred, stalled.retried,
                 stalled.dropped)
    return deferred


# ------------------------------------------------------------------ the catalogue
def cron(seconds: float) -> str:
    """A cadence as procrastinate's cron (a sixth field is seconds)."""
    whole = max(1, round(seconds))
    if whole < 60:
        return f"* * * * * */{whole}"
    return f"*/{max(1, whole // 60)} * * * *"


def _register(job: Job) -> None:
    """``job`` as a periodic task: one waiting at a time (its queueing lock), and one
    running at a time across the cluster when it is a singleton (its lock)."""
    async def run(timestamp: int) -> str:
        return await run_job(job, _ctx().jobs)

    name = f"tidings:{job.name}"
    lock = name if job.scope is Scope.SINGLETON else None
    task = tasks.task(name=job.name, queue=JOBS_QUEUE, queueing_lock=name, lock=lock)(run)
    tasks.periodic(cron=cron(job.cadence))(task)


for _job in CATALOG:
    _register(_job)


# ------------------------------------------------------------------ the worker
_apps: list[procrastinate.App] = []


def make_app(connector: Any) -> procrastinate.App:
    """The queue's app on ``connector``, its tasks named ``tidings:…``. procrastinate
    renames a blueprint's tasks when an app takes them, so that happens once per
    process; later apps are copies on another connector."""
    if not _apps:
        first = procrastinate.App(connector=connector)
        first.add_tasks_from(tasks, namespace="tidings")
        _apps.append(first)
        return first
    return _apps[0].with_connector(connector)
