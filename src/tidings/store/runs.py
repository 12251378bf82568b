"""What a collection round asks of storage about fetching: claiming due sources and
recording each attempt as a fetch run.

Part of the :class:`tidings.store.base.Storage` protocol, in its own module as
``ops`` is; the claim sits with the runs because every caller that claims
sources goes on to start and finish their runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from tidings.model import FetchRun, RunCounts, Source


class RunReads(Protocol):
    def list_runs(self, source_id: str | None = None, limit: int = 20) -> list[FetchRun]: ...


class RunWrites(Protocol):
    def claim_due_sources(
        self, now: datetime, limit: int, lease_until: datetime,
        only: Sequence[str] | None = None, holder: str = "",
    ) -> list[Source]:
        """Atomically pick sources due at ``now`` (or those in ``only``, due or not).

        A non-empty ``holder`` names the claiming process in a lease record, so that
        once that process is known dead ``take_over_leases`` frees its sources at once.

        Longest-overdue first, higher priority first on ties and when more are due
        than ``limit``; muted sources and ``external`` ones (nothing to fetch) are
        skipped. Each picked source's ``next_fetch_at`` is set to ``lease_until`` in
        the same transaction, so two runners can never pick one source twice
        (R-SCHED-1).
        """
        ...

    def start_run(self, source_id: str, started_at: datetime) -> int: ...
    def start_runs(self, runs: Sequence[tuple[str, datetime]]) -> list[int]:
        """Start runs (source id, start time); their ids in order. An unknown source
        fails the whole call (NotFoundError)."""
        ...

    def finish_run(self, run_id: int, finished_at: datetime, counts: RunCounts) -> None: ...
