"""Item upserts: the batch check and the row builders both backends share."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tidings.errors import ConfigError
from tidings.model import BodyState, ItemState
from tidings.store.base import ItemFields, NewItem, Revision, UpsertBatch
from tidings.store.sql._base import from_us, opt_dt, opt_us, to_us
from tidings.store.sql.reading import BODY_STATES


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
