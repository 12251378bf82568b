"""The ``json_list`` reader: fetch, map, keep the raw answer for re-parsing.

The GitHub API is asked with its own media type and, when ``[providers.github]``
gives a token, ``Authorization: Bearer`` - only when the source's host is
``api.github.com``: the token must never travel to another host, not even
through a source whose template links there.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from tidings.errors import ConfigError
from tidings.model import RawResponse, Source, SourceKind
from tidings.net import Response, decode_text
from tidings.readers.base import ReadContext, ReadResult
from tidings.readers.jsonlist.config import JsonListConfig
from tidings.readers.jsonlist.parse import ParsedJson, parse_json_list
from tidings.readers.options import ReaderConfig

JSON_ACCEPT = "application/json, text/json;q=0.9, */*;q=0.5"
HTML_ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8"
GITHUB_API_HOST = "api.github.com"
GITHUB_PROVIDER = "github"


def github_headers(ctx: ReadContext) -> dict[str, str]:
    """The GitHub API's headers for a source on its host; nothing for any other host."""
    if (urlsplit(ctx.source.url).hostname or "").lower() != GITHUB_API_HOST:
        return {}
    headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
    try:
        token = ctx.paid.provider(GITHUB_PROVIDER).api_key
    except ConfigError:
        token = ""  # no token: the API's anonymous rate limit
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


class JsonListReader:
    """Reader of JSON lists and of JSON embedded in pages (kind ``json_list``)."""

    kind = SourceKind("json_list")
    config_model: type[ReaderConfig] = JsonListConfig

    async def read(self, ctx: ReadContext) -> ReadResult:
        config = ctx.config if isinstance(ctx.config, JsonListConfig) else None
        if config is None:
            raise ConfigError(f"{ctx.source.id}: json_list needs its config (url, title…)")
        embedded = bool(config.window_var or config.json_key)
        headers = {"Accept": HTML_ACCEPT if embedded else JSON_ACCEPT, **ctx.request.headers,
                   **github_headers(ctx)}
        resp = await ctx.fetcher.fetch(ctx.source.url, headers=headers,
                                       user_agent=ctx.request.user_agent,
                                       proxy=ctx.request.proxy, defer_decoding=True)
        parsed = await ctx.offload(_parse_response, resp, config)
        raw = RawResponse(url=ctx.source.url, final_url=resp.final_url,
                          fetched_at=resp.fetched_at, status=resp.status,
                          headers=dict(resp.headers), body=resp.content,
                          source_id=ctx.source.id)
        return _result(parsed, (raw,), resp.status, len(resp.content), resp.final_url)

    def parse_raw(self, source: Source, raw: RawResponse) -> ReadResult:
        config = JsonListConfig.model_validate(
            {k: v for k, v in source.config.items() if k in JsonListConfig.model_fields})
        url = raw.final_url or raw.url
        ctype = {k.lower(): v for k, v in raw.headers.items()}.get("content-type", "")
        parsed = parse_json_list(decode_text(raw.body, ctype), url, config)
        return _result(parsed, (), raw.status, len(raw.body), url)


def _parse_response(resp: Response, config: JsonListConfig) -> ParsedJson:
    text = decode_text(resp.content, resp.headers.get("content-type", ""))
    return parse_json_list(text, resp.final_url, config)


def _result(parsed: ParsedJson, raw: tuple[RawResponse, ...], status: int, size: int,
            url: str) -> ReadResult:
    return ReadResult(items=tuple(parsed.items), raw=raw, http_status=status, bytes=size,
                      final_url=url, warnings=tuple(parsed.warnings))
