"""Items, the write side, as PostgreSQL does it (the shared part:
``tidings.store.sql.items``).

Many workers write at once here, so identity rests on the database: the unique
key of ``items`` and ``INSERT … ON CONFLICT (key) DO NOTHING``. A create that
loses the race to a concurrent transaction waits for it to commit and becomes a
discovery of the stored item, exactly as a create whose key was stored earlier.
Every batch touches its rows in one order (keys, ids sorted), so two batches
never wait for each other in a circle; if PostgreSQL still reports a deadlock,
the storage runs the call again (docs/storage.md, "PostgreSQL").
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, cast

from tidings.errors import NotFoundError
from tidings.model import ItemState
from tidings.store.base import NewItem, Revision
from tidings.store.postgres._db import Access, Conn, insert_values
from tidings.store.sql._base import SqlConn, to_us
from tidings.store.sql.items import (
    REVISE,
    _create_row,
    _revision_row,
    _state,
    ids_for_keys,
)
from tidings.store.sql.items import ItemsWriteMixin as SharedItemsWrite

_INSERT = (
    "INSERT INTO items (id, key, source_id, url, title, summary, body, body_state, "
    "published_at, discovered_at, updated_at, sort_time, author, categories, images, raw, "
    "content_hash, title_fp, lossy, backfill)"
)
#: the batch as one array per column (``_create_row`` without the id), in key order
_CREATE = """
WITH v AS (
    SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[],
        ?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::text[], ?::text[],
        ?::text[], ?::text[], ?::text[], ?::text[], ?::smallint[], ?::smallint[])
    WITH ORDINALITY AS v (key, source_id, url, title, summary, body, body_state,
        published_at, discovered_at, updated_at, sort_time, author, categories, images,
        raw, content_hash, title_fp, lossy, backfill, n)
), old AS (
    SELECT i.key, i.id FROM items i WHERE i.key IN (SELECT key FROM v)
), dead AS (
    SELECT t.key FROM tombstones t WHERE t.key IN (SELECT key FROM v)
), ins AS (
    INSERT INTO items (id, key, source_id, url, title, summary, body, body_state,
        published_at, discovered_at, updated_at, sort_time, author, categories, images,
        raw, content_hash, title_fp, lossy, backfill)
    SELECT nextval('items_id_seq'), key, source_id, url, title, summary, body, body_state,
        published_at, discovered_at, updated_at, sort_time, author, categories, images,
        raw, content_hash, title_fp, lossy, backfill FROM v
    WHERE key NOT IN (SELECT key FROM old) AND key NOT IN (SELECT key FROM dead)
    ORDER BY n
    ON CONFLICT (key) DO NOTHING
    RETURNING id, key, content_hash, discovered_at
), ver AS (
    INSERT INTO versions (item_id, hash, seen_at)
    SELECT id, content_hash, discovered_at FROM ins WHERE content_hash IS NOT NULL
    ON CONFLICT DO NOTHING
)
SELECT key, id, 'new' FROM ins
UNION ALL SELECT key, id, 'old' FROM old
UNION ALL SELECT key, NULL, 'dead' FROM dead
"""
#: the discoveries as column arrays in (item, source) order: those of stored items
#: written, and the smallest id not stored returned (None when every one is)
_DISCOVER = """
WITH d AS (
    SELECT * FROM unnest(?::bigint[], ?::text[], ?::bigint[], ?::bigint[])
        AS d (item_id, source_id, seen_at, last_seen_at)
), ins AS (
    INSERT INTO discoveries (item_id, source_id, seen_at, last_seen_at)
    SELECT d.* FROM d WHERE EXISTS (SELECT 1 FROM items i WHERE i.id = d.item_id)
    ORDER BY 1, 2
    ON CONFLICT (item_id, source_id) DO UPDATE SET
        seen_at = least(discoveries.seen_at, excluded.seen_at),
        last_seen_at = greatest(discoveries.last_seen_at, excluded.last_seen_at)
)
SELECT min(d.item_id) FROM d WHERE NOT EXISTS (SELECT 1 FROM items i WHERE i.id = d.item_id)
"""
#: as in SQLite: whether the current hash is a version, the other version hashes as a
#: JSON array (one query for state and versions); both from one look-up of the item's
#: versions (two subqueries took 0.27 ms of server time for 33 keys, this 0.17)
_STATE_COLUMNS = (
    "id, key, source_id, title, summary, {body}, body_state, content_hash, revisions, "
    "published_at, discovered_at, url, raw, coalesce(vv.is_current, false), "
    "coalesce(vv.others, '[]'), lossy"
)
_VERSIONS = (
    "LEFT JOIN LATERAL (SELECT bool_or(v.hash = items.content_hash) AS is_current, "
    "json_agg(v.hash) FILTER (WHERE v.hash IS DISTINCT FROM items.content_hash)::text AS others "
    "FROM versions v WHERE v.item_id = items.id) vv ON true"
)


def _lookup(keys: Sequence[str], bodies_for: Collection[str] | None) -> tuple[str, list[Any]]:
    """The statement of ``lookup_items`` and its parameters."""
    wanted = list(dict.fromkeys(keys))
    if bodies_for is None:
        body, params = "body", [wanted]
    else:
        body = "CASE WHEN lossy = 1 OR key = ANY(?) THEN body END"
        params = [[k for k in wanted if k in bodies_for], wanted]
    return (f"SELECT {_STATE_COLUMNS.format(body=body)} FROM items {_VERSIONS} "  # noqa: S608
            "WHERE key = ANY(?)"), params


class ItemsWriteMixin(SharedItemsWrite, Access):

    def lookup_items(self, keys: Sequence[str],
                     bodies_for: Collection[str] | None = None) -> dict[str, ItemState]:
        sql, params = _lookup(keys, bodies_for)
        with self._read() as conn:
            rows = conn.execute(sql, params).fetchall()
        return {r[1]: _state(r) for r in rows}

    def lookup_listing(self, keys: Sequence[str], bodies_for: Collection[str] | None = None
                       ) -> tuple[dict[str, ItemState], set[str]]:
        """One statement, so one round trip: the tombstoned keys as an array on every
        row of the item look-up, which is joined to it so that a listing of new keys
        (no stored item) still returns that one row."""
        sql, params = _lookup(keys, bodies_for)
        with self._read() as conn:
            rows = conn.execute(
                "SELECT d.keys, s.* FROM (SELECT coalesce(array_agg(key), '{}') AS keys "  # noqa: S608
                f"FROM tombstones WHERE key = ANY(?)) d LEFT JOIN LATERAL ({sql}) s ON true",
                [list(dict.fromkeys(keys)), *params]).fetchall()
        return {r[2]: _state(r[1:]) for r in rows if r[1] is not None}, set(rows[0][0])

    def _create(self, conn: SqlConn, creates: Sequence[NewItem]
                ) -> tuple[dict[str, int], dict[str, int]]:
        """Insert the new items; returns (created key -> id, already stored key -> id).

        One statement (``_CREATE``) skips stored and tombstoned keys, inserts the rest
        with their versions and returns both kinds of id; a key that a concurrent
        transaction stored first (``ON CONFLICT DO NOTHING`` skipped it, and the
        statement's snapshot is older than that commit) is looked up after it.
        """
        if not creates:
            return {}, {}
        ordered = sorted(creates, key=lambda n: n.key)
        rows = [_create_row(0, n)[1:] for n in ordered]
        created: dict[str, int] = {}
        existing: dict[str, int] = {}
        settled: set[str] = set()
        for key, item_id, state in cast(Conn, conn).execute_binary(
                _CREATE, [list(c) for c in zip(*rows, strict=True)]):
            settled.add(key)
            if state == "new":
                created[key] = item_id
            elif state == "old":
                existing[key] = item_id
        lost = [n.key for n in ordered if n.key not in settled]
        if lost:
            existing.update(ids_for_keys(conn, self.dialect, lost))
        return created, existing

    def _revise(self, conn: SqlConn, revisions: Sequence[Revision]) -> None:
        if not revisions:
            return
        ids = sorted({r.item_id for r in revisions})
        found = {r[0] for r in conn.execute("SELECT id FROM items WHERE id = ANY(?) ORDER BY id "
                                            "FOR NO KEY UPDATE", (ids,)).fetchall()}
        missing = [i for i in ids if i not in found]
        if missing:
            raise NotFoundError(f"item {missing[0]} not found (revision)")
        conn.execute("DELETE FROM item_search WHERE item_id = ANY(?)", (ids,))
        conn.executemany(REVISE, [_revision_row(r) for r in revisions])
        insert_values(cast(Conn, conn), "INSERT INTO versions (item_id, hash, seen_at)",
                      [(r.item_id, r.fields.content_hash, to_us(r.revised_at))
                       for r in revisions if r.fields.content_hash], "ON CONFLICT DO NOTHING")

    def _discover(self, conn: SqlConn, sightings: Sequence[tuple[int, str, int]]) -> None:
        rows: dict[tuple[int, str], list[int]] = {}
        for item_id, source_id, seen in sightings:
            span = rows.setdefault((item_id, source_id), [seen, seen])
            span[0], span[1] = min(span[0], seen), max(span[1], seen)
        values = [(*key, *span) for key, span in sorted(rows.items())]
        (missing,) = cast(Conn, conn).row(_DISCOVER, [list(c) for c in zip(*values, strict=True)])
        if missing is not None:  # the savepoint or transaction undoes what was written
            raise NotFoundError(f"item {missing} not found (discovery)")
