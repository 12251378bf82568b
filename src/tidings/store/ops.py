"""What the scheduler and the operations reports ask of storage (R-SCHED-5, R-OPS).

Part of the :class:`tidings.store.base.Storage` protocol, kept in its own
module because these are bulk figures over every source at once (one query
per figure, not one per source: 100,000 sources must stay cheap) rather than
the per-object reads and writes of the core protocol. Semantics as in
``base``: aware UTC datetimes in and out, atomic calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from tidings.model import FetchRun


@dataclass(frozen=True, slots=True)
class RunTotals:
    """One source's fetch runs summed over a window."""

    source_id: str
    runs: int
    failed: int
    found: int
    filtered: int
    created: int


@dataclass(frozen=True, slots=True)
class Diversity:
    """Items a source owns in a window and how many distinct titles they carry."""

    source_id: str
    items: int
    distinct_titles: int


@dataclass(frozen=True, slots=True)
class ReprintEdge:
    """``repeater`` carried ``items`` stories that ``original`` had first.

    ``via`` is ``"title"`` when the repeater owns its own copy (same title
    fingerprint, another URL) and ``"listing"`` when it listed the original
    item itself (a discovery).
    """

    original: str
    repeater: str
    via: str
    items: int


class OpsReads(Protocol):
    def new_item_counts(self, now: datetime, days: int) -> dict[str, tuple[int, ...]]:
        """Non-backfill items each source created per day, ``days`` buckets ending at ``now``.

        Bucket ``i`` (oldest first) holds items discovered in
        ``[now - (days - i) days, now - (days - i - 1) days)``. Sources with
        no items in the window are absent.
        """
        ...

    def lease_holders(self) -> list[str]:
        """The distinct holders named by source leases (see ``claim_due_sources``)."""
        ...

    def run_totals(self, since: datetime) -> dict[str, RunTotals]:
        """Finished fetch runs per source that started at or after ``since``."""
        ...

    def last_runs(self) -> dict[str, FetchRun]:
        """The latest fetch run of every source that has one."""
        ...

    def diversity(self, since: datetime) -> dict[str, Diversity]:
        """Items owned per source discovered since ``since``, and their distinct title prints."""
        ...

    def reprint_edges(self, since: datetime) -> list[ReprintEdge]:
        """Who repeats whom since ``since`` (R-OPS-2).

        A story is "had first" by the source of the earliest item of its title
        fingerprint group; a source repeats it by owning another item with that
        fingerprint or by listing the original item itself (a discovery).
        """
        ...

    def new_item_ids(self, after_id: int, limit: int) -> list[int]:
        """Ids above ``after_id`` of non-backfill items, ascending (webhook delivery)."""
        ...

    def max_item_id(self) -> int:
        """The highest item id so far, 0 for an empty archive."""
        ...

    def get_mark(self, name: str) -> str | None:
        """A named scheduler bookmark (webhook watermark, last weekly report)."""
        ...


class OpsWrites(Protocol):
    def swap_mark(self, name: str, expected: str | None, value: str) -> bool:
        """Set the bookmark only if it still holds ``expected``; True if this call won.

        Two runners on one database use this to do a once-only job once.
        """
        ...

    def set_intervals(self, intervals: Mapping[str, int]) -> int:
        """Set many sources' ``interval_min`` in one transaction; returns rows changed."""
        ...

    def release_sources(
        self, source_ids: Sequence[str], now: datetime, due_at: datetime | None = None,
    ) -> int:
        """Give up in-flight work: runs still ``running`` for these sources become
        ``abandoned`` (finished at ``now``) and the sources are due again at
        ``due_at`` (default ``now``: the lease is lifted), in one transaction.
        Returns how many runs were abandoned."""
        ...

    def abandon_stale_runs(self, started_before: datetime, now: datetime,
                           reason: str = "") -> int:
        """Runs still ``running`` that started before ``started_before`` belong to a
        dead process (no run outlives its source's lease): mark them abandoned, with
        ``reason`` as their error."""
        ...

    def take_over_leases(self, holder: str, now: datetime, reason: str) -> int:
        """``holder`` is known to be dead: its sources whose lease it still holds are due
        at ``now``, their ``running`` runs become ``abandoned`` with ``reason`` as the
        error, and its lease records go. Returns how many sources were freed."""
        ...


class OpsUnit(OpsReads, OpsWrites, Protocol):
    """Both halves, for a step that reads a bookmark or the lease holders and swaps or
    takes them over in the same unit."""
