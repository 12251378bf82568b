"""A small news site for the extraction tests, served for real on 127.0.0.1.

Feeds list teasers (R-RSS-2: they end in "…", so bodies stay pending) that
link to article pages, a 404, a page with no article, images, and links to
hosts the extractor must never fetch. Every request is counted by path and by
Host header, so a test can prove what was - and was not - requested.
"""

from __future__ import annotations

import base64
from collections import Counter
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

from aiohttp import web

# a 1x1 PNG and a 1x1 GIF: real images, tiny
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
GIF = base64.b64decode("R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==")

SENTENCES = [
    "The river authority opened the new flood gates on Tuesday after three years of work.",
    "Engineers say the gates can hold back water twice as high as the record of 1954.",
    "Residents of the lower town had waited for the project since the last great flood.",
    "The council paid for most of it, with a smaller share coming from the national fund.",
    "Critics argue that the money would have been better spent on moving homes uphill.",
    "The mayor answered that moving a whole quarter would have taken a generation.",
    "Fishermen worry about what the gates will do to the salmon that swim upstream.",
    "A ladder for the fish was added late in the plans, after a long public hearing.",
]


def article_page(n: int, *, title: str, images: tuple[str, ...] = (),
                 published: str | None = None, author: str | None = None,
                 note: str = "") -> str:
    """A page with chrome around one article of five paragraphs (over 200 characters)."""
    paras = [SENTENCES[(n + i) % len(SENTENCES)] + f" Report number {n}, part {i}."
             for i in range(5)]
    blocks = [f"<p>{p} {SENTENCES[(n + i + 3) % len(SENTENCES)]}</p>"
              for i, p in enumerate(paras)]
    pictures = "".join(f'<figure><img src="{src}" alt="picture"></figure>' for src in images)
    extra = f'<p class="editor-note">{note}</p>' if note else ""
    meta = ""
    if published:
        meta += f'<meta property="article:published_time" content="{published}">'
    if author:
        meta += f'<meta name="author" content="{escape(author)}">'
    return (
        f"<!doctype html><html lang=en><head><title>{escape(title)} - The Gazette</title>"
        f"{meta}</head><body><header><nav><a href='/'>Home</a> <a href='/world'>World</a>"
        f"</nav></header><main><article><h1>{escape(title)}</h1>{''.join(blocks[:2])}"
        f"{pictures}{extra}{''.join(blocks[2:])}</article></main>"
        "<footer>Copyright The Gazette. <a href='/about'>About us</a></footer></body></html>"
    )


SHORT_PAGE = "<!doctype html><html><body><p>Gone fishing.</p></body></html>"


@dataclass
class Entry:
    title: str
    link: str  # absolute, or a path on the site
    published: str | None = "Mon, 30 Nov 2026 08:00:00 GMT"


@dataclass
class Site:
    """Pages by path; feeds by path, each a list of entries; counters of what was asked."""

    pages: dict[str, tuple[int, str, bytes]] = field(default_factory=dict)
    feeds: dict[str, list[Entry]] = field(default_factory=dict)
    requests: Counter[str] = field(default_factory=Counter)
    hosts: Counter[str] = field(default_factory=Counter)
    base: str = ""

    def page(self, path: str, html: str, status: int = 200) -> None:
        self.pages[path] = (status, "text/html; charset=utf-8", html.encode())

    def image(self, path: str, data: bytes = PNG, kind: str = "image/png") -> None:
        self.pages[path] = (200, kind, data)

    def link(self, entry: Entry) -> str:
        return entry.link if "://" in entry.link else self.base + entry.link

    def feed_xml(self, path: str) -> bytes:
        items = "".join(
            f"<item><title>{escape(e.title)}</title><link>{escape(self.link(e))}</link>"
            f"<guid>{escape(self.link(e))}</guid>"
            + (f"<pubDate>{e.published}</pubDate>" if e.published else "")
            + f"<description>{escape(e.title)}: what happened next…</description></item>"
            for e in self.feeds[path])
        return (f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
                f"<title>Gazette {path}</title><link>{self.base}/</link>{items}"
                "</channel></rss>").encode()

    async def handle(self, request: web.Request) -> web.Response:
        path = request.path
        self.requests[path] += 1
        self.hosts[request.host.split(":")[0]] += 1
        if path in self.feeds:
            return web.Response(body=self.feed_xml(path), content_type="application/rss+xml")
        if path in self.pages:
            status, kind, data = self.pages[path]
            return web.Response(status=status, body=data, headers={"Content-Type": kind})
        return web.Response(status=404, text="<html><body>Not found</body></html>",
                            content_type="text/html")

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/{tail:.*}", self.handle)
        return app

    @property
    def total(self) -> int:
        return sum(self.requests.values())


class MapResolver:
    """Resolves the named hosts to fixed addresses; everything else is 127.0.0.1."""

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    async def resolve(self, host: str, port: int) -> list[str]:
        return [self.names.get(host, "127.0.0.1")]
