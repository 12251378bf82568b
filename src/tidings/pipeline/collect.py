"""``collect_source``: one source, one run, from fetch to stored items (SPEC §5).

A run has two halves. Reading (fetch, parse, filter, sanitize and hash) writes
nothing. Storing (raw archive, the batch, the source's cursor and validators,
the run row) is one write step, a unit of work on the process's writer thread
(``env.writer``). A crash anywhere therefore leaves either the old cursor (the
next run fetches again and upserts idempotently) or everything (R-DEDUP-9,
R-RSS-1).

A source's failure never escapes as an exception: it becomes a failed fetch-run
row with a one-line reason, a higher fail_count and a backed-off next fetch,
so one broken source cannot stop a round.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol

from tidings.errors import BudgetExhaustedError, HTTPStatusError, TidingsError
from tidings.model import (
    Health,
    IdentityMode,
    ItemData,
    RawResponse,
    RunCounts,
    RunOutcome,
    Source,
)
from tidings.pipeline import timing
from tidings.pipeline.detail import carried, carried_of, detail_step, with_carried
from tidings.pipeline.env import PipelineEnv
from tidings.pipeline.listing import LISTING_KEY, remembered
from tidings.pipeline.reading import Listing, SourceRules, read_source
from tidings.pipeline.upsert import UpsertUnit, apply_prepared, listing_memory
from tidings.readers.base import ReadResult
from tidings.store.archive import RawWrites
from tidings.store.base import UNSET, SourceUpdate
from tidings.store.runs import RunWrites
from tidings.store.sources import SourceWrites

log = logging.getLogger(__name__)

#: a whole run (all its requests and parsing) may take at most this long
RUN_TIMEOUT_S = 180.0
FILTERED_WARN_SHARE = 0.5
MISSING_WARN_SHARE = 0.3


class RunUnit(UpsertUnit, RawWrites, SourceWrites, RunWrites, Protocol):
    """What storing a run asks of storage: its raw copies, its items, the source's new
    state and the run row, in one unit."""


@dataclass(frozen=True, slots=True)
class Collected:
    counts: RunCounts
    update: SourceUpdate
    new_item_ids: tuple[int, ...] = ()


def run_warnings(found: Sequence[ItemData], filtered: int) -> tuple[str, ...]:
    """Per-run silent-failure signs (R-OPS-1): most entries filtered, or half-empty ones."""
    warnings = []
    if found and filtered / len(found) > FILTERED_WARN_SHARE:
        warnings.append(f"{filtered} of {len(found)} entries were filtered out")
    missing = sum(1 for it in found if not it.title.strip() or not it.url)
    if found and missing / len(found) > MISSING_WARN_SHARE:
        warnings.append(f"{missing} of {len(found)} entries have no title or no link")
    return tuple(warnings)


def _success_update(source: Source, result: ReadResult, cursor: Mapping[str, Any],
                    now: datetime, mode: IdentityMode) -> SourceUpdate:
    return SourceUpdate(
        cursor=cursor, fail_count=0, health=Health.OK, last_success_at=now, last_error=None,
        next_fetch_at=timing.next_after_success(now, source.interval_min, result.not_before),
        title=result.title[:200] if not source.title and result.title else UNSET,
        site_url=result.site_url if not source.site_url and result.site_url else UNSET,
        identity_mode=mode if mode is not source.identity_mode else UNSET,
    )


async def _read(env: PipelineEnv, source: Source, now: datetime,
                raws: list[RawResponse]) -> Listing:
    """The event loop's half of a run: fetch and plan, nothing written."""
    rules = SourceRules.of(source, env.filters)
    ctx = rules.context(source, env.fetcher, now, env.offload, env.paid)
    return await read_source(env.settings, source, rules, ctx,
                             listed=remembered(source.cursor), fetched=raws,
                             detail=detail_step(env, source, rules))


def _update(source: Source, listing: Listing, now: datetime) -> SourceUpdate:
    """A good run's source update: the reader's cursor with the new listing memory."""
    result = listing.result
    memory = remembered(source.cursor) if result.not_modified else listing_memory(
        listing.prepared)
    cursor = {**result.cursor, LISTING_KEY: memory} if memory else dict(result.cursor)
    todo = carried_of(source.cursor) if result.not_modified else carried(
        [e.stored for e in listing.entries if e.stored is not None])
    # detail pages a run's budget left for the next runs (pipeline.detail)
    cursor = with_carried(cursor, todo)
    return _success_update(source, result, cursor, now, listing.source.identity_mode)


def _store(unit: RunUnit, source: Source, listing: Listing, now: datetime) -> Collected:
    """The storage half, in the caller's unit: raw archive, batch, counts."""
    result = listing.result
    for raw in result.raw:
        unit.put_raw(replace(raw, source_id=source.id))
    update = _update(source, listing, now)
    if result.not_modified:
        counts = RunCounts(RunOutcome.NOT_MODIFIED, http_status=result.http_status,
                           pages=result.pages, warnings=result.warnings)
        return Collected(counts, update)
    outcome = apply_prepared(unit, listing.source, listing.prepared, now)
    warnings = result.warnings + run_warnings(result.items, listing.filtered)
    if listing.source.identity_mode is not source.identity_mode:
        warnings += (f"identity rule degraded to {listing.source.identity_mode.value}: "
                     "the feed repeats or omits GUIDs",)
    update = _first_interval(source, update, outcome.created, now, result.not_before)
    counts = RunCounts(
        RunOutcome.OK, found=len(result.items), created=outcome.created,
        revised=outcome.revised, rediscovered=outcome.rediscovered, filtered=listing.filtered,
        pages=result.pages, reused=outcome.unchanged, http_status=result.http_status,
        bytes=result.bytes, warnings=warnings,
    )
    return Collected(counts, update, tuple(outcome.created_ids.values()))


