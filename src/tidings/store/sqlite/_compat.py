"""Id lists, unread counts, read-until, saved searches and Fever keys (store.compat)."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from tidings.errors import ConfigError, NotFoundError
from tidings.store.base import ItemQuery
from tidings.store.compat import SavedSearch, StreamEntry, UnreadCount, WebSubLease
from tidings.store.sql._base import opt_us, to_us
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
from tidings.store.sql.users import _token
from tidings.store.sqlite._db import Access
from tidings.store.users import ApiToken

_INSERT_SEARCH = ("INSERT INTO saved_searches (name, query, created_at) VALUES (?, ?, ?) "
                  "RETURNING id, name, query, created_at")


# SQLite quotes the text as JSON itself (json_quote, in C) and hands it over as bytes:
# the body is never decoded into a Python string nor encoded again.
_ENTRY_COLUMNS = (
    "i.id, i.source_id, i.title, i.url, i.author, i.sort_time, i.discovered_at, "
    "i.updated_at, i.read, i.starred, "
    "CAST(json_quote(CASE WHEN i.body IS NULL OR i.body = '' THEN i.summary ELSE i.body END)"
    " AS BLOB), CASE WHEN i.body IS NULL OR i.body = '' THEN 0 ELSE 1 END"
)


class CompatMixin(Access):

    def item_refs(self, query: ItemQuery) -> list[tuple[int, datetime]]:
        with self._read() as conn:
            return refs_from_rows(conn.execute(*refs_statement(query)).fetchall())

    def stream_entries(self, query: ItemQuery) -> list[StreamEntry]:
        with self._read() as conn:
            return list(map(StreamEntry._make, conn.execute(
                *timeline_statement(_ENTRY_COLUMNS, query, "items i")).fetchall()))

    def unread_counts(self, editorial_only: bool) -> list[UnreadCount]:
        with self._read() as conn:
            return unread_from_rows(conn.execute(*unread_statement(editorial_only)).fetchall())

    def set_read_where(self, query: ItemQuery, read: bool) -> int:
        where, params = timeline_filters(query)
        where.append("i.read != ?")
        with self._write() as conn:
            return conn.execute(
                "UPDATE items SET read = ? WHERE id IN (SELECT i.id FROM items i "  # noqa: S608
                f"WHERE {' AND '.join(where)})", (int(read), *params, int(read))).rowcount

    def list_saved_searches(self) -> list[SavedSearch]:
        with self._read() as conn:
            rows = conn.execute(f"SELECT {_SEARCH} FROM saved_searches "  # noqa: S608
                                "ORDER BY name COLLATE NOCASE").fetchall()
        return [_saved(r) for r in rows]

    def get_saved_search(self, search_id: int) -> SavedSearch:
        with self._read() as conn:
            row = conn.execute(f"SELECT {_SEARCH} FROM saved_searches WHERE id = ?",  # noqa: S608
                               (search_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no saved search {search_id}")
        return _saved(row)

    def add_saved_search(self, name: str, query: str, created_at: datetime) -> SavedSearch:
        with self._write() as conn:
            try:
                row = conn.execute(_INSERT_SEARCH, (name, query, to_us(created_at))).fetchall()[0]
            except sqlite3.IntegrityError:
                raise ConfigError(f"a saved search named {name!r} exists already") from None
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
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM api_tokens WHERE id = ?", (token_id,)).fetchone() \
                    is None:
                raise NotFoundError(f"no API token {token_id!r}")
            conn.execute("INSERT OR REPLACE INTO fever_keys (token_id, key) VALUES (?, ?)",
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
                f"INSERT OR REPLACE INTO websub ({_LEASE}) "  # noqa: S608
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (lease.source_id, lease.hub, lease.topic, lease.secret, lease.verify_token,
                 lease.state, to_us(lease.requested_at), opt_us(lease.lease_until),
                 opt_us(lease.last_push_at), opt_us(lease.retry_at), lease.error))

    def delete_websub(self, source_id: str) -> bool:
        with self._write() as conn:
            return conn.execute("DELETE FROM websub WHERE source_id = ?",
                                (source_id,)).rowcount > 0
