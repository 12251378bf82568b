"""The RSS reader: conditional GET, per-source request options, parse.

R-RSS-1: validators are stored together with the final URL they came from; a
304 from any other final URL is another server's answer about another
document, so it is ignored and the feed is fetched unconditionally.
R-RSS-9: user agent, cookie, extra headers and proxy come from the source's
config (checked by the pipeline, handed over as ``ctx.request``); a 403 is
retried once with the Accept headers a browser sends, except those the source's
config sets itself: the user's headers win.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from tidings.errors import FetchError, HTTPStatusError
from tidings.model import RawResponse, Source, SourceKind
from tidings.net import Body, Response
from tidings.readers.base import ReadContext, ReadResult
from tidings.readers.options import ReaderConfig
from tidings.readers.rss.hints import not_before
from tidings.readers.rss.parse import ParsedFeed, parse_feed
from tidings.readers.rss.websub import CURSOR_HUB, CURSOR_TOPIC, websub_links

FEED_ACCEPT = (
    "application/rss+xml, application/atom+xml, application/feed+json, "
    "application/rdf+xml;q=0.9, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.8"
)
#: what a browser sends; some servers answer 403 to anything else (R-RSS-9)
BROWSER_HEADERS = {
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,"
    "image/avif,image/webp,*/*;q=0.8",
    "Accept-Language": "en-US,en;q=0.9,zh-CN;q=0.8,zh;q=0.7",
}
CURSOR_KEYS = ("etag", "last_modified", "validators_url")


class RssReader:
    """Reader for RSS, Atom, RDF and JSON Feed sources (kind ``rss``)."""

    kind = SourceKind("rss")
    #: no keys of its own: the common ones (request options, filters, limits...) do
    config_model: type[ReaderConfig] = ReaderConfig

    async def read(self, ctx: ReadContext) -> ReadResult:
        source = ctx.source
        etag, modified, saved_url = (source.cursor.get(k) for k in CURSOR_KEYS)
        conditional = bool((etag or modified) and saved_url)
        resp = await self._fetch(ctx, etag if conditional else None,
                                 modified if conditional else None)
        if resp.not_modified:
            if resp.final_url == saved_url:
                return ReadResult(
                    cursor=dict(source.cursor), not_modified=True, http_status=304,
                    final_url=resp.final_url,
                    not_before=not_before(resp.headers, None, ctx.now),
                )
            # a 304 from another final URL says nothing about our document
            resp = await self._fetch(ctx, None, None)
            if resp.not_modified:
                raise FetchError(resp.final_url, f"{resp.final_url}: 304 to an unconditional GET")
        feed = await ctx.offload(_parse_body, resp.body, url=resp.final_url,
                                 headers=dict(resp.headers))
        return self._result(source, resp, feed, ctx.now)

    def parse_raw(self, source: Source, raw: RawResponse) -> ReadResult:
        feed = parse_feed(raw.body, url=raw.final_url or raw.url, headers=_lower(raw.headers))
        return _from_feed(feed, cursor=dict(source.cursor), raw=(), status=raw.status,
                          size=len(raw.body), final_url=raw.final_url, hint=None)

    async def _fetch(self, ctx: ReadContext, etag: str | None, modified: str | None
                     ) -> Response:
        options = ctx.request
        headers = {"Accept": FEED_ACCEPT, **options.headers}
        proxy, agent = options.proxy, options.user_agent
        try:
            return await ctx.fetcher.fetch(ctx.source.url, etag=etag, last_modified=modified,
                                           headers=headers, proxy=proxy, user_agent=agent,
                                           defer_decoding=True)
        except HTTPStatusError as exc:
            if exc.status != 403:
                raise
        return await ctx.fetcher.fetch(ctx.source.url, etag=etag, last_modified=modified,
                                       headers=browser_headers(options.headers), proxy=proxy,
                                       user_agent=agent, defer_decoding=True)

    def _result(self, source: Source, resp: Response, feed: ParsedFeed,
                now: datetime) -> ReadResult:
        cursor: dict[str, Any] = {}
        if resp.etag or resp.last_modified:
            cursor = {"etag": resp.etag, "last_modified": resp.last_modified,
                      "validators_url": resp.final_url}
        hub, topic = websub_links(resp.content, resp.headers)
        if hub:  # R-RSS-8: the subscriber (app.websub) subscribes while this is named
            cursor.update({CURSOR_HUB: hub, CURSOR_TOPIC: topic or resp.final_url})
        raw = RawResponse(url=source.url, final_url=resp.final_url, fetched_at=resp.fetched_at,
                          status=resp.status, headers=dict(resp.headers), body=resp.content,
                          source_id=source.id)
        return _from_feed(feed, cursor=cursor, raw=(raw,), status=resp.status,
                          size=len(resp.content), final_url=resp.final_url,
                          hint=not_before(resp.headers, feed.ttl, now))


def browser_headers(configured: Mapping[str, str]) -> dict[str, str]:
    """The retry's headers: a browser's, except where the source's config names its own
    (in any letter case): the user's headers always win."""
    mine = {k.lower() for k in configured}
    return {**{k: v for k, v in BROWSER_HEADERS.items() if k.lower() not in mine},
            **configured}


def _parse_body(body: Body, *, url: str, headers: Mapping[str, str]) -> ParsedFeed:
    """Decode and parse in one CPU step: until its turn, a round holds the body as sent."""
    return parse_feed(body.content(), url=url, headers=headers)


def _from_feed(
    feed: ParsedFeed, *, cursor: dict[str, Any], raw: tuple[RawResponse, ...], status: int,
    size: int, final_url: str, hint: datetime | None,
) -> ReadResult:
    return ReadResult(
        items=feed.items, cursor=cursor, raw=raw, http_status=status, bytes=size,
        final_url=final_url, title=feed.title, site_url=feed.site_url, not_before=hint,
        warnings=feed.warnings,
    )


def _lower(headers: Mapping[str, str]) -> dict[str, str]:
    return {k.lower(): v for k, v in headers.items()}
