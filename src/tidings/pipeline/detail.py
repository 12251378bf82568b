"""The detail rule (R-WEB-5): fill entries from their own pages before they are stored.

A list page often gives a link and a title and nothing else. For the entries of
a run whose URL is not stored yet (at most ``detail.max_fetches`` a run), the
page is fetched through the shared, polite fetcher and read for its title, date
and summary (``extract/detail.py``). What the page gives fills what the list
left empty; with ``title_authoritative`` / ``published_authoritative`` the
page's title or date wins over the list's, and is marked in the item's raw data
so that a later listing cannot change it back (``upsert``). A page that cannot
be fetched leaves its entry as the list gave it, with the reason in raw.

A run fetches at most ``max_fetches`` pages. The entries beyond that are stored as
the list gave them, marked ``pending`` in their raw data, and their URLs are
carried in the source's cursor (``detail_todo``): the next runs that list them
fetch their pages first, before any new entry's, and the filled entry revises
the stored one. Before, they were known by then and never fetched at all (an
entry stayed undated under ``published_authoritative``). An entry the list no
longer shows is dropped from the carry (there is nothing left to re-emit).

Detail pages are not kept in the raw archive: what they gave lives in the item
itself, marked in its raw data, and ``reparse`` (which never fetches) keeps it
because of those marks rather than by reading the pages again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from tidings.errors import FetchError
from tidings.extract.detail import PageFields, read_detail
from tidings.identity import is_http_url, normalize_url
from tidings.model import ItemData, Source
from tidings.net import decode_body
from tidings.pipeline.config import CommonConfig, Detail
from tidings.pipeline.env import PipelineEnv
from tidings.pipeline.extraction import PAGE_ACCEPT
from tidings.pipeline.reading import SourceRules
from tidings.pipeline.upsert import DETAIL_KEY

#: the source cursor key of the URLs whose page a run's budget left for the next runs
CARRIED_KEY = "detail_todo"
#: URLs carried at most (the oldest dropped first)
MAX_CARRIED = 500
_OVER = "not fetched yet: over detail.max_fetches this run; fetched first by the next runs"


def carried_of(cursor: Mapping[str, Any]) -> list[str]:
    """The detail pages a source's last runs left for this one (its cursor's own key)."""
    return [str(u) for u in cursor.get(CARRIED_KEY) or ()]


def with_carried(cursor: Mapping[str, Any], todo: Sequence[str]) -> dict[str, Any]:
    """``cursor`` holding ``todo`` for the next runs (nothing when there is none)."""
    return {**cursor, CARRIED_KEY: list(todo)} if todo else dict(cursor)


def carried(prepared: Sequence[ItemData]) -> list[str]:
    """The URLs a run's batch leaves for the next runs (marked ``pending`` here)."""
    out = []
    for item in prepared:
        marks = item.raw.get(DETAIL_KEY)
        if isinstance(marks, Mapping) and marks.get("pending") and marks.get("url"):
            out.append(str(marks["url"]))
    return out[-MAX_CARRIED:]


def detail_step(env: PipelineEnv, source: Source, rules: SourceRules
                ) -> Callable[[list[ItemData]], Awaitable[list[ItemData]]] | None:
    """The reading path's detail step for ``source``, or None when its rule fetches no
    page (none set, or ``max_fetches`` 0). The only place that decides: the reading
    path and ``fill_details`` take its word."""
    config = rules.config
    rule = config.detail
    if rule is None or rule.max_fetches <= 0:
        return None
    return lambda batch: fill_details(env, source, config, rule, batch)


async def fill_details(env: PipelineEnv, source: Source, config: CommonConfig, rule: Detail,
                       batch: list[ItemData]) -> list[ItemData]:
    """``batch`` with the entries not stored yet filled from their pages."""
    tracking = env.settings.tracking_params
    urls = {n: normalize_url(item.url, tracking) for n, item in enumerate(batch)
            if item.url and is_http_url(item.url)}
    known = env.store.known_urls(list(urls.values()))
    waiting = set(carried_of(source.cursor))
    wanted = [n for n, url in urls.items() if url not in known or url in waiting]
    wanted.sort(key=lambda n: urls[n] not in waiting)  # the carried ones first (stable)
    todo, over = wanted[:rule.max_fetches], wanted[rule.max_fetches:]
    filled = await asyncio.gather(*(_one(env, source, config, rule, batch[n]) for n in todo))
    out = list(batch)
    for n, item in zip(todo, filled, strict=True):
        out[n] = item
    for n in over:
        out[n] = replace(batch[n], raw={**batch[n].raw,
                                        DETAIL_KEY: {"pending": _OVER, "url": urls[n]}})
    return out


async def _one(env: PipelineEnv, source: Source, config: CommonConfig, rule: Detail,
               item: ItemData) -> ItemData:
    assert item.url is not None
    options = config.request_for(source.url, item.url, PAGE_ACCEPT)
    try:
        resp = await env.fetcher.fetch(item.url, headers=options.headers,
                                       user_agent=options.user_agent, proxy=options.proxy)
        page = await env.offload(
            read_detail, decode_body(resp), resp.final_url, title_selector=rule.title_selector,
            date_selector=rule.date_selector, summary_selector=rule.summary_selector,
            date_only_by_selector=rule.published_authoritative)
    except FetchError as exc:
        return replace(item, raw={**item.raw, DETAIL_KEY: {"error": str(exc)}})
    return merge(item, page, rule, resp.final_url)


def merge(item: ItemData, page: PageFields, rule: Detail, url: str) -> ItemData:
    """The entry with what its page says (see the module docstring)."""
    changes: dict[str, Any] = {}
    keep: list[str] = []
    if page.title and (not item.title.strip() or rule.title_authoritative):
        changes["title"] = page.title
        if rule.title_authoritative:
            keep.append("title")
    if page.published_at and (item.published_at is None or rule.published_authoritative):
        changes["published_at"] = page.published_at
        if rule.published_authoritative:
            keep.append("published_at")
    if page.summary and not item.summary.strip():
        changes["summary"] = page.summary
    marks = {"url": url, "filled": sorted(changes), "keep": keep}
    return replace(item, **changes, raw={**item.raw, DETAIL_KEY: marks})
