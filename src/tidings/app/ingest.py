"""Push ingest (SPEC §6, R-INGEST-1…4): items a script sends, stored like collected ones.

The web layer checks the token, the rate and the shape of the request; this
module decides, per item, what happens, and hands the items to the single
upsert path (``pipeline.upsert``) in one write step, so a request is stored
whole or not at all. An unknown ``source_id`` becomes an ``external`` source
that is ``isolated``: its items are kept but shown nowhere public until an
admin promotes the source (R-INGEST-3). ``backfill: true`` is passed on as a
declaration that the timeline rule weighs (R-INGEST-4, R-DEDUP-7).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from tidings.app import naming
from tidings.app.core import Core
from tidings.errors import ConfigError, NotFoundError
from tidings.identity import batch_keys, is_http_url, normalize_url
from tidings.identity.decide import Action
from tidings.model import BodyState, ItemData, Source, Visibility
from tidings.pipeline.upsert import UpsertUnit, apply_prepared, prepare
from tidings.readers import kind_of, pushed_kind
from tidings.store.sources import SourceReads, SourceWrites

#: the most items one request may carry (R-INGEST-2)
MAX_ITEMS = 50
_STORED = {Action.CREATE, Action.REVISE}
_UNCHANGED = {Action.UNCHANGED, Action.BASELINE, Action.REDISCOVER}


class IngestUnit(UpsertUnit, SourceReads, SourceWrites, Protocol):
    """What a push of items stores: its source found or made, then its items."""


@dataclass(frozen=True, slots=True)
class PushedItem:
    """One item as a script pushed it (validated for shape by the web layer)."""

    title: str | None = None
    url: str | None = None
    guid: str | None = None
    summary: str = ""
    content_html: str | None = None
    author: str = ""
    published_at: datetime | None = None
    tags: tuple[str, ...] = ()
    backfill: bool = False


@dataclass(frozen=True, slots=True)
class ItemResult:
    """What became of one pushed item: ``stored``, ``unchanged`` or ``skipped`` (why)."""

    index: int
    status: str
    id: int | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class IngestReport:
    source_id: str
    created_source: bool
    results: tuple[ItemResult, ...]

    def count(self, status: str) -> int:
        return sum(1 for r in self.results if r.status == status)


class Ingest:
    """``Tidings.ingest``: see the module docstring."""

    def __init__(self, core: Core) -> None:
        self._core = core

    async def push(self, source_id: str, items: Sequence[PushedItem]) -> IngestReport:
        """Store pushed items; nothing is stored when the request as a whole is
        refused (ConfigError)."""
        keep, skipped = screen(items)
        now = self._core.clock()
        template = external_source(source_id, now, self._core.settings.default_interval_min)
        report: IngestReport = await self._core.writer(ingest_step, template, keep, skipped,
                                                       now)
        return report


def screen(items: Sequence[PushedItem]) -> tuple[list[tuple[int, ItemData]], list[ItemResult]]:
    """The items worth storing (with their index) and the skipped ones with the reason.

    Items without a title or an http(s) URL are skipped; of items sharing a URL
    (after normalization) the first wins (R-INGEST-2).
    """
    if len(items) > MAX_ITEMS:
        raise ConfigError(f"items: at most {MAX_ITEMS} per request, got {len(items)}")
    keep: list[tuple[int, ItemData]] = []
    skipped: list[ItemResult] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(items):
        reason = _problem(item)
        url = normalize_url(item.url.strip()) if reason is None and item.url else ""
        if reason is None and url in seen:
            reason = f"duplicate of item {seen[url]} in this request (the first wins)"
        if reason is not None:
            skipped.append(ItemResult(index, "skipped", reason=reason))
            continue
        seen[url] = index
        keep.append((index, _item_data(item)))
    return keep, skipped


def _problem(item: PushedItem) -> str | None:
    if not (item.title or "").strip():
        return "no title"
    if not (item.url or "").strip():
        return "no url"
    if not is_http_url((item.url or "").strip()):
        return "url is not an absolute http(s) URL"
    return None


def _item_data(item: PushedItem) -> ItemData:
    body = item.content_html if item.content_html and item.content_html.strip() else None
    return ItemData(
        title=(item.title or "").strip(), url=(item.url or "").strip(), guid=item.guid or None,
        summary=item.summary, body=body,
        body_state=BodyState.OK if body else BodyState.PENDING,
        published_at=item.published_at, author=item.author, categories=item.tags,
        raw={"pushed": True}, backfill=True if item.backfill else None,
    )


def external_source(source_id: str, now: datetime, interval_min: int) -> Source:
    """The isolated ``external`` source an unknown ``source_id`` creates (R-INGEST-3)."""
    return Source(id=source_id, kind=pushed_kind(), url=naming.external_url(source_id),
                  title=source_id, visibility=Visibility.ISOLATED, interval_min=interval_min,
                  created_at=now)


def ingest_step(unit: IngestUnit, template: Source, keep: list[tuple[int, ItemData]],
                skipped: list[ItemResult], now: datetime) -> IngestReport:
    """The write step: find or create the source, then upsert every kept item at once."""
    created = False
    try:
        source = unit.get_source(template.id)
    except NotFoundError:
        if unit.find_source_by_url(template.url) is not None:
            raise ConfigError(f"source_id {template.id!r}: an external source of that name "
                              "exists under another id") from None
        source = unit.add_source(template)
        created = True
    if kind_of(source.kind).fetched:
        raise ConfigError(f"source {source.id!r} is a {source.kind} source that tidings "
                          "collects itself; push to an external source id instead")
    datas = [data for _, data in keep]
    keys = batch_keys(source.id, datas, source.identity_mode)
    prepared = prepare(source, datas, now, keys=keys)
    outcome = apply_prepared(unit, source, prepared, now)
    known = unit.lookup_items([p.key for p in prepared], bodies_for=())
    results = list(skipped)
    first: dict[str, int] = {}
    for (index, _), key in zip(keep, keys, strict=True):
        if key.key in first:
            results.append(ItemResult(index, "skipped", id=None, reason=(
                f"duplicate of item {first[key.key]} in this request (the first wins)")))
            continue
        first[key.key] = index
        state = known.get(key.key)
        item_id = outcome.created_ids.get(key.key) or (state.id if state else None)
        results.append(_result(index, outcome.actions.get(key.key), item_id))
    results.sort(key=lambda r: r.index)
    return IngestReport(source.id, created, tuple(results))


def _result(index: int, action: Action | None, item_id: int | None) -> ItemResult:
    if action in _STORED:
        return ItemResult(index, "stored", id=item_id)
    if action in _UNCHANGED:
        return ItemResult(index, "unchanged", id=item_id)
    why = {Action.TOMBSTONED: "deleted before: it never comes back (tombstone)",
           Action.CAPPED: "changed too often: the revision cap is reached"}
    return ItemResult(index, "skipped", id=item_id,
                      reason=why.get(action, "not stored") if action else "not stored")
