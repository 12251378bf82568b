"""A Google Reader stream page as JSON (``stream/contents``, ``stream/items/contents``),
written straight from the stored rows (R-API-3; see ``web/greader.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from tidings.app import StreamEntry
from tidings.model import Source
from tidings.web import greader_streams as gs
from tidings.web.textout import text_as_html, title_text, web_link


@dataclass(frozen=True, slots=True)
class Page:
    """What a stream page needs from the request, taken on the event loop so that the
    page itself can be read and written on a worker thread."""

    stream: str
    self_url: str
    sources: dict[str, Source]
    base: str


def contents(page: Page, entries: Sequence[StreamEntry], more: str | None) -> bytes:
    """A stream page as JSON, written straight from the stored rows: each item's fixed
    part formatted as bytes, its text (already JSON from the database) put beside it,
    and the page joined once. No dict per item: building one and serializing it cost
    three times as much, and a thousand items' worth of them once pushed the collector
    into full passes over the server's heap (docs/benchmarks.md)."""
    head: dict[str, Any] = {
        "direction": "ltr", "id": page.stream, "title": page.stream,
        "self": [{"href": page.self_url}],
        "updated": (int(max(e.updated_us for e in entries) / 10**6) if entries
                    else int(datetime.now().timestamp()))}
    if more:
        head["continuation"] = more
    shared = _Shared(page)
    parts = [orjson.dumps(head)[:-1] + b',"items":[']
    for e in entries:
        parts += (shared.head(e), e.content_json if e.has_body else _escaped(e.content_json),
                  b"}}")
    if entries:
        parts[1] = parts[1][1:]  # no comma before the first item
    parts.append(b"]}")
    return b"".join(parts)


#: an item of a stream page up to its text (which follows, then ``}}``); the comma
#: before it is dropped for the first item of a page
_ITEM = (b',{"id":"' + gs.LONG_PREFIX.encode() + b'%016x","crawlTimeMsec":"%d",'
         b'"timestampUsec":"%d","published":%d,"updated":%d,"title":%b,"canonical":%b,'
         b'"alternate":%b,"author":%b,"categories":%b,"origin":%b,'
         b'"summary":{"direction":"ltr","content":')


class _Shared:
    """What the items of one source have in common on a page (origin, categories),
    serialized once per page."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.origins: dict[str, bytes] = {}
        self.tags: dict[tuple[str, int, int], bytes] = {}

    def head(self, e: StreamEntry) -> bytes:
        link = web_link(e.url)
        links = orjson.dumps([{"href": link, "type": "text/html"}]) if link else b"[]"
        return _ITEM % (
            e.id, e.discovered_us // 1000, e.sort_us, int(e.sort_us / 10**6),
            int(e.updated_us / 10**6), orjson.dumps(title_text(e.title)), links, links,
            orjson.dumps(title_text(e.author)),
            self.tags.get((e.source_id, e.read, e.starred)) or self._categories(e),
            self.origins.get(e.source_id) or self._origin(e.source_id))

    def _origin(self, source_id: str) -> bytes:
        source = self.page.sources.get(source_id)
        origin = self.origins[source_id] = orjson.dumps({
            "streamId": f"feed/{source_id}",
            "title": title_text((source.title if source else None) or ""),
            "htmlUrl": web_link(source.site_url if source else None)
            or f"{self.page.base}/source/{source_id}"})
        return origin

    def _categories(self, e: StreamEntry) -> bytes:
        source = self.page.sources.get(e.source_id)
        tags = self.tags[(e.source_id, e.read, e.starred)] = orjson.dumps(gs.categories(
            source.folder if source else None, read=bool(e.read), starred=bool(e.starred)))
        return tags


def _escaped(text_json: bytes) -> bytes:
    """A plain-text summary (a JSON string) as the HTML that shows it: ``summary.content``
    is HTML to every client."""
    return orjson.dumps(text_as_html(orjson.loads(text_json) or ""))
