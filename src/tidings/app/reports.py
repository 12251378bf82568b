"""``Tidings.reports``: figures about the whole archive - counts, source health, diversity.

Each is computed from storage when asked (a few bulk queries), never kept.
"""

from __future__ import annotations

from tidings.app.core import Core
from tidings.schedule import ops
from tidings.schedule.ops import DiversityReport, HealthReport
from tidings.store.base import ArchiveStats


class Reports:
    """See the module docstring."""

    def __init__(self, core: Core) -> None:
        self._core = core
        self._store = core.store

    def stats(self) -> ArchiveStats:
        """Whole-archive counts (sources, items, unread, raw responses, size)."""
        return self._store.archive_stats()

    def health(self) -> HealthReport:
        """The weekly source-health report, now (``.text()`` / ``.as_json()``)."""
        return ops.health_report(self._store, self._core.clock())

    def diversity(self, days: int = 30) -> DiversityReport:
        """Distinct titles per source, the reprint graph, original vs second-hand."""
        return ops.diversity_report(self._store, self._core.clock(), days)
