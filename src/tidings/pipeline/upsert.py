"""``upsert_items`` / ``upsert_item``: the single entry for every item (SPEC §4).

Collection, push ingest, history import, extraction and re-parse all come
through here, so the identity, version-memory and timeline rules hold whatever
the path. One call is one storage transaction: a crash before it leaves
nothing, a crash after it leaves everything (R-DEDUP-9).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from tidings.extract import sanitize_html
from tidings.identity import (
    batch_keys,
    comparable_text,
    content_hash,
    is_backfill,
    title_fingerprint,
    trusted_published,
)
from tidings.identity.decide import Action, decide
from tidings.model import BodyState, ItemData, ItemState, Source
from tidings.pipeline import listing
from tidings.store.base import Discovery, ItemFields, NewItem, Revision, Storage, UpsertBatch

FFFD = "\ufffd"


@dataclass(slots=True)
class UpsertOutcome:
    created: int = 0
    revised: int = 0
    rediscovered: int = 0
    unchanged: int = 0
    skipped: int = 0  # tombstoned, capped, or repeated within the batch
    created_ids: dict[str, int] = field(default_factory=dict)
    revised_ids: list[int] = field(default_factory=list)
    actions: dict[str, Action] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Prepared:
    """One entry keyed and cleaned, or, when listed unchanged, only keyed (see listing)."""

    key: str
    fields: ItemFields | None  # None: listed unchanged, cleaned only if ``settle`` must
    declared_backfill: bool | None
    # content hash of ``fields``, computed where prepare runs (a worker); of a deferred
    # entry, the prefix its listing memory kept
    digest: str = ""
    mark: str = ""  # the entry's listing mark, when the caller keeps a listing memory
    deferred: Deferred | None = None  # what cleaning takes, while ``fields`` is None


@dataclass(frozen=True, slots=True)
class Deferred:
    """An entry listed unchanged: what cleaning it takes, should it come to that."""

    item: ItemData
    url: str | None
    local_media: bool

    def has_fffd(self) -> bool:
        item = self.item
        return _has_fffd(item.title, item.body, item.summary)


def _item_fields(item: ItemData, url: str | None, now: datetime,
                 local_media: bool = False) -> ItemFields:
    # extracted bodies are absolute already; their only relative links are our /media/ copies
    base = None if local_media else url
    body = sanitize_html(item.body, base_url=base) if item.body else None
    published = trusted_published(item.published_at, now)
    raw: dict[str, Any] = dict(item.raw)
    if item.guid:
        raw["guid"] = item.guid
    if item.published_raw:
        raw["published_raw"] = item.published_raw
    if item.published_at is not None and published is None:
        raw["untrusted_published_at"] = item.published_at.isoformat()
    state = item.body_state if body or item.body_state is BodyState.UNCONFIRMED \
        else BodyState.PENDING
    if state is BodyState.PENDING and raw.get("summary_only"):
        state = BodyState.UNCONFIRMED
    return ItemFields(
        title=item.title, url=url, summary=item.summary, body=body, body_state=state,
        published_at=published, author=item.author, categories=item.categories,
        images=item.images, raw=raw, content_hash=None,
        title_fp=title_fingerprint(item.title),
    )


def prepare(
    source: Source, items: Iterable[ItemData], now: datetime,
    extra_tracking: Sequence[str] = (), local_media: bool = False,
    listed: Mapping[str, str] | None = None,
) -> list[Prepared]:
    """Key and clean each entry; the first of repeated keys wins.

    ``items`` is one batch: keys are decided for it as a whole (``batch_keys``).
    With ``listed`` (the source's listing memory) every entry gets its mark, and
    an entry listed unchanged last time is keyed but not cleaned.
    """
    prefix = None if listed is None else listing.seed(
        source.identity_mode, extra_tracking, local_media)
    seen: set[str] = set()
    out = []
    batch = list(items)
    keyed = batch_keys(source.id, batch, source.identity_mode, extra_tracking)
    for item, entry_key in zip(batch, keyed, strict=True):
        key, url = entry_key.key, entry_key.url
        if key in seen:
            continue
        seen.add(key)
        mark = "" if prefix is None else listing.mark(prefix, item)
        known = listed.get(mark) if listed and mark else None
        if known is not None:
            deferred = Deferred(item, url, local_media)
            out.append(Prepared(key, None, item.backfill, known, mark, deferred))
        else:
            out.append(_cleaned(key, item, url, now, local_media, mark))
    return out


def _cleaned(key: str, item: ItemData, url: str | None, now: datetime, local_media: bool,
             mark: str) -> Prepared:
    fields = _item_fields(item, url, now, local_media)
    digest = content_hash(fields.title, fields.body, fields.summary)
    return Prepared(key, fields, item.backfill, digest, mark)


def _clean(p: Prepared, now: datetime) -> Prepared:
    """A deferred entry prepared in full after all."""
    assert p.deferred is not None
    d = p.deferred
    return _cleaned(p.key, d.item, d.url, now, d.local_media, p.mark)


def listing_memory(prepared: Sequence[Prepared]) -> dict[str, str]:
    """The listing memory a stored batch leaves for the source's next run."""
    return listing.remember([
        (p.mark, p.digest, p.fields is None or p.fields.body is not None) for p in prepared])


def _inherit(fields: ItemFields, existing: ItemState | None, source_id: str) -> ItemFields:
    """A teaser re-listed by the owner keeps the body we already extracted (R-EXTRACT-2)."""
    if existing is None or existing.source_id != source_id or fields.body is not None:
        return fields
    if existing.body is None:
        return fields
    return replace(fields, body=existing.body, body_state=existing.body_state)


def _has_fffd(title: str, body: str | None, summary: str) -> bool:
    return FFFD in title or FFFD in summary or (body is not None and FFFD in body)


def _lossy_texts(fields: ItemFields, existing: ItemState | None) -> tuple[str, str | None]:
    """(new, existing) comparable texts, only when a U+FFFD makes lossy comparison matter;
    building them costs as much as hashing, so the common case skips it."""
    if existing is None or not (
        _has_fffd(fields.title, fields.body, fields.summary)
        or _has_fffd(existing.title, existing.body, existing.summary)
    ):
        return "", None
    return (comparable_text(fields.title, fields.body, fields.summary),
            comparable_text(existing.title, existing.body, existing.summary))


def upsert_items(
    store: Storage, source: Source, items: Iterable[ItemData], now: datetime, *,
    extra_tracking: Sequence[str] = (), imported: bool = False, local_media: bool = False,
) -> UpsertOutcome:
    """Store what ``source`` listed at ``now``; returns what happened to each entry.

    ``imported`` marks history imported from elsewhere: created items get no
    comparable hash, so their first real collection only records one (R-DEDUP-5).
    ``local_media`` is for bodies from ``tidings.extract`` (absolute already, images
    rewritten to relative ``/media/`` copies that must not be resolved against the page).
    """
    return apply_prepared(store, source, prepare(source, items, now, extra_tracking, local_media),
                          now, imported=imported)


def apply_prepared(
    store: Storage, source: Source, prepared: Sequence[Prepared], now: datetime, *,
    imported: bool = False,
) -> UpsertOutcome:
    """The storage half of :func:`upsert_items`, for entries already ``prepare``-d.

    Split so that the CPU-heavy ``prepare`` (sanitizing, hashing) can run in a
    worker process while lookups and the write stay with the one writer.
    """
    batch, out = plan_prepared(store, source, prepared, now, imported=imported)
    if batch.creates or batch.revisions or batch.discoveries:
        out.created_ids = store.apply_upserts(batch)
    return out


def plan_prepared(
    store: Storage, source: Source, prepared: Sequence[Prepared], now: datetime, *,
    imported: bool = False,
) -> tuple[UpsertBatch, UpsertOutcome]:
    """Decide every entry against what is stored, writing nothing.

    ``tidings doctor`` shows these decisions; :func:`apply_prepared` writes them.
    """
    keys = [p.key for p in prepared]
    # stored bodies matter only to teasers (inheritance) and to text holding U+FFFD
    existing = store.lookup_items(keys, bodies_for={p.key for p in prepared if _needs_body(p)})
    dead = store.tombstoned(keys)
    out = UpsertOutcome()
    creates: list[NewItem] = []
    revisions: list[Revision] = []
    discoveries: list[Discovery] = []
    for entry in prepared:
        p, old = entry, existing.get(entry.key)
        if entry.fields is None:
            settled, p, old = _undefer(store, source.id, entry, old, entry.key in dead, now)
            if settled is not None:
                out.actions[p.key] = settled
                if settled is Action.REDISCOVER and old is not None:
                    discoveries.append(Discovery(source.id, now, item_id=old.id))
                _count(out, settled, old)
                continue
        assert p.fields is not None
        fields = _inherit(p.fields, old, source.id)
        digest = p.digest if fields is p.fields and p.digest else content_hash(
            fields.title, fields.body, fields.summary)
        text, old_text = _lossy_texts(fields, old)
        action = decide(
            source_id=source.id, new_hash=digest, new_text=text, new_title=fields.title,
            existing=old, existing_text=old_text, tombstoned=p.key in dead,
        )
        out.actions[p.key] = action
        hashed = replace(fields, content_hash=None if imported else digest)
        if action is Action.CREATE:
            backfill = is_backfill(fields.published_at, now, p.declared_backfill)
            creates.append(NewItem(p.key, source.id, hashed, now, backfill))
        elif old is not None and action in (Action.REVISE, Action.BASELINE):
            revisions.append(Revision(old.id, hashed, action is Action.REVISE))
        elif old is not None and action is Action.UNCHANGED and _state_only(fields, old):
            revisions.append(Revision(old.id, hashed, counts_as_revision=False))
        elif old is not None and action is Action.REDISCOVER:
            discoveries.append(Discovery(source.id, now, item_id=old.id))
        _count(out, action, old)
    return UpsertBatch(creates, revisions, discoveries), out


def _undefer(
    store: Storage, source_id: str, entry: Prepared, old: ItemState | None,
    tombstoned: bool, now: datetime,
) -> tuple[Action | None, Prepared, ItemState | None]:
    """A deferred entry's action when the stored item settles it; else the entry
    cleaned after all, with the stored item again if its body is now needed."""
    settled = listing.settle(source_id, entry.digest, old, tombstoned)
    if settled is not None:
        return settled, entry, old
    p = _clean(entry, now)
    if old is not None and _needs_body(p) and not _needs_body(entry):
        # cleaning made a U+FFFD (from an entity, say): lossy comparison needs the body
        old = store.lookup_items([p.key], bodies_for={p.key}).get(p.key)
    return None, p, old


def _needs_body(p: Prepared) -> bool:
    """Whether deciding ``p`` may look at the stored body: teasers inherit it, and
    text holding U+FFFD is compared lossily against it."""
    if p.fields is None:
        assert p.deferred is not None
        return p.deferred.has_fffd()  # listed unchanged: a body, so never a teaser
    f = p.fields
    return f.body is None or _has_fffd(f.title, f.body, f.summary)


def _state_only(fields: ItemFields, old: ItemState) -> bool:
    """Pending -> unconfirmed changes no content, yet is stored (not as a version): the
    extractor tried, and its reason in raw feeds the review page (R-EXTRACT-1/6)."""
    return (old.body_state is BodyState.PENDING and fields.body is None
            and fields.body_state is BodyState.UNCONFIRMED)


def _count(out: UpsertOutcome, action: Action, old: ItemState | None) -> None:
    if action is Action.CREATE:
        out.created += 1
    elif action is Action.REVISE:
        out.revised += 1
        if old is not None:
            out.revised_ids.append(old.id)
    elif action is Action.REDISCOVER:
        out.rediscovered += 1
    elif action in (Action.UNCHANGED, Action.BASELINE):
        out.unchanged += 1
    else:
        out.skipped += 1


def upsert_item(
    store: Storage, source: Source, item: ItemData, now: datetime, *,
    extra_tracking: Sequence[str] = (), imported: bool = False, local_media: bool = False,
) -> UpsertOutcome:
    """One entry through exactly the same rules as a batch."""
    return upsert_items(store, source, [item], now, extra_tracking=extra_tracking,
                        imported=imported, local_media=local_media)


__all__ = ["Deferred", "Prepared", "UpsertOutcome", "apply_prepared", "listing_memory",
           "plan_prepared", "prepare", "upsert_item", "upsert_items"]
