"""Sources: PostgreSQL's order of the scheduler's pick (the ``sources_claim`` index's
``NULLS FIRST``) and its lease records in one statement (the rest is the core's
``SourcesCore``)."""

from __future__ import annotations

from tidings.store.postgres._db import Access
from tidings.store.sql._base import SqlConn
from tidings.store.sql.sources import SourcesCore


class SourcesMixin(SourcesCore, Access):

    _CLAIM_ORDER = "next_fetch_at ASC NULLS FIRST"

    def _lease(self, conn: SqlConn, ids: list[str], holder: str, until: int) -> None:
        conn.execute(
            "INSERT INTO source_leases (source_id, holder, until) "
            "SELECT id, ?, ? FROM unnest(?::text[]) AS ids(id) "
            "ON CONFLICT (source_id) DO UPDATE "
            "SET holder = excluded.holder, until = excluded.until", (holder, until, ids))
