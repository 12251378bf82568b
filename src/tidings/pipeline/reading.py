"""The one reading path: a source's response turned into the batch that would be stored.

Collection, ``tidings doctor`` and re-parsing all need the same stages between a
reader's answer and storage - the entry rules (rewrites and filters), the batch
limits of a first and a later run, the identity mode (degraded when GUIDs are
bad), the identity keys of the whole batch and the cleaning of each entry - and
all three get them here, so a rule changes in one place and doctor shows exactly
what collection does. Nothing here writes: collection stores a :class:`Listing`,
doctor reports it, re-parsing upserts its entries.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from tidings.identity import batch_keys, choose_identity_mode
from tidings.model import ItemData, RawResponse, Source
from tidings.net import Fetcher
from tidings.pipeline import limits
from tidings.pipeline.config import CommonConfig, Filters, parse_config
from tidings.pipeline.filters import EntryRules, compile_rules, judge, limit_batch, summary_only
from tidings.pipeline.upsert import Prepared, prepare
from tidings.readers import get_reader, kind_of
from tidings.readers.base import (
    NoPaidCalls,
    Offload,
    PaidCalls,
    ReadContext,
    Reader,
    ReadResult,
    inline,
)
from tidings.settings import Settings


class Fate(StrEnum):
    """What became of a parsed entry before storage decided anything."""

    FILTERED = "filtered"  # an entry rule dropped it (R-SCHED-9)
    # beyond the run's batch limit: the source's config ``limits``, else the settings'
    # initial_backfill_limit / _months (first run) or max_items_per_run
    OVER_LIMIT = "over limit"
    BATCH = "batch"  # goes to upsert


@dataclass(frozen=True, slots=True)
class Entry:
    """One parsed entry and its fate; entries of the batch carry their identity key,
    the URL stored with it, and the entry as it goes to storage (rewritten, with no
    body for a summary-only source)."""

    item: ItemData  # as the reader parsed it
    fate: Fate
    key: str | None = None
    url: str | None = None
    stored: ItemData | None = None


@dataclass(frozen=True, slots=True)
class Listing:
    """One read of a source, planned for storage.

    ``source`` carries the identity mode this read chose; ``prepared`` is the
    batch keyed and cleaned (repeated keys dropped), in feed order.
    """

    source: Source
    result: ReadResult
    entries: tuple[Entry, ...] = ()
    prepared: tuple[Prepared, ...] = ()
    filtered: int = 0

    @property
    def batch_size(self) -> int:
        return sum(1 for e in self.entries if e.fate is Fate.BATCH)


@dataclass(frozen=True, slots=True)
class SourceRules:
    """A source's validated config, compiled entry rules and batch limits."""

    reader: Reader
    config: CommonConfig
    rules: EntryRules

    @classmethod
    def of(cls, source: Source, global_filters: Filters | None = None) -> SourceRules:
        """ConfigError naming the key when the stored config no longer validates
        (R-SCHED-2: the run fails with that reason)."""
        config = parse_config(source.kind, source.config)
        return cls(get_reader(source.kind), config, compile_rules(config, global_filters))

    def context(self, source: Source, fetcher: Fetcher, now: datetime,
                offload: Offload = inline, paid: PaidCalls | None = None) -> ReadContext:
        """What the source's reader is handed for one read."""
        return ReadContext(source, fetcher, now, offload, self.config,
                           self.config.request_options(), paid or NoPaidCalls())


@dataclass(frozen=True, slots=True)
class Selection:
    """The entries a read keeps, before they are keyed: ``judged`` is each parsed entry
    rewritten (None: filtered), ``batch`` what goes on, ``chosen[i]`` the position in
    ``judged`` of ``batch[i]``."""

    judged: tuple[ItemData | None, ...]
    batch: tuple[ItemData, ...]
    chosen: tuple[int, ...]

    @property
    def filtered(self) -> int:
        return sum(1 for j in self.judged if j is None)


def _later_limit(source: Source, settings: Settings, found: int) -> int:
    """A later run's batch limit; a kind may be excepted (SPEC §5): one whose watermark
    moves past everything a search returned would never see what a limit cut off."""
    return settings.max_items_per_run if kind_of(source.kind).batch_limited else found


