"""What the reader's navigation asks of storage: unread counts per source for the
sidebar, and "mark this source (or folder) read" in a way that can be undone.

Part of the :class:`tidings.store.base.Storage` protocol, in its own module as
``compat`` is. The counts are one statement over two partial indexes (unread
items by source, starred items by source), so the sidebar costs the same at
200,000 items as at 2,000 when most of the archive is read (docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


@dataclass(frozen=True, slots=True)
class SourceCounts:
    """One source's figures in the sidebar (sources with none of them are left out)."""

    source_id: str
    unread: int
    today: int  # unread, sorted at or after ``since``, and not backfill (what Today lists)
    starred: int


class NavigationReads(Protocol):
    def source_counts(self, since: datetime) -> list[SourceCounts]:
        """Unread, unread-since and starred items per source, by source id; one query."""
        ...


class NavigationWrites(Protocol):
    def read_sources(self, source_ids: Sequence[str]) -> list[int]:
        """Mark every unread item of these sources read; returns the ids it changed
        (what an undo marks unread again)."""
        ...
