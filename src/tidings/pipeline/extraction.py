"""The extraction job (R-EXTRACT-1/2/4): pending bodies fetched, extracted, stored.

Each pending item's page is fetched through the shared fetcher (so every host
stays polite), archived in the raw store with the item's key (so ``tidings
reparse`` can redo it offline), extracted with the owning source's CSS
overrides, its images copied to ``data_dir/media``, and the result goes through
``upsert_items`` like everything else: an extracted body is a new version of
the item, decided by the owner-revises rule of ``identity.decide``.

What the job never does:

* fetch x.com, twitter.com or mp.weixin.qq.com (or their subdomains), nor items
  of X or WeChat sources: those bodies come whole from their APIs or not at
  all, so the items stay ``pending`` for those readers;
* fetch for a ``summary_only`` source: its items are recorded ``unconfirmed``
  with ``raw["summary_only"]`` - exactly what collection records for them - so
  the reader shows the summary and the review list leaves them out;
* raise for one item's trouble: a failed fetch or an empty page makes the item
  ``unconfirmed`` with the reason in ``raw["extract_error"]``, and is counted.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from tidings import extract  # article extraction loads on first use (see the package)
from tidings.errors import (
    BudgetExhaustedError,
    ConfigError,
    FetchError,
    NotFoundError,
    TidingsError,
)
from tidings.identity.decide import Action
from tidings.model import BodyState, Item, ItemData, RawResponse, Source
from tidings.net import decode_body
from tidings.net.types import Response
from tidings.pipeline.config import CommonConfig, Extract, parse_config
from tidings.pipeline.env import PipelineEnv
from tidings.pipeline.media import image_keeper
from tidings.pipeline.render import render_page
from tidings.pipeline.upsert import UpsertUnit, upsert_items
from tidings.readers import kind_of, own_hosts
from tidings.settings import Settings
from tidings.store.archive import RawWrites
from tidings.store.items import ItemQuery, ItemReads

if TYPE_CHECKING:
    from tidings.extract import Extraction

log = logging.getLogger(__name__)

MEDIA_PREFIX = "/media/"
PAGE_ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"
#: one item (page, extraction, images) may take at most this long
ITEM_TIMEOUT_S = 120.0
SCAN_PAGE = 200
SCAN_FACTOR = 20  # pending rows looked at per wanted item, so skipped hosts cannot clog it


@dataclass(slots=True)
class ExtractReport:
    """What one extraction job did. ``failed`` and ``unconfirmed`` both end unconfirmed."""

    tried: int = 0  # items whose page was requested
    ok: int = 0  # a body was stored as a new version
    unconfirmed: int = 0  # the page came, but held no article (short, links, not HTML)
    skipped: int = 0  # never fetched: no-fetch hosts and kinds, summary-only, no web URL
    failed: int = 0  # the fetch failed: HTTP error, blocked address, timeout
    item_ids: list[int] = field(default_factory=list)  # items whose record changed

    def add(self, other: ExtractReport) -> None:
        for name in ("tried", "ok", "unconfirmed", "skipped", "failed"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.item_ids.extend(other.item_ids)


# ------------------------------------------------------------------ rules


def no_fetch_host(url: str | None) -> bool:
    """Whether ``url`` is on a host whose pages some kind's API serves (``Kind.own_hosts``):
    bodies from there come from that API, never from the page (R-EXTRACT-1)."""
    host = (urlsplit(url).hostname or "") if url else ""
    return any(host == h or host.endswith("." + h) for h in own_hosts())


def leave_pending(item: Item, source: Source | None) -> bool:
    """Items whose body is not ours to fetch: it comes from an API (the source's kind
    says so, or the page's host), or nobody owns it."""
    if source is None or no_fetch_host(item.url):
        return True
    try:
        return not kind_of(source.kind).fetch_bodies
    except TidingsError:  # a kind no longer installed: leave its items alone
        return True


def _no_fetch_record(item: Item, config: CommonConfig) -> dict[str, Any] | None:
    """The raw marks of an item recorded unconfirmed without a fetch, or None to fetch."""
    if config.summary_only:
        return {"summary_only": True}
    if not item.url or urlsplit(item.url).scheme not in ("http", "https"):
        return {"extract_error": "no web page to fetch"}
    if urlsplit(item.url).fragment:  # identity kept it: entries share this page
        return {"extract_error": "one part of a page several entries share: "
                                 "the page is not this entry's body"}
    return None


# --------------------------------------------------------- item records


def page_item(item: Item, ext: Extraction | None, body: str | None,
              raw_extra: Mapping[str, Any]) -> ItemData:
    """``item`` again with the page's body (or none: unconfirmed) and the title, author
    and date it lacked; the previous extraction's marks in raw are replaced."""
    raw = {k: v for k, v in item.raw.items() if k not in ("extract_error", "extract")}
    raw.update(raw_extra)
    title = item.title or (ext.title if ext and ext.title else "")
    author = item.author or (ext.author if ext and ext.author else "")
    return ItemData(
        key=item.key, title=title, url=item.url, summary=item.summary, body=body,
        body_state=BodyState.OK if body else BodyState.UNCONFIRMED,
        published_at=item.published_at or (ext.published_at if ext else None),
        author=author, categories=item.categories, images=item.images, raw=raw,
    )


def store_page_item(unit: UpsertUnit, settings: Settings, source: Source, data: ItemData,
                    now: datetime) -> Action:
    """One item through the single entry; bodies keep their local /media/ links."""
    outcome = upsert_items(unit, source, [data], now,
                           extra_tracking=settings.tracking_params, local_media=True)
    return next(iter(outcome.actions.values()), Action.UNCHANGED)


def run_extraction(html: str, url: str, options: Extract) -> Extraction:
    return extract.extract_article(html, url, body_selector=options.body_selector,
                                   remove_selectors=options.remove_selectors)


# ------------------------------------------------------------- one item


@dataclass(frozen=True, slots=True)
class _Result:
    kind: str  # ok, unconfirmed, failed, skipped
    body: str | None = None
    ext: Extraction | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)


