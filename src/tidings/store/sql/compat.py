"""Client APIs (Google Reader, Fever, WebSub): statements and converters both backends share."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tidings.model import Visibility
from tidings.store.base import ItemQuery
from tidings.store.compat import SavedSearch, UnreadCount, WebSubLease
from tidings.store.sql._base import from_us, opt_dt
from tidings.store.sql.reading import timeline_statement

_SEARCH = "id, name, query, created_at"


_LEASE = ("source_id, hub, topic, secret, verify_token, state, requested_at, lease_until, "
          "last_push_at, retry_at, error")


def _lease(r: Sequence[Any]) -> WebSubLease:
    return WebSubLease(source_id=r[0], hub=r[1], topic=r[2], secret=r[3], verify_token=r[4],
                       state=r[5], requested_at=from_us(r[6]), lease_until=opt_dt(r[7]),
                       last_push_at=opt_dt(r[8]), retry_at=opt_dt(r[9]), error=r[10])


def _saved(row: Sequence[Any]) -> SavedSearch:
    return SavedSearch(id=row[0], name=row[1], query=row[2], created_at=from_us(row[3]))


#: the API token a Fever key names (both backends)
BY_FEVER_KEY = ("SELECT t.id, t.user_id, t.name, t.digest, t.created_at, t.last_used_at "
               "FROM fever_keys f JOIN api_tokens t ON t.id = f.token_id WHERE f.key = ?")


def refs_statement(query: ItemQuery) -> tuple[str, list[Any]]:
    """``item_refs``'s statement and parameters (both backends)."""
    return timeline_statement("i.id, i.sort_time", query, "items i")


def unread_statement(editorial_only: bool) -> tuple[str, list[Any]]:
    """``unread_counts``'s statement and parameters (both backends)."""
    hidden = ("AND i.source_id NOT IN (SELECT id FROM sources WHERE visibility = ?)"
              if editorial_only else "")
    return ("SELECT i.source_id, count(*), max(i.sort_time) FROM items i "  # noqa: S608
            f"WHERE i.read = 0 {hidden} GROUP BY i.source_id ORDER BY i.source_id",
            [Visibility.ISOLATED.value] if editorial_only else [])


def refs_from_rows(rows: Sequence[Sequence[Any]]) -> list[tuple[int, datetime]]:
    return [(r[0], from_us(r[1])) for r in rows]


def unread_from_rows(rows: Sequence[Sequence[Any]]) -> list[UnreadCount]:
    return [UnreadCount(r[0], int(r[1]), opt_dt(r[2])) for r in rows]
