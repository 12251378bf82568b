"""``discover()``: from any address to the feeds it offers (R-DISC-1), with I/O.

The page is fetched once. If it already is a feed, that is the answer. If not,
the candidates the page declares are collected (:mod:`html`), the best few are
fetched and parsed to prove they are feeds, and when the page declares nothing
the usual feed paths of its origin are probed. Candidates that fail their
check stay listed (unverified, after the verified ones): a feed that is down
today is still the site's feed. Probes that fail are not listed: nobody
claimed they exist.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from tidings.discovery.html import FULL_DECLARATION, Found, collect_candidates
from tidings.errors import FetchError, ParseError
from tidings.identity import normalize_url
from tidings.model import FeedCandidate
from tidings.net import Fetcher, decode_body
from tidings.net.types import Response
from tidings.readers.rss import ParsedFeed, parse_feed

__all__ = ["PROBE_PATHS", "VERIFY_LIMIT", "DiscoveryResult", "discover", "feed_type"]

#: Paths tried on the page's origin when the page declares no feed.
PROBE_PATHS = ("/feed", "/rss", "/atom.xml", "/index.xml", "/feed.xml", "/rss.xml")
#: How many of the best candidates are fetched to verify them.
VERIFY_LIMIT = 5
#: Score of a feed found only by probing: it exists, but nobody declared it.
PROBE_SCORE = 6
_ACCEPT = {
    "accept": "application/rss+xml, application/atom+xml, application/feed+json, "
    "application/xml;q=0.9, text/xml;q=0.9, text/html;q=0.8, */*;q=0.5"
}


@dataclass(frozen=True, slots=True)
class DiscoveryResult:
    """What an address offers. ``best`` is the site feed (None when none was found)."""

    page_url: str  # as asked
    final_url: str  # after redirects
    is_feed: bool  # the address itself is a feed
    candidates: tuple[FeedCandidate, ...]  # verified first, then by score
    best: FeedCandidate | None


def feed_type(fmt: str) -> str:
    """rss / atom / json / rdf from :attr:`ParsedFeed.format` (``rss2.0``, ``atom1.0``...)."""
    if fmt.startswith("atom"):
        return "atom"
    if fmt.startswith("json"):
        return "json"
    if fmt in ("rss1.0", "rss0.90"):
        return "rdf"
    return "rss"


async def _parse(resp: Response) -> ParsedFeed | None:
    """The response as a feed, or None when it is not one (parsing off the event loop)."""
    try:
        return await asyncio.to_thread(
            parse_feed,
            resp.content,
            url=resp.final_url,
            content_type=resp.headers.get("content-type", ""),
            headers=resp.headers,
        )
    except ParseError:
        return None


async def _verify(fetcher: Fetcher, cand: FeedCandidate) -> tuple[FeedCandidate, str] | None:
    """The candidate marked verified (with the feed's own title and type) and the
    address it finally answered from; None when it could not be fetched or parsed."""
    try:
        resp = await fetcher.fetch(cand.url, headers=_ACCEPT)
    except FetchError:
        return None
    feed = await _parse(resp)
    if feed is None:
        return None
    checked = replace(
        cand, verified=True, title=feed.title or cand.title, type=feed_type(feed.format)
    )
    return checked, resp.final_url


async def _probe(fetcher: Fetcher, page_url: str, known: set[str]) -> list[FeedCandidate]:
    parts = urlsplit(page_url)
    origin = f"{parts.scheme}://{parts.netloc}"
    tries = [
        FeedCandidate(url=origin + path, score=PROBE_SCORE)
        for path in PROBE_PATHS
        if normalize_url(origin + path) not in known
    ]
    found: list[FeedCandidate] = []
    for result in await asyncio.gather(*(_verify(fetcher, c) for c in tries)):
        if result is None:
            continue
        cand, final_url = result
        key = normalize_url(final_url)
        if key not in known:  # /feed and /rss often redirect to one feed
            known.add(key)
            found.append(replace(cand, url=final_url))
    return found


def _rank(candidates: list[FeedCandidate]) -> tuple[FeedCandidate, ...]:
    return tuple(sorted(candidates, key=lambda c: (not c.verified, -c.score)))


async def discover(url: str, fetcher: Fetcher, *, probe: bool = True) -> DiscoveryResult:
    """Find the feeds ``url`` offers. A failure to fetch ``url`` itself raises
    :class:`FetchError`; failures of candidates and probes only lower what is found."""
    resp = await fetcher.fetch(url, headers=_ACCEPT)
    feed = await _parse(resp)
    if feed is not None:
        own = FeedCandidate(
            url=resp.final_url,
            title=feed.title,
            type=feed_type(feed.format),
            score=FULL_DECLARATION,
            verified=True,
        )
        return DiscoveryResult(url, resp.final_url, True, (own,), own)
    found = collect_candidates(decode_body(resp), resp.final_url)
    checked = await _check(fetcher, found)
    if probe and not any(f.declared for f in found):
        known = {normalize_url(c.url) for c in checked} | {normalize_url(resp.final_url)}
        checked.extend(await _probe(fetcher, resp.final_url, known))
    ranked = _rank(checked)
    return DiscoveryResult(url, resp.final_url, False, ranked, ranked[0] if ranked else None)


async def _check(fetcher: Fetcher, found: list[Found]) -> list[FeedCandidate]:
    """The best VERIFY_LIMIT candidates verified (or left unverified), the rest as found."""
    head = [f.candidate for f in found[:VERIFY_LIMIT]]
    results = await asyncio.gather(*(_verify(fetcher, c) for c in head))
    checked = [r[0] if r is not None else c for c, r in zip(head, results, strict=True)]
    return checked + [f.candidate for f in found[VERIFY_LIMIT:]]