def _failed(reason: str, kind: str = "failed") -> _Result:
    return _Result(kind, raw={"extract_error": reason})


def _is_page(resp: Response) -> bool:
    kind = resp.content_type
    return not kind or kind.startswith("text/") or kind in (
        "application/xhtml+xml", "application/xml")


async def _from_page(env: PipelineEnv, config: CommonConfig, resp: Response,
                     now: datetime) -> _Result:
    if resp.status >= 400:
        return _failed(f"HTTP {resp.status}")
    if not _is_page(resp):
        return _failed(f"not an HTML page ({resp.content_type})", "unconfirmed")
    try:
        ext = await asyncio.to_thread(run_extraction, decode_body(resp), resp.final_url,
                                      config.extract)
    except TidingsError as exc:  # an empty page, a selector the page breaks
        return _failed(str(exc), "unconfirmed")
    info: dict[str, Any] = {"method": ext.method, "url": resp.final_url,
                            "at": now.isoformat(), "chars": len(ext.text)}
    if ext.state is not BodyState.OK:
        reason = f"no article found ({len(ext.text)} characters of text, {ext.method})"
        return _Result("unconfirmed", None, ext, {"extract_error": reason, "extract": info})
    images = await extract.localize_images(ext.html, resp.final_url, env.fetcher,
                                           image_keeper(env), url_prefix=MEDIA_PREFIX)
    info["images"] = len(images.stored)
    if images.failed:
        info["images_failed"] = len(images.failed)
    return _Result("ok", images.html, ext, {"extract": info})


async def _fetch_and_extract(env: PipelineEnv, item: Item, url: str, source: Source,
                             config: CommonConfig, now: datetime) -> _Result:
    options = config.request_for(source.url, url, PAGE_ACCEPT)
    try:
        resp = await env.fetcher.fetch(url, headers=options.headers, raise_for_status=False,
                                       proxy=options.proxy, user_agent=options.user_agent)
    except FetchError as exc:
        return _failed(str(exc))
    page = RawResponse(
        url=url, final_url=resp.final_url, fetched_at=resp.fetched_at, status=resp.status,
        headers=dict(resp.headers), body=resp.content, source_id=source.id, item_key=item.key)
    await env.writer(_archive, page)
    return await _from_page(env, config, resp, now)


async def _with_fallback(env: PipelineEnv, item: Item, url: str, source: Source,
                         config: CommonConfig, now: datetime) -> _Result:
    """Direct fetch and extraction; what they could not read, through the paid rendering
    service when one is configured (``pipeline/render.py``)."""
    result = await _fetch_and_extract(env, item, url, source, config, now)
    provider = env.settings.extract_render_provider
    if result.kind not in ("failed", "unconfirmed") or not provider:
        return result
    try:
        body, marks = await render_page(env, provider, item, source)
    except (FetchError, ConfigError) as exc:  # ConfigError: the provider is not configured
        return replace(result, raw={**result.raw, "render_error": str(exc)})
    if body is None:
        return _Result("unconfirmed", None, result.ext, {**result.raw, **marks})
    return _Result("ok", body, result.ext, marks)


async def _attempt(env: PipelineEnv, item: Item, url: str, source: Source,
                   config: CommonConfig, now: datetime) -> _Result:
    try:
        async with asyncio.timeout(ITEM_TIMEOUT_S):
            return await _with_fallback(env, item, url, source, config, now)
    except TimeoutError:
        return _failed(f"page and images took longer than {ITEM_TIMEOUT_S:.0f} s")
    except BudgetExhaustedError:
        return _Result("skipped")  # our own budget: the item stays pending for later
    except Exception as exc:  # a bug on one page must not stop the job; reparse can redo it
        log.exception("extracting %s failed unexpectedly", url)
        return _failed(f"internal error: {type(exc).__name__}: {exc}")


