"""The jobs of dead workers (cluster mode): back to the queue, or dropped when a twin waits.

A worker killed or cut off leaves its jobs ``doing``; once its heartbeat is older
than the stall window the scheduler hands them back to the queue. A job's
queueing lock allows one *waiting* job per source, and a source can become due
again while its old job is stalled (a lapsed WebSub subscription sets its next
fetch to now): the scheduler then queued a fresh job for it, and PostgreSQL
refuses to put the stalled one back beside it (a unique violation on the
queueing lock). That twin does the same work, so the stalled job is dropped and
its run closed as abandoned. Any other refusal is this one job's: it is logged
once and the pass goes on with the others, so one stuck job never stops the
scheduling of the rest.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

import procrastinate
from procrastinate import exceptions as pexc
from procrastinate.jobs import Job, Status

from tidings.store.ops import OpsWrites
from tidings.store.writer import Writer

log = logging.getLogger(__name__)

#: failures remembered for "log once" at most (a bound, not a policy)
REMEMBERED = 10_000


@dataclass(slots=True)
class LogOnce:
    """Logs a warning the first time a key fails, and quietly (debug) after that."""

    seen: set[str] = field(default_factory=set)

    def warn(self, key: str, message: str, *args: object) -> bool:
        """Log ``message`` as a warning unless ``key`` was logged before; True if it was."""
        if key in self.seen:
            log.debug(message, *args)
            return False
        if len(self.seen) >= REMEMBERED:
            self.seen.clear()
        self.seen.add(key)
        log.warning(message, *args)
        return True

    def forget(self, key: str) -> None:
        """``key`` worked: a later failure of it is news again."""
        self.seen.discard(key)


@dataclass(frozen=True, slots=True)
class Stalled:
    """What one pass over the stalled jobs did."""

    retried: int = 0
    dropped: int = 0
    failed: int = 0


def why(exc: BaseException) -> str:
    """One line of what went wrong: procrastinate says "Database error." and keeps
    PostgreSQL's own words in the cause."""
    cause = exc.__cause__ if isinstance(exc, pexc.ConnectorException) and exc.__cause__ \
        else exc
    return " ".join(str(cause).split())[:300] or type(cause).__name__


def _abandon(unit: OpsWrites, source_id: str, now: datetime) -> int:
    return unit.release_sources([source_id], now)


async def retry_stalled(app: procrastinate.App, writer: Writer, now: datetime,
                        stalled_after: float, once: LogOnce) -> Stalled:
    """Every job of a worker silent for ``stalled_after`` seconds runs again, or is
    dropped when its source already has a waiting job (see the module docstring)."""
    retried = dropped = failed = 0
    for job in await app.job_manager.get_stalled_jobs(seconds_since_heartbeat=stalled_after):
        key = f"job {job.id}"
        try:
            if await _retry_or_drop(app, writer, job, now):
                retried += 1
            else:
                dropped += 1
            once.forget(key)
        except Exception as exc:  # this job's trouble; the others still go back
            failed += 1
            once.warn(key, "stalled job %s (%s %s) cannot be retried: %s", job.id,
                      job.task_name, job.task_kwargs, why(exc))
    return Stalled(retried, dropped, failed)


async def _retry_or_drop(app: procrastinate.App, writer: Writer, job: Job,
                         now: datetime) -> bool:
    """True when the job went back to the queue, False when it was dropped."""
    assert job.id is not None
    try:
        await app.job_manager.retry_job(job)
        return True
    except pexc.UniqueViolation as exc:
        if exc.queueing_lock is None:
            raise  # another constraint: not a twin, the caller logs it
    # the run is closed while the job still holds the source's lock: its twin cannot
    # have started yet, so the run closed is the dead worker's
    source_id = job.task_kwargs.get("source_id")
    closed = await writer(_abandon, str(source_id), now) if source_id else 0
    await app.job_manager.finish_job_by_id_async(job.id, Status.ABORTED, delete_job=True)
    log.info("stalled job %s (%s) dropped: a job for %s waits already; %d run(s) "
             "closed as abandoned", job.id, job.task_name, job.queueing_lock, closed)
    return False
