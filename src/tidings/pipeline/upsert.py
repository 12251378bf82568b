"""``upsert_items`` / ``upsert_item``: the single entry for every item (SPEC §4).

Collection, push ingest, history import, extraction and re-parse all come
through here, so the identity, version-memory and timeline rules hold whatever
the path. Writing functions take a unit of work (an :class:`UpsertUnit`, which
any ``tidings.store.base.Unit`` is: a step on the writer thread) and write
through one ``apply_upserts`` call, which is atomic within the unit, so one
upsert call is atomic wherever it is called: a crash before it leaves nothing,
a crash after it everything (R-DEDUP-9).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Protocol

from tidings.extract import sanitize_html
from tidings.identity import (
    EntryKey,
    batch_keys,
    comparable_text,
    content_hash,
    is_backfill,
    is_lossy,
    title_fingerprint,
    trusted_published,
)
from tidings.identity.decide import Action, Listed, decide
from tidings.model import BodyState, ItemData, ItemState, Source
from tidings.pipeline import limits, listing
from tidings.store.base import Discovery, ItemFields, NewItem, Revision, UpsertBatch
from tidings.store.items import UpsertReads, UpsertWrites

#: the raw key under which the detail rule marks what an entry's own page gave, and
#: which of those fields a later listing may not change back (pipeline/detail.py)
DETAIL_KEY = "detail"


class UpsertUnit(UpsertReads, UpsertWrites, Protocol):
    """What storing a listing asks of storage: the lookups it decides on, and the one
    ``apply_upserts`` that writes the decisions."""


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

    def is_lossy(self) -> bool:
        item = self.item
        return is_lossy(item.title, item.body, item.summary)


def _item_fields(item: ItemData, url: str | None, now: datetime,
                 local_media: bool = False) -> ItemFields:
    item = limits.bound_item(item)[0]  # readers' items are bounded already; other paths too
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
        title_fp=title_fingerprint(item.title), lossy=is_lossy(item.title, body, item.summary),
    )


def prepare(
    source: Source, items: Iterable[ItemData], now: datetime,
    extra_tracking: Sequence[str] = (), local_media: bool = False,
    listed: Mapping[str, str] | None = None, keys: Sequence[EntryKey] | None = None,
) -> list[Prepared]:
    """Key and clean each entry; the first of repeated keys wins.

    ``items`` is one batch: keys are decided for it as a whole (``batch_keys``;
    ``keys`` when the caller has them already). With ``listed`` (the source's
    listing memory) every entry gets its mark, and an entry listed unchanged last
    time is keyed but not cleaned.
    """
    prefix = None if listed is None else listing.seed(
        source.identity_mode, extra_tracking, local_media)
    seen: set[str] = set()
    out = []
    batch = list(items)
    keyed = keys if keys is not None else batch_keys(source.id, batch, source.identity_mode,
                                                     extra_tracking)
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
    """What an owner's re-listing keeps of the stored item: the body we extracted for a
    teaser (R-EXTRACT-2), and what the entry's page gave where the list is silent or
    the page is authoritative (R-WEB-5)."""
    if existing is None or existing.source_id != source_id:
        return fields
    return _inherit_detail(_inherit_body(fields, existing), existing)


def _inherit_body(fields: ItemFields, existing: ItemState) -> ItemFields:
    if fields.body is not None or existing.body is None:
        return fields
    return replace(fields, body=existing.body, body_state=existing.body_state,
                   lossy=is_lossy(fields.title, existing.body, fields.summary))


def _inherit_detail(fields: ItemFields, existing: ItemState) -> ItemFields:
    marks = existing.raw.get(DETAIL_KEY)
    if not isinstance(marks, Mapping) or DETAIL_KEY in fields.raw:
        return fields  # no page read before, or the entry carries a fresh one
    keep, filled = set(marks.get("keep") or ()), set(marks.get("filled") or ())
    changes: dict[str, Any] = {}
    if "title" in keep or ("title" in filled and not fields.title.strip()):
        changes["title"] = existing.title
        changes["title_fp"] = title_fingerprint(existing.title)
    if "published_at" in keep or ("published_at" in filled and fields.published_at is None):
        changes["published_at"] = existing.published_at
    if "summary" in filled and not fields.summary.strip():
        changes["summary"] = existing.summary
    title, summary = changes.get("title", fields.title), changes.get("summary", fields.summary)
    return replace(fields, **changes, raw={**fields.raw, DETAIL_KEY: dict(marks)},
                   lossy=is_lossy(title, fields.body, summary))


def _lossy_texts(fields: ItemFields, existing: ItemState | None) -> tuple[str, str | None]:
    """(new, existing) comparable texts, only when a U+FFFD makes lossy comparison matter;
    building them costs as much as hashing, so the common case skips it."""
    if existing is None or not (fields.lossy or existing.lossy):
        return "", None
    return (comparable_text(fields.title, fields.body, fields.summary),
            comparable_text(existing.title, existing.body, existing.summary))


def upsert_items(
    unit: UpsertUnit, source: Source, items: Iterable[ItemData], now: datetime, *,
    extra_tracking: Sequence[str] = (), imported: bool = False, local_media: bool = False,
) -> UpsertOutcome:
    """Store what ``source`` listed at ``now``; returns what happened to each entry.

    ``imported`` marks history imported from elsewhere: created items get no
    comparable hash, so their first real collection only records one (R-DEDUP-5).
    ``local_media`` is for bodies from ``tidings.extract`` (absolute already, images
    rewritten to relative ``/media/`` copies that must not be resolved against the page).
    """
    return apply_prepared(unit, source, prepare(source, items, now, extra_tracking, local_media),
                          now, imported=imported)


def apply_prepared(
    unit: UpsertUnit, source: Source, prepared: Sequence[Prepared], now: datetime, *,
    imported: bool = False,
) -> UpsertOutcome:
    """The storage half of :func:`upsert_items`, for entries already ``prepare``-d.

    Split so that the CPU-heavy ``prepare`` (sanitizing, hashing) runs on the
    event loop while lookups and the write stay with the one writer. A run that
    listed nothing (most runs of a followed account) asks storage nothing.
    """
    if not prepared:
        return UpsertOutcome()
    # no nested part around the reads: the one write is atomic on its own, and on
    # PostgreSQL a savepoint costs two round trips per listing (docs/benchmarks.md)
    batch, out = plan_prepared(unit, source, prepared, now, imported=imported)
    if batch.creates or batch.revisions or batch.discoveries:
        out.created_ids = unit.apply_upserts(batch)
    return out


def plan_prepared(
    store: UpsertReads, source: Source, prepared: Sequence[Prepared], now: datetime, *,
    imported: bool = False,
) -> tuple[UpsertBatch, UpsertOutcome]:
    """Decide every entry against what is stored, writing nothing.

    ``tidings doctor`` shows these decisions; :func:`apply_prepared` writes them.
    """
    existing, dead = _lookup(store, prepared)
    out = UpsertOutcome()
    writes = _Writes()
    for listed in prepared:
        entry, old = listed, existing.get(listed.key)
        tombstoned = entry.key in dead
        action = None
        stored: _Stored | None = None
        if entry.fields is None:  # listed unchanged: decided on its remembered hash if it can
            action = decide(source_id=source.id, entry=Listed(entry.digest), existing=old,
                            existing_text=None, tombstoned=tombstoned)
        if action is None:
            entry, old = _cleaned_entry(store, entry, old, now)
            action, stored = _decide_cleaned(source.id, entry, old, tombstoned)
        out.actions[entry.key] = action
        _plan(writes, source.id, entry, stored, action, old, now, imported)
        _count(out, action, old)
    return UpsertBatch(writes.creates, writes.revisions, writes.discoveries), out


@dataclass(slots=True)
class _Writes:
    creates: list[NewItem] = field(default_factory=list)
    revisions: list[Revision] = field(default_factory=list)
    discoveries: list[Discovery] = field(default_factory=list)


def _lookup(store: UpsertReads, prepared: Sequence[Prepared]
            ) -> tuple[dict[str, ItemState], set[str]]:
    """The stored state of every entry and which are tombstoned; bodies only where
    deciding may read them: teasers inherit the stored body, and lossy text is
    compared with it (R-DEDUP-6). Storage adds the bodies of stored items that are
    lossy themselves."""
    keys = [p.key for p in prepared]
    return store.lookup_listing(keys, bodies_for={p.key for p in prepared if _needs_body(p)})


def _cleaned_entry(store: UpsertReads, entry: Prepared, old: ItemState | None, now: datetime
                   ) -> tuple[Prepared, ItemState | None]:
    """``entry`` prepared in full (if it was deferred), with the stored item again if
    cleaning made its body needed (a U+FFFD from an entity, say)."""
    if entry.fields is not None:
        return entry, old
    cleaned = _clean(entry, now)
    if old is not None and old.body is None and _needs_body(cleaned):
        old = store.lookup_items([cleaned.key], bodies_for={cleaned.key}).get(cleaned.key)
    return cleaned, old


@dataclass(frozen=True, slots=True)
class _Stored:
    """What a cleaned entry would store: its fields after inheriting from the stored
    item, and their content hash. Deciding needs both, and so does planning the write."""

    fields: ItemFields
    digest: str


def _decide_cleaned(source_id: str, entry: Prepared, old: ItemState | None,
                    tombstoned: bool) -> tuple[Action, _Stored]:
    assert entry.fields is not None
    fields = _inherit(entry.fields, old, source_id)
    digest = _digest(entry, fields)
    text, old_text = _lossy_texts(fields, old)
    action = decide(source_id=source_id, entry=Listed(digest, fields.title, text),
                    existing=old, existing_text=old_text, tombstoned=tombstoned)
    assert action is not None  # a cleaned entry always gets one
    return action, _Stored(fields, digest)


def _digest(entry: Prepared, fields: ItemFields) -> str:
    """The content hash of what would be stored (computed in ``prepare`` unless inherited)."""
    if fields is entry.fields and entry.digest:
        return entry.digest
    return content_hash(fields.title, fields.body, fields.summary)


def _plan(batch: _Writes, source_id: str, entry: Prepared, stored: _Stored | None,
          action: Action, old: ItemState | None, now: datetime, imported: bool) -> None:
    """Add what ``action`` writes for ``entry`` to ``batch``; ``stored`` is None when the
    entry was decided without cleaning it."""
    if action is Action.REDISCOVER and old is not None:
        batch.discoveries.append(Discovery(source_id, now, item_id=old.id))
        return
    if action not in (Action.CREATE, Action.REVISE, Action.BASELINE, Action.UNCHANGED):
        return
    assert stored is not None or action is Action.UNCHANGED
    if stored is None:
        return  # unchanged, decided without cleaning: nothing to write
    fields = stored.fields
    hashed = replace(fields, content_hash=None if imported else stored.digest)
    if action is Action.CREATE:
        backfill = is_backfill(fields.published_at, now, entry.declared_backfill)
        batch.creates.append(NewItem(entry.key, source_id, hashed, now, backfill))
    elif old is not None and action in (Action.REVISE, Action.BASELINE):
        batch.revisions.append(Revision(old.id, hashed, now, action is Action.REVISE))
    elif old is not None and action is Action.UNCHANGED and _state_only(fields, old):
        batch.revisions.append(Revision(old.id, hashed, now, counts_as_revision=False))


def _needs_body(p: Prepared) -> bool:
    """Whether deciding ``p`` may look at the stored body: teasers inherit it, and
    text holding U+FFFD is compared lossily against it."""
    if p.fields is None:
        assert p.deferred is not None
        return p.deferred.is_lossy()  # listed unchanged: a body, so never a teaser
    return p.fields.body is None or p.fields.lossy


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
    unit: UpsertUnit, source: Source, item: ItemData, now: datetime, *,
    extra_tracking: Sequence[str] = (), imported: bool = False, local_media: bool = False,
) -> UpsertOutcome:
    """One entry through exactly the same rules as a batch."""
    return upsert_items(unit, source, [item], now, extra_tracking=extra_tracking,
                        imported=imported, local_media=local_media)


__all__ = ["Deferred", "Prepared", "UpsertOutcome", "UpsertUnit", "apply_prepared",
           "listing_memory", "plan_prepared", "prepare", "upsert_item", "upsert_items"]
