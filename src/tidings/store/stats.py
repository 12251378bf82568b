"""The figures storage computes for the sources listing, the health page and
``tidings stats``.

Part of the :class:`tidings.store.base.Storage` protocol, in its own module as
``ops`` is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from tidings.model import FetchRun


@dataclass(frozen=True, slots=True)
class SourceStats:
    """Per-source figures for the sources listing and the health page."""

    source_id: str
    items_total: int
    items_per_day: tuple[int, ...]  # last 7 days, oldest first
    last_run: FetchRun | None


@dataclass(frozen=True, slots=True)
class ArchiveStats:
    sources_by_health: Mapping[str, int]
    items: int
    items_backfill: int
    items_unread: int
    raw_responses: int
    last_round_started: datetime | None
    last_round_sources: int
    last_round_ok: int
    last_round_new_items: int
    oldest_success_at: datetime | None


class StatsReads(Protocol):
    def source_stats(self, source_id: str, now: datetime) -> SourceStats: ...
    def archive_stats(self) -> ArchiveStats: ...