def _first_interval(source: Source, update: SourceUpdate, created: int, now: datetime,
                    not_before: datetime | None) -> SourceUpdate:
    """A paid source's first good check sets its interval (``timing.first_check_interval``)."""
    checked = source if update.cursor is UNSET else replace(source, cursor=update.cursor)
    interval = timing.first_check_interval(checked, created)
    if interval is None or interval == source.interval_min:
        return update
    return replace(update, interval_min=interval,
                   next_fetch_at=timing.next_after_success(now, interval, not_before))


def _finish(unit: RunUnit, source: Source, run_id: int, listing: Listing, now: datetime,
            finished_at: datetime) -> Collected:
    """Store a successful run whole: raw, items, source and run row in one unit.

    The cursor and validators are saved with the batch they describe, so a crash
    leaves either everything or the old cursor (the next run fetches again).
    """
    return _close_run(unit, source, run_id, _store(unit, source, listing, now), finished_at)


def _record_failure(unit: RunUnit, source: Source, run_id: int, done: Collected,
                    raws: Sequence[RawResponse], finished_at: datetime) -> Collected:
    """A failed run: keep what was fetched (for replay), back the source off."""
    for raw in raws:
        unit.put_raw(replace(raw, source_id=source.id))
    return _close_run(unit, source, run_id, done, finished_at)


def _close_run(unit: RunUnit, source: Source, run_id: int, done: Collected,
               finished_at: datetime) -> Collected:
    unit.change_source(source.id, done.update)
    unit.finish_run(run_id, finished_at, done.counts)
    return done


def _failure(source: Source, exc: TidingsError, now: datetime) -> Collected:
    if isinstance(exc, BudgetExhaustedError):
        counts = RunCounts(RunOutcome.BUDGET, error=str(exc))
        return Collected(counts, SourceUpdate(next_fetch_at=timing.next_after_budget(now)))
    status = exc.status if isinstance(exc, HTTPStatusError) else None
    retry_after = exc.retry_after if isinstance(exc, HTTPStatusError) else None
    fail_count = source.fail_count + 1
    update = SourceUpdate(
        fail_count=fail_count, health=timing.health_for(fail_count), last_error=str(exc),
        next_fetch_at=timing.next_after_failure(
            now, source.interval_min, source.fail_count, retry_after),
        muted_reason="410 Gone: the publisher removed this feed" if status == 410 else UNSET,
    )
    return Collected(RunCounts(RunOutcome.FAILED, error=str(exc), http_status=status), update)


def begin_run(unit: RunWrites, source_id: str, now: datetime) -> int:
    return unit.start_run(source_id, now)


def begin_runs(unit: RunWrites, source_ids: Sequence[str], now: datetime) -> list[int]:
    """The runs of a batch's sources, started in one write (one commit, not one each)."""
    return [unit.start_run(sid, now) for sid in source_ids]


def _as_failure(source: Source, exc: BaseException, now: datetime) -> Collected:
    """Any error of a run as its failure (or budget) outcome, in one line."""
    if isinstance(exc, TimeoutError):
        return _failure(source, TidingsError(f"run took longer than {RUN_TIMEOUT_S:.0f} s"),
                        now)
    if isinstance(exc, TidingsError):
        return _failure(source, exc, now)
    log.error("collecting %s failed unexpectedly", source.id, exc_info=exc)
    return _failure(source, TidingsError(f"internal error: {type(exc).__name__}: {exc}"), now)


async def conclude(env: PipelineEnv, source: Source, run_id: int, now: datetime,
                    planned: Listing | BaseException, raws: Sequence[RawResponse]) -> RunCounts:
    """Store a run's outcome: its listing whole, or its failure with what it fetched."""
    if isinstance(planned, Listing):
        try:
            done = await env.writer(_finish, source, run_id, planned, now, env.clock())
        except Exception as exc:  # the batch could not be stored: a failed run after all
            planned = exc
        else:
            return done.counts
    failed = _as_failure(source, planned, now)
    return (await env.writer(_record_failure, source, run_id, failed, raws, env.clock())).counts


async def collect_source(env: PipelineEnv, source: Source) -> RunCounts:
    """Run ``source`` once and record the run; never raises for the source's own faults."""
    now = env.clock()
    run_id = await env.writer(begin_run, source.id, now)
    raws: list[RawResponse] = []
    planned: Listing | BaseException
    try:
        async with asyncio.timeout(RUN_TIMEOUT_S):
            planned = await _read(env, source, now, raws)
    except Exception as exc:  # a reader bug must not take the round down either
        planned = exc
    return await conclude(env, source, run_id, now, planned, raws)
