"""Id lists, unread counts, read-until, saved searches, Fever keys and WebSub
subscriptions (``tidings.store.compat``): the statements of ``sqlite._compat``."""

from __future__ import annotations

from datetime import datetime

from tidings.errors import ConfigError, NotFoundError
from tidings.store.access import ApiToken
from tidings.store.base import ItemQuery
from tidings.store.compat import SavedSearch, StreamEntry, UnreadCount, WebSubLease
from tidings.store.postgres._db import Access
from tidings.store.sql._base import opt_us, to_us
from tidings.store.sql.access import _token
from tidings.store.sql.compat import (
    _LEASE,
    _SEARCH,
    BY_FEVER_KEY,
    _lease,
    _saved,
    refs_from_rows,
    refs_statement,
    unread_from_rows,
    unread_statement,
)
from tidings.store.sql.reading import timeline_filters, timeline_statement

#: ``sqlite._compat``'s stream columns: the text quoted as JSON by the server
#: (``to_json``; a missing text is JSON ``null`` as SQLite's ``json_quote`` gives)
_ENTRY_COLUMNS = (
    "i.id, i.source_id, i.title, i.url, i.author, i.sort_time, i.discovered_at, "
    "i.updated_at, i.read, i.starred, "
    "convert_to(coalesce(to_json(CASE WHEN i.body IS NULL OR i.body = '' THEN i.summary "
    "ELSE i.body END)::text, 'null'), 'UTF8')"
)

#: every column of ``websub`` but the key, replaced by a new subscription
_LEASE_UPDATE = ", ".join(f"{c.strip()} = excluded.{c.strip()}"
                          for c in _LEASE.split(",")[1:])


class CompatMixin(Access):

    def item_refs(self, query: ItemQuery) -> list[tuple[int, datetime]]:
        with self._read() as conn:
            return refs_from_rows(conn.execute(*refs_statement(query)).fetchall())

    def stream_entries(self, query: ItemQuery) -> list[StreamEntry]:
        with self._read() as conn:
            rows = conn.execute(*timeline_statement(_ENTRY_COLUMNS, query, "items i")).fetchall()
        return [StreamEntry._make((*r[:10], bytes(r[10]))) for r in rows]

    def unread_counts(self, editorial_only: bool) -> list[UnreadCount]:
        with self._read() as conn:
            return unread_from_rows(conn.execute(*unread_statement(editorial_only)).fetchall())

    def set_read_where(self, query: ItemQuery, read: bool) -> int:
        where, params = timeline_filters(query)
        where.append("i.read != ?")
        with self._write() as conn:
            return int(conn.execute(
                f"UPDATE items i SET read = ? WHERE {' AND '.join(where)}",  # noqa: S608
                (int(read), *params, int(read))).rowcount)

    def list_saved_searches(self) -> list[SavedSearch]:
        with self._read() as conn:
            rows = conn.execute(f"SELECT {_SEARCH} FROM saved_searches "  # noqa: S608
                                "ORDER BY lower(name COLLATE \"C\"), id").fetchall()
        return [_saved(r) for r in rows]

    def get_saved_search(self, search_id: int) -> SavedSearch:
        with self._read() as conn:
            row = conn.execute(f"SELECT {_SEARCH} FROM saved_searches WHERE id = ?",  # noqa: S608
                               (search_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no saved search {search_id}")
        return _saved(row)

    def add_saved_search(self, name: str, query: str, created_at: datetime) -> SavedSearch:
        """The unique index on the name's lower case decides between two adds of one
        name (SQLite's ``COLLATE NOCASE``: ASCII letters only)."""
        with self._write() as conn:
            row = conn.execute(
                "INSERT INTO saved_searches (name, query, created_at) VALUES (?, ?, ?) "  # noqa: S608
                f"ON CONFLICT DO NOTHING RETURNING {_SEARCH}",
                (name, query, to_us(created_at))).fetchone()
        if row is None:
            raise ConfigError(f"a saved search named {name!r} exists already")
        return _saved(row)

    def delete_saved_search(self, search_id: int) -> bool:
        with self._write() as conn:
            return conn.execute("DELETE FROM saved_searches WHERE id = ?",
                                (search_id,)).rowcount > 0

    def find_token_by_fever_key(self, key: str) -> ApiToken | None:
        with self._read() as conn:
            row = conn.execute(BY_FEVER_KEY, (key,)).fetchone()
        return None if row is None else _token(row)

    def set_fever_key(self, token_id: str, key: str) -> None:
        """As SQLite's INSERT OR REPLACE: the key leaves any other token that held it."""
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM api_tokens WHERE id = ?", (token_id,)).fetchone() \
                    is None:
                raise NotFoundError(f"no API token {token_id!r}")
            conn.execute("DELETE FROM fever_keys WHERE key = ? AND token_id != ?",
                         (key, token_id))
            conn.execute("INSERT INTO fever_keys (token_id, key) VALUES (?, ?) "
                         "ON CONFLICT (token_id) DO UPDATE SET key = excluded.key",
                         (token_id, key))

    def list_websub(self) -> list[WebSubLease]:
        with self._read() as conn:
            rows = conn.execute(f"SELECT {_LEASE} FROM websub ORDER BY source_id"  # noqa: S608
                                ).fetchall()
        return [_lease(r) for r in rows]

    def get_websub(self, source_id: str) -> WebSubLease | None:
        with self._read() as conn:
            row = conn.execute(f"SELECT {_LEASE} FROM websub WHERE source_id = ?",  # noqa: S608
                               (source_id,)).fetchone()
        return None if row is None else _lease(row)

    def put_websub(self, lease: WebSubLease) -> None:
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM sources WHERE id = ?", (lease.source_id,)
                            ).fetchone() is None:
                raise NotFoundError(f"source {lease.source_id!r} not found")
            conn.execute(
                f"INSERT INTO websub ({_LEASE}) "  # noqa: S608
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                f"ON CONFLICT (source_id) DO UPDATE SET {_LEASE_UPDATE}",
                (lease.source_id, lease.hub, lease.topic, lease.secret, lease.verify_token,
                 lease.state, to_us(lease.requested_at), opt_us(lease.lease_until),
                 opt_us(lease.last_push_at), opt_us(lease.retry_at), lease.error))

    def delete_websub(self, source_id: str) -> bool:
        with self._write() as conn:
            return conn.execute("DELETE FROM websub WHERE source_id = ?",
                                (source_id,)).rowcount > 0
