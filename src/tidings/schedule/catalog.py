"""The background jobs, wired once: name, cadence, scope and the pipeline step they run.

Both runners read this catalogue and nothing else. The embedded runner
(``tidings serve``) runs each job as a :class:`~tidings.schedule.background.Repeating`
kicked at the first tick at least ``cadence`` after its last start; the cluster
(``tidings worker``) registers each as a periodic procrastinate task firing every
``cadence`` seconds, deferred once per slot however many workers run. A job is
``async def run(ctx: JobContext) -> str`` returning a short summary of what it
did ("" when nothing), which both runners log.

``scope`` says how many may run at once across every process on one archive:

* ``SHARED``: any number; the work is split safely by storage (extraction claims
  its items).
* ``SINGLETON``: one at a time (in a cluster, a procrastinate lock named after the
  job). Indexing reads a batch before it writes it, so two indexers side by side
  would build the same documents twice (the second's write stores none of
  them). The daily and weekly jobs are once per period by their bookmarks anyway;
  one at a time keeps them from doing the work twice side by side.

``hold`` is for a singleton whose state lives in memory: story placement keeps
its 72 h index (with the sources' templates learnt from what it placed) warm
between runs, and a warm start rebuilds it from storage. The process that ran
the job keeps it for ``hold`` seconds after each run (a mark in storage, swapped
like the bookmarks), so the job stays where its index is warm; another process
that gets the job's slot meanwhile skips it. A holder that stopped gives the
hold back; one that died on this host loses it at once (the lease holders' own
check), one on another host when the hold runs out.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

from tidings.pipeline.env import PipelineEnv
from tidings.pipeline.extraction import extract_pending
from tidings.pipeline.holders import Holder, is_gone, this_process
from tidings.pipeline.stories import Clusterer
from tidings.schedule import jobs
from tidings.schedule.webhooks import WebhookSender
from tidings.store.ops import OpsUnit

log = logging.getLogger(__name__)


class Scope(StrEnum):
    SHARED = "shared"
    SINGLETON = "singleton"


@dataclass(slots=True)
class JobContext:
    """What a job works with; one per process (the story index lives in ``clusterer``)."""

    env: PipelineEnv
    calendar: jobs.Calendar
    clusterer: Clusterer = field(default_factory=Clusterer)
    webhooks: WebhookSender | None = None
    holder: str = field(default_factory=lambda: str(this_process()))  # for ``hold``


JobRun = Callable[[JobContext], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class Job:
    name: str
    cadence: float  # seconds between runs (a cluster's cron rounds it to whole seconds)
    scope: Scope
    run: JobRun
    hold: float = 0.0  # seconds a stateful singleton stays with its last process


def _us(when: datetime) -> int:
    return int(when.timestamp() * 1_000_000)


def _hold_key(name: str) -> str:
    return f"hold:{name}"


def _keep(unit: OpsUnit, name: str, me: str, now: datetime, hold: float) -> bool:
    """Take or renew the hold of job ``name``; False while another live process has it."""
    key = _hold_key(name)
    current = unit.get_mark(key)
    if current:
        holder, _, until = current.rpartition("@")
        if holder != me and until.isdigit() and int(until) > _us(now) \
                and not _gone(holder):
            return False
    until_us = _us(now + timedelta(seconds=hold))
    return unit.swap_mark(key, current, f"{me}@{until_us}")


def _gone(holder: str) -> bool:
    parsed = Holder.parse(holder)
    return parsed is None or is_gone(parsed)


def _give_back(unit: OpsUnit, name: str, me: str) -> None:
    current = unit.get_mark(_hold_key(name))
    if current and current.rpartition("@")[0] == me:
        unit.swap_mark(_hold_key(name), current, "")


async def run_job(job: Job, ctx: JobContext) -> str:
    """Run ``job`` in this process, unless another process holds it (see ``hold``)."""
    env = ctx.env
    if job.hold and not await env.writer(_keep, job.name, ctx.holder, env.clock(), job.hold):
        return ""
    return await job.run(ctx)


async def give_back(ctx: JobContext) -> None:
    """A stopping process gives its holds back: the next one takes over at once."""
    for job in CATALOG:
        if job.hold:
            await ctx.env.writer(_give_back, job.name, ctx.holder)


async def extract(ctx: JobContext) -> str:
    """Bodies still pending (R-EXTRACT-1)."""
    report = await extract_pending(ctx.env)
    if not report.tried:
        return ""
    return f"{report.tried} tried, {report.ok} ok, {report.unconfirmed} unconfirmed"


async def index(ctx: JobContext) -> str:
    """The search index brought up to date (R-STORE-4)."""
    n = await jobs.index_pending(ctx.env.store, ctx.env.writer)
    return f"{n} indexed" if n else ""


async def stories(ctx: JobContext) -> str:
    """New items placed in stories (R-DEDUP-12), up to 500 a batch: read and placed on
    a thread, then stored in a write step of its own."""
    env, clusterer, placed = ctx.env, ctx.clusterer, 0
    while batch := await asyncio.to_thread(clusterer.prepare, env.store, env.clock()):
        n = await env.writer(clusterer.commit, batch)
        if not n:
            break  # another process placed meanwhile: the next run warms and goes on
        placed += n
    return f"{placed} placed" if placed else ""


async def daily(ctx: JobContext) -> str:
    """Adaptive intervals, recovery of dead holders and pruning, once a day after
    ``adapt_intervals_at`` (the bookmark decides which process does it)."""
    now = ctx.env.clock()
    if not ctx.calendar.daily_due(now):
        return ""
    done = await ctx.env.writer(jobs.daily_maintenance, ctx.env.settings, now,
                                ctx.calendar.tz)
    return "done" if done else "done elsewhere"


async def weekly(ctx: JobContext) -> str:
    """The source-health report (R-OPS-3), logged and posted to the webhooks."""
    env = ctx.env
    now = env.clock()
    if not ctx.calendar.weekly_due(now):
        return ""
    done = await jobs.weekly_report(env.store, env.writer, now, ctx.webhooks)
    return "reported" if done else "reported elsewhere"


CATALOG: tuple[Job, ...] = (
    Job("extract", 60.0, Scope.SHARED, extract),
    Job("index", 15.0, Scope.SINGLETON, index),
    Job("stories", 10.0, Scope.SINGLETON, stories, hold=120.0),
    Job("daily", 60.0, Scope.SINGLETON, daily),
    Job("weekly", 60.0, Scope.SINGLETON, weekly),
)
