"""Id lists, unread counts, read-until, saved searches, Fever keys and WebSub
subscriptions (``tidings.store.compat``, for Google Reader, Fever and WebSub): the
statements, converters and methods both backends share. Each keeps its own stream
of entries, whose text the server quotes as JSON in its own way."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tidings.errors import ConfigError, NotFoundError
from tidings.model import Visibility
from tidings.store.base import ItemQuery
from tidings.store.compat import SavedSearch, UnreadCount, WebSubLease
from tidings.store.sql._base import POSTGRESQL, SQLITE, Connected, from_us, opt_dt, opt_us, to_us
from tidings.store.sql.reading import timeline_filters, timeline_statement
from tidings.store.sql.users import _token
from tidings.store.users import ApiToken

_SEARCH = "id, name, query, created_at"


#: saved searches by name, case-insensitively as each backend's unique index compares
#: them (SQLite's ``COLLATE NOCASE``, PostgreSQL's ``lower(name COLLATE "C")``)
_BY_NAME = {SQLITE.name: "name COLLATE NOCASE",
            POSTGRESQL.name: 'lower(name COLLATE "C"), id'}


_LEASE = ("source_id, hub, topic, secret, verify_token, state, requested_at, lease_until, "
          "last_push_at, retry_at, error")
#: every column of ``websub`` but the key, replaced by a new subscription
_LEASE_UPDATE = ", ".join(f"{c.strip()} = excluded.{c.strip()}"
                          for c in _LEASE.split(",")[1:])


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


class CompatMixin(Connected):

    def item_refs(self, query: ItemQuery) -> list[tuple[int, datetime]]:
        with self._read() as conn:
            return refs_from_rows(conn.execute(*refs_statement(query)).fetchall())

    def unread_counts(self, editorial_only: bool) -> list[UnreadCount]:
        with self._read() as conn:
            return unread_from_rows(conn.execute(*unread_statement(editorial_only)).fetchall())

    def set_read_where(self, query: ItemQuery, read: bool) -> int:
        where, params = timeline_filters(query)
        where.append("i.read != ?")
        with self._write() as conn:
            return int(conn.execute(
                f"UPDATE items AS i SET read = ? WHERE {' AND '.join(where)}",  # noqa: S608
                (int(read), *params, int(read))).rowcount)

    def list_saved_searches(self) -> list[SavedSearch]:
        with self._read() as conn:
            rows = conn.execute(f"SELECT {_SEARCH} FROM saved_searches "  # noqa: S608
                                f"ORDER BY {_BY_NAME[self.dialect.name]}").fetchall()
        return [_saved(r) for r in rows]

    def get_saved_search(self, search_id: int) -> SavedSearch:
        with self._read() as conn:
            row = conn.execute(f"SELECT {_SEARCH} FROM saved_searches WHERE id = ?",  # noqa: S608
                               (search_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no saved search {search_id}")
        return _saved(row)

    def add_saved_search(self, name: str, query: str, created_at: datetime) -> SavedSearch:
        """The unique index on the name (``_BY_NAME``: ASCII letters only on SQLite)
        decides between two adds of one name."""
        with self._write() as conn:
            # fetchall: on SQLite a RETURNING statement left unfinished holds the transaction
            rows = conn.execute(
                "INSERT INTO saved_searches (name, query, created_at) VALUES (?, ?, ?) "  # noqa: S608
                f"ON CONFLICT DO NOTHING RETURNING {_SEARCH}",
                (name, query, to_us(created_at))).fetchall()
        if not rows:
            raise ConfigError(f"a saved search named {name!r} exists already")
        return _saved(rows[0])

    def delete_saved_search(self, search_id: int) -> bool:
        with self._write() as conn:
            return conn.execute("DELETE FROM saved_searches WHERE id = ?",
                                (search_id,)).rowcount > 0

    def find_token_by_fever_key(self, key: str) -> ApiToken | None:
        with self._read() as conn:
            row = conn.execute(BY_FEVER_KEY, (key,)).fetchone()
        return None if row is None else _token(row)

    def set_fever_key(self, token_id: str, key: str) -> None:
        """The key leaves any other token that held it (one key, one token)."""
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
