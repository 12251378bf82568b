"""Sources: the scheduler's claim on them (the rest is the core's ``SourcesCore``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from tidings.model import Source
from tidings.store.sql._base import marks, to_us
from tidings.store.sql.sources import _COLUMNS, SourcesCore, claim_filter, claimed, source_from_row
from tidings.store.sqlite._db import Access


class SourcesMixin(SourcesCore, Access):

    def claim_due_sources(
        self, now: datetime, limit: int, lease_until: datetime,
        only: Sequence[str] | None = None, holder: str = "",
    ) -> list[Source]:
        if limit <= 0:
            return []
        where, params = claim_filter(now, lease_until, only)
        with self._write() as conn:
            # never fetched counts as the most overdue of all
            picked = [source_from_row(r) for r in conn.execute(
                f"SELECT {_COLUMNS} FROM sources WHERE muted_reason IS NULL AND {where} "  # noqa: S608
                "ORDER BY priority DESC, coalesce(next_fetch_at, -1) ASC, id LIMIT ?",
                (*params, limit))]
            if not picked:
                return []
            ids = [src.id for src in picked]
            conn.execute(f"UPDATE sources SET next_fetch_at = ? WHERE id IN ({marks(len(ids))})",  # noqa: S608
                         (to_us(lease_until), *ids))
            if holder:
                conn.executemany(
                    "INSERT OR REPLACE INTO source_leases (source_id, holder, until) "
                    "VALUES (?, ?, ?)", [(i, holder, to_us(lease_until)) for i in ids])
        return claimed(picked, lease_until)
