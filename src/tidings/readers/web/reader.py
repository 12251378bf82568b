"""The ``web_list`` reader: a page without a feed, read by its source's declared rules.

``read`` fetches (the page itself, or its rendering through the paid service
in ``markdown`` mode, or whatever a ``script`` adapter needs) and hands the
text to the pure parser of the mode; ``parse_raw`` runs the same parser over
an archived response, so every mode but ``script`` re-parses without the
network (a script adapter's list lives in other responses than the page's).
"""

from __future__ import annotations

from collections.abc import Callable

from tidings.errors import ParseError
from tidings.model import RawResponse, Source, SourceKind
from tidings.net import Response, decode_text
from tidings.readers.base import ReadContext, ReadResult
from tidings.readers.options import ReaderConfig
from tidings.readers.web.adapters import get_adapter
from tidings.readers.web.changelog import parse_changelog
from tidings.readers.web.config import WebListConfig
from tidings.readers.web.html import ParsedList, parse_html_list
from tidings.readers.web.markdown import parse_markdown_list

PAGE_ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8"
MARKDOWN_ACCEPT = "text/plain, text/markdown;q=0.9, */*;q=0.5"
RENDER_PURPOSE = "render list"


def parse_page(text: str, url: str, config: WebListConfig) -> ParsedList:
    """The entries of one response by the config's mode (not ``script``)."""
    parsers: dict[str, Callable[[str, str, WebListConfig], ParsedList]] = {
        "html": parse_html_list,
        "markdown": parse_markdown_list,
        "changelog": lambda t, u, _c: parse_changelog(t, u),
    }
    parser = parsers.get(config.mode)
    if parser is None:
        raise ParseError(f"{url}: mode {config.mode!r} cannot be re-read from one page", url)
    return parser(text, url, config)


def _config(ctx_config: ReaderConfig) -> WebListConfig:
    if not isinstance(ctx_config, WebListConfig):
        return WebListConfig()
    return ctx_config


class WebListReader:
    """Reader of pages without feeds (kind ``web_list``)."""

    kind = SourceKind("web_list")
    config_model: type[ReaderConfig] = WebListConfig

    async def read(self, ctx: ReadContext) -> ReadResult:
        config = _config(ctx.config)
        if config.mode == "script":
            assert config.adapter is not None
            adapter = get_adapter(config.adapter)
            options = adapter.options_model.model_validate(config.adapter_options)
            found = await adapter.read(ctx, options)
            return ReadResult(items=tuple(found.items), raw=tuple(found.raw),
                              warnings=tuple(found.warnings), final_url=ctx.source.url,
                              pages=max(1, len(found.raw)))
        if config.mode == "markdown":
            resp, url = await self._render(ctx, config), ctx.source.url
        else:
            resp = await ctx.fetcher.fetch(
                ctx.source.url, headers={"Accept": PAGE_ACCEPT, **ctx.request.headers},
                user_agent=ctx.request.user_agent, proxy=ctx.request.proxy,
                defer_decoding=True)
            url = resp.final_url
        parsed = await ctx.offload(_parse_response, resp, url, config)
        raw = RawResponse(url=ctx.source.url, final_url=url, fetched_at=resp.fetched_at,
                          status=resp.status, headers=dict(resp.headers), body=resp.content,
                          source_id=ctx.source.id)
        return _result(parsed, (raw,), resp.status, len(resp.content), url)

    def parse_raw(self, source: Source, raw: RawResponse) -> ReadResult:
        config = WebListConfig.model_validate(
            {k: v for k, v in source.config.items() if k in WebListConfig.model_fields})
        url = raw.final_url or raw.url
        text = decode_text(raw.body, {k.lower(): v for k, v in raw.headers.items()}
                           .get("content-type", ""))
        return _result(parse_page(text, url, config), (), raw.status, len(raw.body), url)

    async def _render(self, ctx: ReadContext, config: WebListConfig) -> Response:
        """The page as Markdown from the rendering service, charged to its budget."""
        provider = ctx.paid.provider(config.provider)
        headers = {"Accept": MARKDOWN_ACCEPT}
        if provider.api_key:
            headers["Authorization"] = f"Bearer {provider.api_key}"
        async with ctx.paid.call(provider.name, RENDER_PURPOSE, [ctx.source.id]):
            return await ctx.fetcher.fetch(f"{provider.base_url}/{ctx.source.url}",
                                           headers=headers,
                                           proxy=False if provider.direct else None)


def _parse_response(resp: Response, url: str, config: WebListConfig) -> ParsedList:
    """Decode and parse in one CPU step (a round's turn)."""
    return parse_page(decode_text(resp.content, resp.headers.get("content-type", "")),
                      url, config)


def _result(parsed: ParsedList, raw: tuple[RawResponse, ...], status: int, size: int,
            url: str) -> ReadResult:
    return ReadResult(items=tuple(parsed.items), raw=raw, http_status=status, bytes=size,
                      final_url=url, title=parsed.title, warnings=tuple(parsed.warnings))
