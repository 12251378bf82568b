"""Sources read together: one call of a batch reader for a group, each stored as its own run.

A paid search can ask for 24 accounts at once, and a list answer can serve
every source of a time window; a reader says which sources may go together
(``BatchReader.batch_key``). The round and the scheduler group what is due by
that key (:func:`groups`) and run each group here: one ``start_run`` per source,
one ``read_batch`` call for all, then every source's answer is planned and
stored exactly as a lone run's is - its own run row, cursor, counts and, when
its part failed (or the whole call did), its own failure or budget outcome.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import NamedTuple

from tidings.errors import TidingsError
from tidings.model import RunCounts, Source
from tidings.pipeline.collect import (
    RUN_TIMEOUT_S,
    begin_runs,
    collect_source,
    conclude,
)
from tidings.pipeline.config import parse_config
from tidings.pipeline.detail import detail_step
from tidings.pipeline.env import PipelineEnv
from tidings.pipeline.listing import remembered
from tidings.pipeline.reading import Listing, SourceRules, plan_read
from tidings.readers import get_reader
from tidings.readers.base import BatchReader, ReadContext, ReadResult

#: what sources share to be read in one call: their kind and the reader's batch key
BatchKey = tuple[str, str]


class Group(NamedTuple):
    """Sources read in one go: ``key`` None for a source read alone (``collect_source``)."""

    key: BatchKey | None
    sources: list[Source]


def _batching(source: Source) -> BatchReader | None:
    try:
        reader = get_reader(source.kind)
    except TidingsError:  # no reader (an external source): its run says so, alone
        return None
    return reader if isinstance(reader, BatchReader) else None


def _key(source: Source) -> tuple[BatchKey, BatchReader] | None:
    """The group a source is read with and its reader, or None when it is read alone.
    Only the config is needed here, not the compiled entry rules."""
    reader = _batching(source)
    if reader is None:
        return None
    try:
        key = reader.batch_key(source, parse_config(source.kind, source.config))
    except TidingsError:  # a config that no longer validates fails its own run, alone
        return None
    return None if key is None else ((source.kind, key), reader)


def groups(sources: Sequence[Source]) -> list[Group]:
    """``sources`` in the groups they are read in: those sharing a batch key together
    (stable order by source id, so adding one source only changes the groups after
    it; at most the reader's ``max_batch`` each), every other source alone."""
    batched: dict[BatchKey, tuple[BatchReader, list[Source]]] = {}
    out: list[Group] = []
    for source in sources:
        found = _key(source)
        if found is None:
            out.append(Group(None, [source]))
        else:
            key, reader = found
            batched.setdefault(key, (reader, []))[1].append(source)
    for key, (reader, members) in batched.items():
        members.sort(key=lambda s: s.id)
        size = max(1, reader.max_batch)
        out.extend(Group(key, members[i:i + size]) for i in range(0, len(members), size))
    return out


async def collect_group(env: PipelineEnv, group: Group) -> dict[str, RunCounts]:
    """Run a group once (a lone source through ``collect_source``); never raises for the
    sources' own faults."""
    if group.key is None:
        (source,) = group.sources
        return {source.id: await collect_source(env, source)}
    return await collect_batch(env, group.sources)


async def collect_batch(env: PipelineEnv, sources: Sequence[Source]) -> dict[str, RunCounts]:
    now = env.clock()
    reader = get_reader(sources[0].kind)
    assert isinstance(reader, BatchReader)
    counts: dict[str, RunCounts] = {}
    ready: list[tuple[Source, SourceRules, ReadContext, int]] = []
    run_ids = await env.writer(begin_runs, [s.id for s in sources], now)
    for source, run_id in zip(sources, run_ids, strict=True):
        try:
            rules = SourceRules.of(source, env.filters)
        except TidingsError as exc:  # its config no longer validates: it fails alone
            counts[source.id] = await conclude(env, source, run_id, now, exc, ())
            continue
        ctx = rules.context(source, env.fetcher, now, env.offload, env.paid)
        ready.append((source, rules, ctx, run_id))
    # each source's run (the shared call, then its own planning and detail pages) gets
    # the time a lone run gets, so a batched source can hang no longer than a lone one
    deadline = asyncio.get_running_loop().time() + RUN_TIMEOUT_S
    answers = await _read_batch(reader, [ctx for _, _, ctx, _ in ready], deadline)
    done = await asyncio.gather(*(_one(env, source, rules, ctx, run_id, answer, deadline)
                                  for (source, rules, ctx, run_id), answer
                                  in zip(ready, answers, strict=True)))
    counts.update((s.id, c) for (s, _, _, _), c in zip(ready, done, strict=True))
    return counts


async def _read_batch(reader: BatchReader, contexts: Sequence[ReadContext], deadline: float
                      ) -> Sequence[ReadResult | BaseException]:
    """One answer per context: the reader's, or the whole call's error for each."""
    if not contexts:
        return []
    try:
        async with asyncio.timeout_at(deadline):
            answers = await reader.read_batch(contexts)
        if len(answers) != len(contexts):
            raise RuntimeError(f"{type(reader).__name__}.read_batch answered "
                               f"{len(answers)} of {len(contexts)} sources")
    except Exception as exc:  # the whole call failed: so did every source's run
        return [exc] * len(contexts)
    return answers


async def _one(env: PipelineEnv, source: Source, rules: SourceRules, ctx: ReadContext,
               run_id: int, answer: ReadResult | BaseException, deadline: float
               ) -> RunCounts:
    """One source's part of a batch, planned and stored as its own run."""
    if isinstance(answer, BaseException):
        return await conclude(env, source, run_id, ctx.now, answer, ())
    planned: Listing | BaseException
    try:
        async with asyncio.timeout_at(deadline):
            planned = await plan_read(env.settings, source, rules, ctx, answer,
                                      listed=remembered(source.cursor),
                                      detail=detail_step(env, source, rules))
    except Exception as exc:  # stored as this source's failure
        planned = exc
    return await conclude(env, source, run_id, ctx.now, planned, answer.raw)
