"""The paid rendering fallback of extraction (R-EXTRACT-1, R-WEB-2): off by default.

When ``extract_render_provider`` names a ``[providers.NAME]``, a page that
direct fetching and extraction could not read (a failed fetch, no article) is
asked of that Jina-compatible service - ``GET {base_url}/{page URL}`` with
``Authorization: Bearer`` - and the Markdown it returns becomes the body:
converted to HTML by markdown-it (CommonMark; raw HTML in the Markdown is not
passed through) and sanitized like every stored body. The call goes through
the spend ledger, so a spent budget raises ``BudgetExhaustedError`` before
anything is sent and the item stays pending for a later job.
"""

from __future__ import annotations

import lxml.html
from markdown_it import MarkdownIt

from tidings.extract import sanitize_html
from tidings.model import Item, Source
from tidings.net import decode_body
from tidings.pipeline.env import PipelineEnv
from tidings.textutil import collapse_ws

MARKDOWN_ACCEPT = "text/plain, text/markdown;q=0.9, */*;q=0.5"
RENDER_PURPOSE = "render body"
#: below this much text the rendering is no article either (as for direct extraction)
MIN_CHARS = 200
_MARKDOWN = MarkdownIt("commonmark", {"html": False})


def markdown_body(text: str, url: str) -> tuple[str, int]:
    """(sanitized HTML, characters of text) of a rendering; the service's header lines
    (``Title:``, ``URL Source:``, ``Markdown Content:``) are not part of the body."""
    lines = text.splitlines()
    for n, line in enumerate(lines[:12]):
        if line.startswith("Markdown Content:"):
            lines = lines[n + 1:]
            break
    html = sanitize_html(_MARKDOWN.render("\n".join(lines)), url)
    if not html.strip():
        return "", 0
    plain = collapse_ws(lxml.html.fragment_fromstring(html, create_parent="div").text_content())
    return html, len(plain)


async def render_page(env: PipelineEnv, provider_name: str, item: Item,
                      source: Source) -> tuple[str | None, dict[str, object]]:
    """(the body or None, the raw marks) of ``item``'s page as the service renders it."""
    assert item.url is not None
    provider = env.paid.provider(provider_name)
    headers = {"Accept": MARKDOWN_ACCEPT}
    if provider.api_key:
        headers["Authorization"] = f"Bearer {provider.api_key}"
    async with env.paid.call(provider.name, RENDER_PURPOSE, [source.id]):
        resp = await env.fetcher.fetch(f"{provider.base_url}/{item.url}", headers=headers,
                                       proxy=False if provider.direct else None)
    html, chars = await env.offload(markdown_body, decode_body(resp), item.url)
    info = {"method": f"render:{provider.name}", "url": item.url, "chars": chars}
    if chars < MIN_CHARS:
        return None, {"extract": info,
                      "extract_error": f"the rendering holds no article ({chars} characters)"}
    return html, {"extract": info}
