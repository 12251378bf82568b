"""``Tidings.reports``: figures about the whole archive - counts, source health, diversity.

Each is computed from storage when asked (a few bulk queries), never kept.
"""

from __future__ import annotations

from typing import Protocol

from tidings.app.core import Core
from tidings.schedule import ops
from tidings.schedule.ops import DiversityReport, HealthReport, ReportReads
from tidings.store.stats import ArchiveStats, StatsReads


class _Store(ReportReads, StatsReads, Protocol):
    """What the reports read: the operations figures and the archive's."""


class Reports:
    """See the module docstring."""

    def __init__(self, core: Core) -> None:
        self._core = core
        self._store: _Store = core.store

    def stats(self) -> ArchiveStats:
        """Whole-archive counts (sources, items, unread, raw responses, size)."""
        return self._store.archive_stats()

    def health(self) -> HealthReport:
        """The weekly source-health report, now (``.text()`` / ``.as_json()``)."""
        return ops.health_report(self._store, self._core.clock())

    def diversity(self, days: int = 30) -> DiversityReport:
        """Distinct titles per source, the reprint graph, original vs second-hand."""
        return ops.diversity_report(self._store, self._core.clock(), days)
