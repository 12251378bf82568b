"""The RSS reader: conditional GET, per-source request options, parse.

R-RSS-1: validators are stored together with the final URL they came from; a
304 from any other final URL is another server's answer about another
document, so it is ignored and the feed is fetched unconditionally.
R-RSS-9: user agent, cookie, extra headers and proxy come from the source's
config; a 403 is retried once with the Accept headers a browser sends.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from lxml.cssselect import CSSSelector

from tidings.errors import ConfigError, FetchError, HTTPStatusError
from tidings.model import RawResponse, Source, SourceKind
from tidings.net import Body, Response
from tidings.readers.base import ReadContext, ReadResult
from tidings.readers.rss.hints import not_before
from tidings.readers.rss.parse import ParsedFeed, parse_feed

#: keys every kind accepts; the pipeline interprets them (R-SCHED-2)
COMMON_KEYS = frozenset(
    {"filters", "url_allow", "url_rewrite", "summary_only", "extract", "detail", "category"}
)
RSS_KEYS = frozenset({"user_agent", "cookie", "headers", "proxy"})

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

    kind = SourceKind.RSS
    config_keys = RSS_KEYS | COMMON_KEYS

    def validate_config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(config) - self.config_keys)
        if unknown:
            raise ConfigError(
                f"unknown config key {unknown[0]!r} for an rss source "
                f"(allowed: {', '.join(sorted(self.config_keys))})"
            )
        out = dict(config)
        for key in ("user_agent", "cookie"):
            if key in out:
                if not isinstance(out[key], str) or "\n" in out[key] or "\r" in out[key]:
                    raise ConfigError(f"config key {key!r} must be a one-line string")
                out[key] = out[key].strip()
        if "headers" in out:
            out["headers"] = _headers(out["headers"])
        if "category" in out and not isinstance(out["category"], str):
            raise ConfigError("config key 'category' must be a string (an OPML folder name)")
        if "proxy" in out and not isinstance(out["proxy"], bool):
            raise ConfigError("config key 'proxy' must be true or false")
        if "extract" in out:
            out["extract"] = _extract_table(out["extract"])
        return out

    async def read(self, ctx: ReadContext) -> ReadResult:
        source = ctx.source
        config = self.validate_config(source.config)
        etag, modified, saved_url = (source.cursor.get(k) for k in CURSOR_KEYS)
        conditional = bool((etag or modified) and saved_url)
        resp = await self._fetch(ctx, config, etag if conditional else None,
                                 modified if conditional else None)
        if resp.not_modified:
            if resp.final_url == saved_url:
                return ReadResult(
                    cursor=dict(source.cursor), not_modified=True, http_status=304,
                    final_url=resp.final_url,
                    not_before=not_before(resp.headers, None, ctx.now),
                )
            # a 304 from another final URL says nothing about our document
            resp = await self._fetch(ctx, config, None, None)
            if resp.not_modified:
                raise FetchError(resp.final_url, f"{resp.final_url}: 304 to an unconditional GET")
        feed = await ctx.offload(_parse_body, resp.body, url=resp.final_url,
                                 headers=dict(resp.headers))
        return self._result(source, resp, feed, ctx.now)

    def parse_raw(self, source: Source, raw: RawResponse) -> ReadResult:
        feed = parse_feed(raw.body, url=raw.final_url or raw.url, headers=_lower(raw.headers))
        return _from_feed(feed, cursor=dict(source.cursor), raw=(), status=raw.status,
                          size=len(raw.body), final_url=raw.final_url, hint=None)

    async def _fetch(
        self, ctx: ReadContext, config: Mapping[str, Any], etag: str | None, modified: str | None
    ) -> Response:
        headers = _request_headers(config)
        proxy = config.get("proxy")
        agent = config.get("user_agent") or None
        try:
            return await ctx.fetcher.fetch(ctx.source.url, etag=etag, last_modified=modified,
                                           headers=headers, proxy=proxy, user_agent=agent,
                                           defer_decoding=True)
        except HTTPStatusError as exc:
            if exc.status != 403:
                raise
        return await ctx.fetcher.fetch(ctx.source.url, etag=etag, last_modified=modified,
                                       headers={**headers, **BROWSER_HEADERS}, proxy=proxy,
                                       user_agent=agent, defer_decoding=True)

    def _result(self, source: Source, resp: Response, feed: ParsedFeed,
                now: datetime) -> ReadResult:
        cursor: dict[str, Any] = {}
        if resp.etag or resp.last_modified:
            cursor = {"etag": resp.etag, "last_modified": resp.last_modified,
                      "validators_url": resp.final_url}
        raw = RawResponse(url=source.url, final_url=resp.final_url, fetched_at=resp.fetched_at,
                          status=resp.status, headers=dict(resp.headers), body=resp.content,
                          source_id=source.id)
        return _from_feed(feed, cursor=cursor, raw=(raw,), status=resp.status,
                          size=len(resp.content), final_url=resp.final_url,
                          hint=not_before(resp.headers, feed.ttl, now))


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


def _request_headers(config: Mapping[str, Any]) -> dict[str, str]:
    headers = {"Accept": FEED_ACCEPT}
    headers.update(config.get("headers") or {})
    if config.get("cookie"):
        headers["Cookie"] = config["cookie"]
    return headers


def _headers(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise ConfigError("config key 'headers' must be a table of header names to values")
    out: dict[str, str] = {}
    for name, val in value.items():
        if not isinstance(name, str) or not name.strip() or not isinstance(val, str | int):
            raise ConfigError(f"config key 'headers': bad header {name!r}")
        text = str(val)
        if any(c in name + text for c in "\r\n") or ":" in name:
            raise ConfigError(f"config key 'headers': header {name!r} must be one line")
        out[name.strip()] = text.strip()
    return out


EXTRACT_KEYS = ("body_selector", "remove_selectors")


def _extract_table(value: Any) -> dict[str, Any]:
    """Per-source extraction overrides (R-EXTRACT-1): checked here, so a bad selector is
    refused when the source is saved rather than failing every later extraction."""
    if not isinstance(value, Mapping):
        raise ConfigError("config key 'extract' must be a table "
                          "{body_selector = \"css\", remove_selectors = [\"css\", ...]}")
    unknown = sorted(set(value) - set(EXTRACT_KEYS))
    if unknown:
        raise ConfigError(f"config key 'extract': unknown key {unknown[0]!r} "
                          f"(allowed: {', '.join(EXTRACT_KEYS)})")
    out: dict[str, Any] = {}
    selector = value.get("body_selector")
    if selector is not None:
        out["body_selector"] = _css(selector, "body_selector")
    removes = value.get("remove_selectors", [])
    if isinstance(removes, str) or not isinstance(removes, list | tuple):
        raise ConfigError("config key 'extract.remove_selectors' must be a list of CSS selectors")
    out["remove_selectors"] = [_css(s, "remove_selectors") for s in removes]
    return out


def _css(selector: Any, name: str) -> str:
    if not isinstance(selector, str) or not selector.strip():
        raise ConfigError(f"config key 'extract.{name}': {selector!r} is not a CSS selector")
    try:
        CSSSelector(selector.strip())
    except Exception as exc:  # cssselect raises several unrelated types
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(f"config key 'extract.{name}': invalid CSS selector "
                          f"{selector!r} ({reason})") from exc
    return selector.strip()


def _lower(headers: Mapping[str, str]) -> dict[str, str]:
    return {k.lower(): v for k, v in headers.items()}