def select(settings: Settings, source: Source, rules: SourceRules, result: ReadResult,
           now: datetime, *, limited: bool = True) -> Selection:
    """Entry rules, then the batch limits of a first or a later run (``limited``)."""
    judged = judge(result.items, rules.rules, now)
    kept = [item for item in judged if item is not None]
    batch = kept
    if limited:
        own, s = rules.config.limits, settings
        batch = limit_batch(
            kept, first_run=source.last_success_at is None, now=now,
            first_limit=own.first or s.initial_backfill_limit,
            first_months=own.first_months or s.initial_backfill_months,
            later_limit=own.later or _later_limit(source, s, len(kept)),
        )
    position = {id(item): n for n, item in enumerate(judged) if item is not None}
    return Selection(tuple(judged), tuple(batch), tuple(position[id(b)] for b in batch))


def finish(settings: Settings, source: Source, rules: SourceRules, result: ReadResult,
           chosen: Selection, now: datetime, *, listed: Mapping[str, str] | None = None,
           clean: bool = True) -> Listing:
    """Identity mode, batch keys and cleaning of the selected entries."""
    mode = choose_identity_mode([it.guid for it in result.items],
                                [it.url for it in result.items], source.identity_mode)
    keyed_source = replace(source, identity_mode=mode)
    batch = list(chosen.batch)
    keys = batch_keys(source.id, batch, mode, settings.tracking_params)
    stored = summary_only(rules.config.summary_only, batch)
    prepared = prepare(keyed_source, stored, now, settings.tracking_params, listed=listed,
                       keys=keys) if clean else []
    where = {n: (k, out) for n, k, out in zip(chosen.chosen, keys, stored, strict=True)}
    entries = []
    for n, (item, rewritten) in enumerate(zip(result.items, chosen.judged, strict=True)):
        if rewritten is None:
            entries.append(Entry(item, Fate.FILTERED))
        elif n not in where:
            entries.append(Entry(item, Fate.OVER_LIMIT))
        else:
            key, entry = where[n]
            entries.append(Entry(item, Fate.BATCH, key.key, key.url, entry))
    return Listing(keyed_source, result, tuple(entries), tuple(prepared), chosen.filtered)


def plan_listing(
    settings: Settings, source: Source, rules: SourceRules, result: ReadResult,
    now: datetime, *, listed: Mapping[str, str] | None = None, limited: bool = True,
    clean: bool = True,
) -> Listing:
    """Filters, limits, identity and cleaning for one read (pure CPU: a round's turn).

    ``listed`` is the source's listing memory (entries listed unchanged are keyed
    but not cleaned; see ``listing``). ``limited`` False skips the batch limits and
    ``clean`` False the cleaning (re-parsing an archive keys every entry of every
    response, and cleans only those it stores).
    """
    chosen = select(settings, source, rules, result, now, limited=limited)
    return finish(settings, source, rules, result, chosen, now, listed=listed, clean=clean)


async def read_source(
    settings: Settings, source: Source, rules: SourceRules, ctx: ReadContext, *,
    listed: Mapping[str, str] | None = None, fetched: list[RawResponse] | None = None,
    detail: Callable[[list[ItemData]], Awaitable[list[ItemData]]] | None = None,
) -> Listing:
    """Fetch ``source`` through its reader and plan the batch (``ctx.offload`` runs
    the CPU part: a round makes it take turns with the other sources). What was
    fetched is added to ``fetched`` before planning, so a failure after the fetch
    still leaves the response for the raw archive. ``detail`` fills the selected
    entries from their own pages when the source has a detail rule (R-WEB-5)."""
    result = await rules.reader.read(ctx)
    if fetched is not None:
        fetched.extend(result.raw)
    return await plan_read(settings, source, rules, ctx, result, listed=listed, detail=detail)


async def plan_read(
    settings: Settings, source: Source, rules: SourceRules, ctx: ReadContext,
    result: ReadResult, *, listed: Mapping[str, str] | None = None,
    detail: Callable[[list[ItemData]], Awaitable[list[ItemData]]] | None = None,
) -> Listing:
    """A reader's answer planned for storage (what :func:`read_source` does after the
    read; a batch read plans each source's answer with it). ``detail`` is given only
    for a source whose rule fetches pages (``detail.detail_step`` decides)."""
    if result.not_modified:
        return Listing(source, result)
    items, warning = limits.bound_items(result.items)
    if warning is not None:
        result = replace(result, items=items, warnings=(*result.warnings, warning))
    if detail is None:
        return await ctx.offload(plan_listing, settings, source, rules, result, ctx.now,
                                 listed=listed)
    chosen = await ctx.offload(select, settings, source, rules, result, ctx.now)
    chosen = replace(chosen, batch=tuple(await detail(list(chosen.batch))))
    return await ctx.offload(finish, settings, source, rules, result, chosen, ctx.now,
                             listed=listed)
