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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from tidings.identity import EntryKey, batch_keys, choose_identity_mode
from tidings.model import ItemData, RawResponse, Source
from tidings.pipeline.filters import EntryRules, compile_rules, judge, limit_batch, summary_only
from tidings.pipeline.upsert import Prepared, prepare
from tidings.readers import get_reader
from tidings.readers.base import ReadContext, Reader, ReadResult
from tidings.settings import Settings


class Fate(StrEnum):
    """What became of a parsed entry before storage decided anything."""

    FILTERED = "filtered"  # an entry rule dropped it (R-SCHED-9)
    OVER_LIMIT = "over limit"  # beyond the run's batch limit (first run: 30 / 12 months)
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
    """A source's validated config and compiled entry rules."""

    reader: Reader
    config: Mapping[str, Any]
    rules: EntryRules

    @classmethod
    def of(cls, source: Source) -> SourceRules:
        """ConfigError naming the key when the stored config no longer validates
        (R-SCHED-2: the run fails with that reason)."""
        reader = get_reader(source.kind)
        config = reader.validate_config(source.config)
        return cls(reader, config, compile_rules(config))


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
    judged = judge(result.items, rules.rules, now)
    kept = [item for item in judged if item is not None]
    batch = kept
    if limited:
        s = settings
        batch = limit_batch(
            kept, first_run=source.last_success_at is None, now=now,
            first_limit=s.initial_backfill_limit, first_months=s.initial_backfill_months,
            later_limit=s.max_items_per_run,
        )
    mode = choose_identity_mode([it.guid for it in result.items],
                                [it.url for it in result.items], source.identity_mode)
    keyed_source = replace(source, identity_mode=mode)
    keys = batch_keys(source.id, batch, mode, settings.tracking_params)
    stored = summary_only(rules.config, batch)
    prepared = prepare(keyed_source, stored, now, settings.tracking_params, listed=listed,
                       keys=keys) if clean else []
    entries = _fates(result.items, judged, batch, keys, stored)
    return Listing(keyed_source, result, entries, tuple(prepared), len(judged) - len(kept))


def _fates(parsed: Sequence[ItemData], judged: Sequence[ItemData | None],
           batch: Sequence[ItemData], keys: Sequence[EntryKey],
           stored: Sequence[ItemData]) -> tuple[Entry, ...]:
    """Each parsed entry's fate, in feed order."""
    of_batch = {id(item): (k, out) for item, k, out in zip(batch, keys, stored, strict=True)}
    out: list[Entry] = []
    for item, rewritten in zip(parsed, judged, strict=True):
        if rewritten is None:
            out.append(Entry(item, Fate.FILTERED))
        elif id(rewritten) not in of_batch:
            out.append(Entry(item, Fate.OVER_LIMIT))
        else:
            key, entry = of_batch[id(rewritten)]
            out.append(Entry(item, Fate.BATCH, key.key, key.url, entry))
    return tuple(out)


async def read_source(
    settings: Settings, source: Source, ctx: ReadContext, *,
    listed: Mapping[str, str] | None = None, fetched: list[RawResponse] | None = None,
    rules: SourceRules | None = None,
) -> Listing:
    """Fetch ``source`` through its reader and plan the batch (``ctx.offload`` runs
    the CPU part: a round makes it take turns with the other sources). What was
    fetched is added to ``fetched`` before planning, so a failure after the fetch
    still leaves the response for the raw archive. ``rules`` when the caller
    validated the config already."""
    rules = rules or SourceRules.of(source)
    result = await rules.reader.read(ctx)
    if fetched is not None:
        fetched.extend(result.raw)
    if result.not_modified:
        return Listing(source, result)
    return await ctx.offload(plan_listing, settings, source, rules, result, ctx.now,
                             listed=listed)
