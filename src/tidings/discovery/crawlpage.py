"""One crawler request and what the crawler keeps of its answer (R-DISC-3), with I/O.

Each function fetches one address and returns a small JSON-able dict, never
raising for a bad answer: the crawler stores the dict before it acts on it,
so a crawl resumed after a kill reuses it instead of fetching again. A failed
request is ``{"error": "one line"}``.

* :func:`read_home` - a site's page: its title, abstract, feed candidates,
  blogroll (at most ``follow`` sites, and how many it named) and the pages
  that may hold its blogroll; or, when the address is a feed, that feed;
* :func:`read_roll_page` - a "links" / "友情链接" page: its blogroll;
* :func:`read_probe` - a guessed feed address: the feed, if it parses.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from lxml import etree

from tidings.discovery.abstract import find_abstract_in, site_title
from tidings.discovery.autodiscover import feed_type
from tidings.discovery.blogroll import blogroll_pages, find_blogroll_in
from tidings.discovery.html import collect_candidates, parse_html
from tidings.errors import FetchError, ParseError
from tidings.net import Fetcher, decode_body
from tidings.net.types import Response
from tidings.readers.rss import parse_feed

__all__ = ["PageRules", "read_home", "read_probe", "read_roll_page"]

_HTML_TYPES = ("text/html", "application/xhtml+xml", "")
_FEED_ACCEPT = ("application/rss+xml, application/atom+xml, application/feed+json, "
                "application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5")
#: pages bigger than this are parsed on a worker thread, not on the event loop
_INLINE_BYTES = 256 * 1024
_CANDIDATES_KEPT = 8


@dataclass(frozen=True, slots=True)
class PageRules:
    """How the crawler asks: who it says it is, how long and how much it will wait for."""

    user_agent: str
    timeout: float = 15.0
    max_bytes: int = 1024 * 1024
    follow: int = 100  # sites taken from one blogroll at most


async def _get(fetcher: Fetcher, url: str, rules: PageRules, accept: str) -> Response:
    return await fetcher.fetch(url, timeout=rules.timeout, max_bytes=rules.max_bytes,
                               user_agent=rules.user_agent, headers={"accept": accept})


async def _cpu(resp: Response, work: Any, *args: Any) -> Any:
    if len(resp.content) > _INLINE_BYTES:
        return await asyncio.to_thread(work, *args)
    return work(*args)


def _as_feed(resp: Response) -> dict[str, Any] | None:
    try:
        feed = parse_feed(resp.content, url=resp.final_url, headers=resp.headers)
    except ParseError:
        return None
    return {"url": resp.final_url, "type": feed_type(feed.format), "title": feed.title or ""}


def _roll(root: etree._Element, url: str, follow: int) -> dict[str, Any]:
    roll = find_blogroll_in(root, url)
    links = roll.links if roll is not None else ()
    return {"roll": [[link.url, link.text] for link in links[:follow]], "roll_total": len(links)}


def _analyse_home(resp: Response, follow: int) -> dict[str, Any]:
    url = resp.final_url
    html = decode_body(resp)
    root = parse_html(html)
    if root is None:
        return {"final_url": url, "title": "", "abstract": "", "feeds": [], "roll": [],
                "roll_total": 0, "roll_pages": []}
    found = collect_candidates(html, url, parsed=root)
    feeds = [[f.candidate.url, f.candidate.type, f.candidate.title, f.candidate.score,
              f.declared] for f in found[:_CANDIDATES_KEPT]]
    out: dict[str, Any] = {"final_url": url, "title": site_title(root), "feeds": feeds}
    out.update(_roll(root, url, follow))
    out["roll_pages"] = [] if out["roll"] else blogroll_pages(root, url)
    out["abstract"] = find_abstract_in(root)  # last: it prunes the tree
    return out


def _error(exc: FetchError) -> dict[str, Any]:
    return {"error": str(exc).splitlines()[0][:400]}


def _not_html(resp: Response) -> dict[str, Any] | None:
    kind = resp.content_type
    if kind in _HTML_TYPES or kind.endswith("+html"):
        return None
    feed = _as_feed(resp) if ("xml" in kind or "json" in kind or "rss" in kind) else None
    if feed is not None:
        return {"final_url": resp.final_url, "feed": feed}
    return {"error": f"{resp.url}: not an HTML page ({kind})"}


async def read_home(fetcher: Fetcher, url: str, rules: PageRules) -> dict[str, Any]:
    try:
        resp = await _get(fetcher, url, rules, "text/html, application/xhtml+xml, */*;q=0.5")
        other = _not_html(resp)
        if other is not None:
            return other
        result: dict[str, Any] = await _cpu(resp, _analyse_home, resp, rules.follow)
    except FetchError as exc:
        return _error(exc)
    return result


def _analyse_roll(resp: Response, follow: int) -> dict[str, Any]:
    root = parse_html(decode_body(resp))
    return {"roll": [], "roll_total": 0} if root is None else _roll(root, resp.final_url, follow)


async def read_roll_page(fetcher: Fetcher, url: str, rules: PageRules) -> dict[str, Any]:
    try:
        resp = await _get(fetcher, url, rules, "text/html, */*;q=0.5")
        if resp.content_type not in _HTML_TYPES:
            return {"error": f"{url}: not an HTML page ({resp.content_type})"}
        result: dict[str, Any] = await _cpu(resp, _analyse_roll, resp, rules.follow)
    except FetchError as exc:
        return _error(exc)
    return result


async def read_probe(fetcher: Fetcher, url: str, rules: PageRules) -> dict[str, Any]:
    try:
        resp = await _get(fetcher, url, rules, _FEED_ACCEPT)
        feed = await asyncio.to_thread(_as_feed, resp) if len(resp.content) > _INLINE_BYTES \
            else _as_feed(resp)
    except FetchError as exc:
        return _error(exc)
    # a page where a feed should be: sites that answer every address with 200
    return {"feed": feed, "html": feed is None and resp.content_type in _HTML_TYPES}