def _config(source: Source) -> tuple[CommonConfig, ConfigError | None]:
    """The source's config, validated once per item (selectors compile on validation);
    the defaults and the reason when it no longer validates (the item then fails with
    that reason, unless it is recorded without a fetch anyway)."""
    try:
        return parse_config(source.kind, source.config), None
    except ConfigError as exc:
        return CommonConfig(), exc


def _archive(unit: RawWrites, page: RawResponse) -> int:
    return unit.put_raw(page)


def _fresh(store: ItemReads, key: str) -> Item | None:
    """The item as stored now: a feed may have revised it while its page was fetched."""
    try:
        return store.get_item_by_key(key)
    except NotFoundError:
        return None


async def extract_item(env: PipelineEnv, item: Item, source: Source | None) -> ExtractReport:
    """Extract one item now (the job's step, and a retry from the review page)."""
    report = ExtractReport()
    now = env.clock()
    if source is None or leave_pending(item, source):
        report.skipped += 1
        return report
    config, broken = _config(source)
    marks = _no_fetch_record(item, config)
    if marks is not None:
        report.skipped += 1
        if item.body_state is BodyState.PENDING:
            await env.writer(store_page_item, env.settings, source,
                             page_item(item, None, None, marks), now)
            report.item_ids.append(item.id)
        return report
    assert item.url is not None
    result = (_failed(str(broken)) if broken is not None
              else await _attempt(env, item, item.url, source, config, now))
    current = _fresh(env.store, item.key)
    if result.kind == "skipped" or current is None:
        report.skipped += 1
        return report
    report.tried += 1
    setattr(report, result.kind, getattr(report, result.kind) + 1)
    data = page_item(current, result.ext, result.body, result.raw)
    await env.writer(store_page_item, env.settings, source, data, now)
    report.item_ids.append(item.id)
    return report


# --------------------------------------------------------------- the job


def pending_items(store: ItemReads, limit: int, source_id: str | None = None,
                  sources: Mapping[str, Source] | None = None) -> tuple[list[Item], int]:
    """Up to ``limit`` pending items worth a fetch, newest first; and how many were
    passed over (no-fetch hosts stay pending, so the scan is bounded)."""
    picked: list[Item] = []
    passed = 0
    before: tuple[datetime, int] | None = None
    budget = max(limit * SCAN_FACTOR, SCAN_PAGE)
    while len(picked) < limit and budget > 0:
        page = store.list_items(ItemQuery(body_state=BodyState.PENDING, source_id=source_id,
                                          before=before, limit=min(SCAN_PAGE, budget)))
        budget -= len(page)
        for item in page:
            if sources is not None and leave_pending(item, sources.get(item.source_id)):
                passed += 1
            elif len(picked) < limit:
                picked.append(item)
        if len(page) < SCAN_PAGE:
            break
        before = (page[-1].published_at or page[-1].discovered_at, page[-1].id)
    return picked, passed


async def extract_pending(env: PipelineEnv, *, limit: int | None = None,
                          source_id: str | None = None) -> ExtractReport:
    """Extract up to ``limit`` pending bodies (default ``settings.extract_per_round``),
    ``settings.extract_concurrency`` at a time; never raises for an item's trouble."""
    wanted = env.settings.extract_per_round if limit is None else limit
    report = ExtractReport()
    if wanted <= 0:
        return report
    sources = {s.id: s for s in env.store.list_sources()}
    items, passed = pending_items(env.store, wanted, source_id, sources)
    report.skipped += passed
    gate = asyncio.Semaphore(max(1, env.settings.extract_concurrency))

    async def one(item: Item) -> None:
        async with gate:
            report.add(await extract_item(env, item, sources.get(item.source_id)))

    await asyncio.gather(*(one(item) for item in items))
    return report


def prune_archive(unit: RawWrites, settings: Settings, now: datetime) -> int:
    """Drop raw responses older than ``raw_retention_days`` (0: keep all), except each
    item's newest page - the one its current body came from (R-EXTRACT-5)."""
    if settings.raw_retention_days <= 0:
        return 0
    return unit.prune_raw(now - timedelta(days=settings.raw_retention_days))


__all__ = [
    "MEDIA_PREFIX",
    "ExtractReport",
    "extract_item",
    "extract_pending",
    "leave_pending",
    "no_fetch_host",
    "page_item",
    "pending_items",
    "prune_archive",
    "run_extraction",
    "store_page_item",
]
