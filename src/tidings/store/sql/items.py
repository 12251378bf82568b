"""Items, the write side: the primitives ``upsert_item`` is built on, as far as both
backends share them (the batch check, row builders, look-ups by key or URL and the
order of a batch's writes); how a batch is inserted is each backend's own."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tidings.errors import ConfigError, NotFoundError
from tidings.model import BodyState, ItemState
from tidings.store.base import Discovery, ItemFields, NewItem, Revision, UpsertBatch
from tidings.store.sql._base import Connected, Dialect, SqlConn, from_us, opt_dt, opt_us, to_us
from tidings.store.sql.reading import BODY_STATES

#: a revision's new content (``_revision_row``)
REVISE = (
    "UPDATE items SET url = ?, title = ?, summary = ?, body = ?, body_state = ?, "
    "published_at = ?, updated_at = ?, sort_time = coalesce(?, discovered_at), author = ?, "
    "categories = ?, images = ?, raw = ?, content_hash = ?, title_fp = ?, lossy = ?, "
    "revisions = revisions + ?, search_dirty = 1 WHERE id = ?"
)


def _json(values: Any) -> str:
    if not values:
        return "[]" if isinstance(values, list) else "{}"
    return json.dumps(values, ensure_ascii=False, separators=(",", ":"))


def _field_values(f: ItemFields) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """The stored content columns: (url .. published_at), (author .. title_fp)."""
    head = (f.url, f.title, f.summary, f.body, BodyState(f.body_state).value,
            opt_us(f.published_at))
    tail = (f.author, _json(list(f.categories)), _json(list(f.images)), _json(dict(f.raw)),
            f.content_hash, f.title_fp, int(f.lossy))
    return head, tail


def _create_row(item_id: int, n: NewItem) -> tuple[Any, ...]:
    head, tail = _field_values(n.fields)
    discovered = to_us(n.discovered_at)
    published = head[5]
    sort_time = discovered if published is None else published
    return (item_id, n.key, n.source_id, *head, discovered, discovered, sort_time, *tail,
            int(n.backfill))


def _revision_row(r: Revision) -> tuple[Any, ...]:
    head, tail = _field_values(r.fields)
    return (*head, to_us(r.revised_at), head[5], *tail, int(r.counts_as_revision), r.item_id)


def _state(r: Sequence[Any]) -> ItemState:
    hashes: frozenset[str] = frozenset() if r[14] == "[]" else frozenset(json.loads(r[14]))
    if r[13]:
        hashes |= {r[7]}
    return ItemState(
        id=r[0], key=r[1], source_id=r[2], title=r[3], summary=r[4], body=r[5],
        body_state=BODY_STATES[r[6]], content_hash=r[7], version_hashes=hashes,
        revisions=r[8], published_at=opt_dt(r[9]), discovered_at=from_us(r[10]), url=r[11],
        raw={} if r[12] == "{}" else json.loads(r[12]), lossy=bool(r[15]))


def _check_batch(batch: UpsertBatch) -> None:
    keys = [n.key for n in batch.creates]
    if len(set(keys)) != len(keys):
        raise ConfigError("an upsert batch creates the same identity key twice")
    if any(not k for k in keys):
        raise ConfigError("an upsert batch creates an item with an empty identity key")
    for d in batch.discoveries:
        if d.item_id is None and not d.key:
            raise ConfigError("a discovery needs an item id or an identity key")


def ids_for_keys(conn: SqlConn, dialect: Dialect, keys: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for where, params in dialect.in_parts("key", list(keys)):
        out.update(conn.execute(f"SELECT key, id FROM items WHERE {where}",  # noqa: S608
                                params).fetchall())
    return out


def tombstoned(conn: SqlConn, dialect: Dialect, keys: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for where, params in dialect.in_parts("key", list(dict.fromkeys(keys))):
        found.update(r[0] for r in conn.execute(
            f"SELECT key FROM tombstones WHERE {where}", params).fetchall())  # noqa: S608
    return found


class ItemsWriteMixin(Connected):
    """The pipeline decides (create, revise, rediscover); the storage only looks up what
    the decision needs and applies a whole batch in one transaction. Each backend
    says how it inserts, revises and records discoveries (``_create``, ``_revise``,
    ``_discover``) and how it looks items up with their versions."""

    def tombstoned(self, keys: Sequence[str]) -> set[str]:
        with self._read() as conn:
            return tombstoned(conn, self.dialect, keys)

    def known_urls(self, urls: Sequence[str]) -> set[str]:
        found: set[str] = set()
        with self._read() as conn:
            for where, params in self.dialect.in_parts("url", list(dict.fromkeys(urls))):
                found.update(r[0] for r in conn.execute(
                    f"SELECT url FROM items WHERE {where}", params).fetchall())  # noqa: S608
        return found

    def apply_upserts(self, batch: UpsertBatch) -> dict[str, int]:
        _check_batch(batch)
        with self._write() as conn:
            created, existing = self._create(conn, batch.creates)
            self._revise(conn, batch.revisions)
            ids = {**existing, **created}
            late = [Discovery(n.source_id, n.discovered_at, key=n.key)
                    for n in batch.creates if n.key in existing]
            discoveries = [*batch.discoveries, *late]
            if discoveries:
                self._discover(conn, _sightings(conn, self.dialect, discoveries, ids))
            return created

    def _create(self, conn: SqlConn, creates: Sequence[NewItem]
                ) -> tuple[dict[str, int], dict[str, int]]:
        """Insert the new items; returns (created key -> id, already stored key -> id)."""
        raise NotImplementedError

    def _revise(self, conn: SqlConn, revisions: Sequence[Revision]) -> None:
        raise NotImplementedError

    def _discover(self, conn: SqlConn, sightings: Sequence[tuple[int, str, int]]) -> None:
        """Record (item id, source id, time seen) rows in ``discoveries``."""
        raise NotImplementedError


def _sightings(conn: SqlConn, dialect: Dialect, discoveries: Sequence[Discovery],
               ids: dict[str, int]) -> list[tuple[int, str, int]]:
    """Each discovery as (item id, source id, time seen): a key not in ``ids`` is
    looked up, and one that names no item is refused before anything is written."""
    unknown = [d.key for d in discoveries if d.item_id is None and d.key not in ids]
    if unknown:
        ids = {**ids, **ids_for_keys(conn, dialect, [k for k in unknown if k])}
    out = []
    for d in discoveries:
        item_id = d.item_id if d.item_id is not None else ids.get(d.key or "")
        if item_id is None:
            raise NotFoundError(f"item {d.key!r} not found (discovery)")
        out.append((item_id, d.source_id, to_us(d.seen_at)))
    return out
