"""Sources: the scheduler's claim on them, ``FOR UPDATE SKIP LOCKED`` (the rest is the
core's ``SourcesCore``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from tidings.model import Source
from tidings.store.postgres._db import Access
from tidings.store.sql._base import to_us
from tidings.store.sql.sources import _COLUMNS, SourcesCore, claim_filter, claimed, source_from_row


class SourcesMixin(SourcesCore, Access):

    def claim_due_sources(
        self, now: datetime, limit: int, lease_until: datetime,
        only: Sequence[str] | None = None, holder: str = "",
    ) -> list[Source]:
        """As in SQLite, but the pick locks its rows and skips rows another claim holds
        (``FOR UPDATE SKIP LOCKED``): concurrent runners take disjoint sources
        without waiting for each other, and each lease record is written by the one
        claim that holds its source's row."""
        if limit <= 0:
            return []
        where, params = claim_filter(now, lease_until, only)
        with self._write() as conn:
            picked = [source_from_row(r) for r in conn.execute(
                f"SELECT {_COLUMNS} FROM sources WHERE muted_reason IS NULL AND {where} "  # noqa: S608
                "ORDER BY priority DESC, next_fetch_at ASC NULLS FIRST, id LIMIT ? "
                "FOR UPDATE SKIP LOCKED", (*params, limit)).fetchall()]
            if not picked:
                return []
            ids = [src.id for src in picked]
            conn.execute("UPDATE sources SET next_fetch_at = ? WHERE id = ANY(?)",
                         (to_us(lease_until), ids))
            if holder:
                conn.execute(
                    "INSERT INTO source_leases (source_id, holder, until) "
                    "SELECT id, ?, ? FROM unnest(?::text[]) AS ids(id) "
                    "ON CONFLICT (source_id) DO UPDATE "
                    "SET holder = excluded.holder, until = excluded.until",
                    (holder, to_us(lease_until), ids))
        return claimed(picked, lease_until)
