"""A small feed farm for the collection tests, served for real on 127.0.0.1.

Hundreds of RSS/Atom feeds with deterministic items, wire stories reprinted
across feeds under different tracking parameters, ETag/Last-Modified with 304,
slow feeds, failing feeds (404, 500, HTML error pages, garbage), and a ``tick``
that makes some feeds publish new items. The farm knows the truth: the set of
unique normalized URLs every feed should contribute.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from xml.sax.saxutils import escape

from aiohttp import web

T0 = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
TRACKERS = ["utm_source=rss&utm_medium=feed", "spm=a1.b2", "from=timeline", "fbclid=xyz",
            "ref=homepage", "utm_campaign=wire"]


@dataclass
class FeedSpec:
    index: int
    kind: str  # ok, slow, e404, e500, html, garbage
    atom: bool
    items: list[tuple[str, str, datetime]] = field(default_factory=list)  # (link, title, date)


class Farm:
    def __init__(self, feeds: int = 200, *, wire_stories: int = 10, per_feed: int = 8) -> None:
        self.specs: list[FeedSpec] = []
        self.requests: dict[str, int] = {}
        self.statuses: dict[int, int] = {}
        self.round = 0
        self.base = ""
        for i in range(feeds):
            kind = "ok"
            if i % 50 == 7:
                kind = "e404"
            elif i % 50 == 17:
                kind = "e500"
            elif i % 50 == 27:
                kind = "html"
            elif i % 50 == 37:
                kind = "garbage"
            elif i % 25 == 3:
                kind = "slow"
            spec = FeedSpec(i, kind, atom=i % 3 == 0)
            for j in range(per_feed):
                when = T0 - timedelta(hours=j * 5 + i % 7)
                spec.items.append((f"/posts/{i}/{j}", f"Post {j} of feed {i}", when))
            if i % 4 == 0:  # this feed reprints two wire stories, with its own tracking
                for w in ((i // 4) % wire_stories, (i // 4 + 3) % wire_stories):
                    tracker = TRACKERS[i % len(TRACKERS)]
                    spec.items.append((f"/wire/{w}?{tracker}", f"Wire story {w}",
                                       T0 - timedelta(hours=1 + w)))
            self.specs.append(spec)

    # ------------------------------------------------------------------ truth
    def ok_feeds(self) -> list[FeedSpec]:
        return [s for s in self.specs if s.kind in ("ok", "slow")]

    def unique_paths(self) -> set[str]:
        """Normalized item paths every correct collector ends up with."""
        return {link.split("?")[0] for s in self.ok_feeds() for link, _, _ in s.items}

    def tick(self, every: int = 5) -> set[str]:
        """Every ``every``-th healthy feed publishes one new item; returns the new paths."""
        self.round += 1
        new = set()
        for spec in self.ok_feeds()[::every]:
            path = f"/posts/{spec.index}/new{self.round}"
            spec.items.insert(0, (path, f"New post {self.round} of feed {spec.index}",
                                  T0 + timedelta(hours=self.round)))
            new.add(path)
        return new

    # ------------------------------------------------------------------ serving
    def _document(self, spec: FeedSpec) -> bytes:
        host = self.base
        if spec.atom:
            entries = "".join(
                f"<entry><id>{escape(host + link)}</id><title>{escape(title)}</title>"
                f'<link href="{escape(host + link)}"/><updated>{when.isoformat()}</updated>'
                f"<content type=\"html\">{escape('<p>' + title + ' body text.</p>')}</content>"
                "</entry>" for link, title, when in spec.items)
            return (f'<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
                    f"<title>Feed {spec.index}</title><id>{host}/f/{spec.index}</id>"
                    f"<updated>{T0.isoformat()}</updated>{entries}</feed>").encode()
        items = "".join(
            f"<item><title>{escape(title)}</title><link>{escape(host + link)}</link>"
            f"<guid>{escape(host + link)}</guid><pubDate>{format_datetime(when)}</pubDate>"
            f"<description>{escape('<p>' + title + ' body text.</p>')}</description></item>"
            for link, title, when in spec.items)
        return (f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
                f"<title>Feed {spec.index}</title><link>{host}/</link>{items}</channel></rss>"
                ).encode()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        index = int(request.match_info["n"])
        self.requests[str(index)] = self.requests.get(str(index), 0) + 1
        spec = self.specs[index]
        if spec.kind == "e404":
            return self._count(web.Response(status=404, text="not found"))
        if spec.kind == "e500":
            return self._count(web.Response(status=500, text="oops"))
        if spec.kind == "html":
            return self._count(web.Response(
                text="<html><head><title>Error</title></head><body>Try later</body></html>",
                content_type="text/html"))
        if spec.kind == "garbage":
            return self._count(web.Response(body=b"\x00\x01garbage<<<", content_type="text/xml"))
        if spec.kind == "slow":
            await asyncio.sleep(0.3)
        body = self._document(spec)
        etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
        if request.headers.get("If-None-Match") == etag:
            return self._count(web.Response(status=304, headers={"ETag": etag}))
        return self._count(web.Response(body=body, headers={"ETag": etag},
                                        content_type="application/xml"))

    def _count(self, response: web.Response) -> web.Response:
        self.statuses[response.status] = self.statuses.get(response.status, 0) + 1
        return response

    def opml(self) -> bytes:
        outlines = "".join(f'<outline type="rss" text="Feed {s.index}" '
                           f'xmlUrl="{self.base}/feeds/{s.index}.xml"/>' for s in self.specs)
        return (f'<?xml version="1.0"?><opml version="2.0"><head><title>farm</title></head>'
                f"<body>{outlines}</body></opml>").encode()

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/feeds/{n}.xml", self.handle)
        return app


@contextmanager
def serve_app(app: web.Application, host: str = "127.0.0.1") -> Iterator[str]:
    """Run an aiohttp app in a background thread; yields its base URL."""
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app, access_log=None)
    ready = threading.Event()
    holder: dict[str, str] = {}

    async def start() -> None:
        await runner.setup()
        site = web.TCPSite(runner, host, 0)
        await site.start()
        server = site._server
        assert server is not None
        port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        holder["url"] = f"http://{host}:{port}"
        ready.set()

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(start())
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    ready.wait(10)
    try:
        yield holder["url"]
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


@contextmanager
def running_farm(farm: Farm) -> Iterator[Farm]:
    with serve_app(farm.app()) as url:
        farm.base = url
        yield farm
