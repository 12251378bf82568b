"""``bundle_list``: the built-in script adapter, for lists that exist only in a JS bundle.

Some sites (single-page apps built with Vite or webpack) render their news list
from a literal compiled into a script: the HTML has no links, only a root
``<div>`` and ``<script src>`` tags. The adapter reads the page's scripts in
order, then the chunks those scripts name (string literals ending in ``.js``
on the same host), and in the first one holding the ``marker`` text it takes
the array literal under ``key`` that follows the marker, e.g. a home page chunk
with ``sectionTitle:"Blog", blogs:[{title:"…",link:"/blog/…",desc:"…"}]``
(marker ``sectionTitle:"Blog"``, key ``blogs``).

When the marker or the key is gone (the site was rebuilt differently) the run
fails with what was looked for and where; it never falls back to the page's
menus. Every script fetched is kept as a raw response.
"""

from __future__ import annotations

import re
from typing import Annotated, Any
from urllib.parse import urljoin, urlsplit

from pydantic import BaseModel, ConfigDict, Field, StrictStr

from tidings.errors import ParseError
from tidings.model import BodyState, ItemData, RawResponse
from tidings.net import Response, decode_text
from tidings.readers.base import ReadContext
from tidings.readers.jsonlist.jsliteral import parse_literal
from tidings.readers.jsonlist.paths import get_path
from tidings.readers.jsonlist.scan import ScanError, value_end
from tidings.readers.web.adapters import AdapterResult
from tidings.readers.web.html import parse_document, read_date
from tidings.textutil import collapse_ws, shorten

MAX_SCRIPTS = 24  # entry scripts and chunks fetched per run, at most
_CHUNK = re.compile(r"""["']((?:\.{0,2}/)?[\w@~./-]+\.m?js)["']""")
SCRIPT_ACCEPT = "application/javascript, text/javascript, */*;q=0.5"


class BundleOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    marker: Annotated[StrictStr, Field(min_length=3)]
    key: Annotated[StrictStr, Field(pattern=r"^[A-Za-z_$][\w$]*$")]
    title: StrictStr = "title"
    link: StrictStr = "link"
    summary: StrictStr | None = "desc"
    date: StrictStr | None = None


def script_urls(html: str, page_url: str) -> list[str]:
    """The page's ``<script src>`` and module preloads, absolute, in order."""
    root = parse_document(html, page_url)
    found: list[str] = []
    for el in root.iter("script", "link"):
        src = el.get("src") if el.tag == "script" else (
            el.get("href") if el.get("rel") in ("modulepreload", "preload") and
            (el.get("as") in (None, "script")) else None)
        if src:
            url = urljoin(page_url, src.strip())
            if url not in found:
                found.append(url)
    return found


def chunk_urls(script: str, script_url: str) -> list[str]:
    """The scripts a bundle names (its lazily loaded chunks), on its own host."""
    host = urlsplit(script_url).hostname
    out: list[str] = []
    for match in _CHUNK.finditer(script):
        url = urljoin(script_url, match.group(1))
        if urlsplit(url).hostname == host and url not in out:
            out.append(url)
    return out


def find_list(script: str, options: BundleOptions, where: str) -> list[Any]:
    """The array under ``options.key`` after ``options.marker`` in ``script``."""
    at = script.find(options.marker)
    if at < 0:
        raise ParseError(f"{where}: marker {options.marker!r} not found")
    key = re.compile(rf"""(?:["']?){re.escape(options.key)}(?:["']?)\s*:\s*\[""")
    match = key.search(script, at)
    if match is None:
        raise ParseError(f"{where}: no {options.key}:[…] after {options.marker!r}")
    start = match.end() - 1
    try:
        data = parse_literal(script[start:value_end(script, start)])
    except ScanError as exc:
        raise ParseError(f"{where}: {options.key}: {exc}") from None
    return data if isinstance(data, list) else []


def to_items(entries: list[Any], options: BundleOptions, base: str) -> list[ItemData]:
    items = []
    for entry in entries:
        title = collapse_ws(str(get_path(entry, options.title) or ""))
        link = get_path(entry, options.link)
        if not title or not isinstance(link, str) or not link.strip():
            continue
        summary = get_path(entry, options.summary) if options.summary else None
        when = get_path(entry, options.date) if options.date else None
        items.append(ItemData(
            title=title, url=urljoin(base, link.strip()),
            summary=shorten(collapse_ws(str(summary))) if isinstance(summary, str) else "",
            published_at=read_date(str(when)) if when else None,
            body_state=BodyState.PENDING))
    if entries and not items:
        raise ParseError(f"{base}: {len(entries)} entries of {options.key!r}, none with "
                         f"{options.title!r} and {options.link!r}")
    return items


def _raw(ctx: ReadContext, resp: Response) -> RawResponse:
    return RawResponse(url=resp.url, final_url=resp.final_url, fetched_at=resp.fetched_at,
                       status=resp.status, headers=dict(resp.headers), body=resp.content,
                       source_id=ctx.source.id)


class BundleList:
    """The list compiled into a page's scripts (see the module docstring)."""

    name = "bundle_list"
    options_model: type[BaseModel] = BundleOptions

    async def read(self, ctx: ReadContext, options: BundleOptions) -> AdapterResult:
        out = AdapterResult()
        page = await self._get(ctx, ctx.source.url, "text/html,*/*;q=0.8", out)
        queue = script_urls(page, ctx.source.url)
        seen: set[str] = set()
        while queue and len(seen) < MAX_SCRIPTS:
            url = queue.pop(0)
            if url in seen:
                continue
            seen.add(url)
            script = await self._get(ctx, url, SCRIPT_ACCEPT, out)
            if options.marker in script:
                entries = await ctx.offload(find_list, script, options, url)
                out.items = to_items(entries, options, ctx.source.url)
                return out
            queue.extend(u for u in chunk_urls(script, url) if u not in seen)
        raise ParseError(f"{ctx.source.url}: adapter bundle_list: marker {options.marker!r} "
                         f"in none of the {len(seen)} scripts read", ctx.source.url)

    async def _get(self, ctx: ReadContext, url: str, accept: str, out: AdapterResult) -> str:
        own = urlsplit(url).hostname == urlsplit(ctx.source.url).hostname
        extra = ctx.request.headers if own else {}  # a cookie never goes to a CDN
        resp = await ctx.fetcher.fetch(url, headers={"Accept": accept, **extra},
                                       user_agent=ctx.request.user_agent,
                                       proxy=ctx.request.proxy)
        out.raw.append(_raw(ctx, resp))
        return decode_text(resp.content, resp.headers.get("content-type", ""))
