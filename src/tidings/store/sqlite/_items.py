"""Items, the write side, as SQLite does it: a batch written with ``executemany`` so
that a listing of sixty items costs one round of statements (the shared part:
``tidings.store.sql.items``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Sequence

from tidings.errors import NotFoundError
from tidings.model import ItemState
from tidings.store.base import NewItem, Revision
from tidings.store.sql._base import SqlConn, chunks, marks, to_us
from tidings.store.sql.items import (
    REVISE,
    _create_row,
    _revision_row,
    _state,
    ids_for_keys,
    tombstoned,
)
from tidings.store.sql.items import ItemsWriteMixin as SharedItemsWrite
from tidings.store.sqlite._db import Access
from tidings.store.sqlite._search import unindex

_INSERT = (
    "INSERT INTO items (id, key, source_id, url, title, summary, body, body_state, "
    "published_at, discovered_at, updated_at, sort_time, author, categories, images, raw, "
    "content_hash, title_fp, lossy, backfill) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_DISCOVER = (
    "INSERT INTO discoveries (item_id, source_id, seen_at, last_seen_at) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (item_id, source_id) DO UPDATE SET "
    "seen_at = min(seen_at, excluded.seen_at), "
    "last_seen_at = max(last_seen_at, excluded.last_seen_at)"
)
#: what the dedup decision needs, versions included: one query per 900 keys, and the
#: usual case (one version, the current hash) costs no JSON parsing
_STATE_COLUMNS = (
    "id, key, source_id, title, summary, {body}, body_state, content_hash, revisions, "
    "published_at, discovered_at, url, raw, "
    "EXISTS (SELECT 1 FROM versions v WHERE v.item_id = items.id AND v.hash = content_hash), "
    "(SELECT json_group_array(v.hash) FROM versions v WHERE v.item_id = items.id "
    "AND v.hash IS NOT content_hash), lossy"
)


class ItemsWriteMixin(SharedItemsWrite, Access):

    def lookup_items(self, keys: Sequence[str],
                     bodies_for: Collection[str] | None = None) -> dict[str, ItemState]:
        out: dict[str, ItemState] = {}
        with self._read() as conn:
            for part in chunks(list(dict.fromkeys(keys))):
                wanted = [] if bodies_for is None else [k for k in part if k in bodies_for]
                body = "body" if bodies_for is None else (
                    f"CASE WHEN lossy OR key IN ({marks(len(wanted))}) THEN body END")
                rows = conn.execute(
                    f"SELECT {_STATE_COLUMNS.format(body=body)} FROM items "  # noqa: S608
                    f"WHERE key IN ({marks(len(part))})", [*wanted, *part]).fetchall()
                for r in rows:
                    out[r[1]] = _state(r)
        return out

    def lookup_listing(self, keys: Sequence[str], bodies_for: Collection[str] | None = None
                       ) -> tuple[dict[str, ItemState], set[str]]:
        return self.lookup_items(keys, bodies_for), self.tombstoned(keys)

    def _create(self, conn: SqlConn, creates: Sequence[NewItem]
                ) -> tuple[dict[str, int], dict[str, int]]:
        """Insert the new items; returns (created key -> id, already stored key -> id)."""
        if not creates:
            return {}, {}
        keys = [n.key for n in creates]
        existing = ids_for_keys(conn, self.dialect, keys)
        dead = tombstoned(conn, self.dialect, keys)
        fresh = [n for n in creates if n.key not in existing and n.key not in dead]
        (next_id,) = conn.execute(
            "SELECT max(coalesce((SELECT max(id) FROM items), 0), "
            "coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'items'), 0)) + 1"
        ).fetchone()
        created = {n.key: next_id + i for i, n in enumerate(fresh)}
        conn.executemany(_INSERT, [_create_row(created[n.key], n) for n in fresh])
        conn.executemany(
            "INSERT OR IGNORE INTO versions (item_id, hash, seen_at) VALUES (?, ?, ?)",
            [(created[n.key], n.fields.content_hash, to_us(n.discovered_at))
             for n in fresh if n.fields.content_hash])
        return created, existing

    def _revise(self, conn: SqlConn, revisions: Sequence[Revision]) -> None:
        if not revisions:
            return
        ids = list(dict.fromkeys(r.item_id for r in revisions))
        found = {r[0] for part in chunks(ids) for r in conn.execute(
            f"SELECT id FROM items WHERE id IN ({marks(len(part))})", part).fetchall()}  # noqa: S608
        missing = [i for i in ids if i not in found]
        if missing:
            raise NotFoundError(f"item {missing[0]} not found (revision)")
        unindex(conn, ids)
        conn.executemany(REVISE, [_revision_row(r) for r in revisions])
        conn.executemany(
            "INSERT OR IGNORE INTO versions (item_id, hash, seen_at) VALUES (?, ?, ?)",
            [(r.item_id, r.fields.content_hash, to_us(r.revised_at))
             for r in revisions if r.fields.content_hash])

    def _discover(self, conn: SqlConn, sightings: Sequence[tuple[int, str, int]]) -> None:
        try:
            conn.executemany(_DISCOVER, [(i, s, seen, seen) for i, s, seen in sightings])
        except sqlite3.IntegrityError as exc:
            raise NotFoundError(f"a discovery names a missing item ({exc})") from exc
