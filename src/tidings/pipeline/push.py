"""Content a WebSub hub pushed (R-RSS-8): stored through the same path as a fetch.

A pushed body is a feed document like the one a fetch returns, so it goes
through the source's reader (``parse_raw``), its entry rules and batch limits,
identity and cleaning (``plan_listing``), and ``apply_prepared`` in one write
step with its raw copy, exactly as a collected listing does. A source whose
hub pushes is polled only at a safety interval: the next fetch moves that far
out with every push.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Protocol

from tidings.model import RawResponse, Source
from tidings.pipeline.env import PipelineEnv
from tidings.pipeline.reading import Listing, SourceRules, plan_listing
from tidings.pipeline.upsert import UpsertUnit, apply_prepared
from tidings.store.archive import RawWrites
from tidings.store.base import SourceUpdate
from tidings.store.sources import SourceWrites

#: how long a source whose hub pushes waits between polls (a safety net)
SAFETY_INTERVAL = timedelta(hours=6)


class PushUnit(UpsertUnit, RawWrites, SourceWrites, Protocol):
    """What storing a push asks of storage: its raw copy, its items, the source's next fetch."""


@dataclass(frozen=True, slots=True)
class Pushed:
    found: int
    created: int
    revised: int


def plan_push(env: PipelineEnv, source: Source, body: bytes, content_type: str,
              now: datetime) -> Listing:
    """Parse and plan a pushed document (TidingsError when it is not a feed)."""
    rules = SourceRules.of(source, env.filters)
    raw = RawResponse(url=source.url, final_url=source.url, fetched_at=now, status=200,
                      headers={"content-type": content_type, "x-tidings-pushed": "websub"},
                      body=body, source_id=source.id)
    result = replace(rules.reader.parse_raw(source, raw), raw=(raw,))
    return plan_listing(env.settings, source, rules, result, now)


def store_push(unit: PushUnit, source: Source, listing: Listing, now: datetime) -> Pushed:
    """One write step: the raw copy, the batch, and polling relaxed to the safety net."""
    for raw in listing.result.raw:
        unit.put_raw(raw)
    outcome = apply_prepared(unit, listing.source, listing.prepared, now)
    relaxed = now + max(SAFETY_INTERVAL, timedelta(minutes=source.interval_min))
    unit.update_source(source.id, SourceUpdate(next_fetch_at=relaxed, last_success_at=now))
    return Pushed(len(listing.result.items), outcome.created, outcome.revised)
