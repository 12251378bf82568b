"""discover() against real HTTP servers on 127.0.0.1 through tidings.net.Fetcher."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import pytest
from aiohttp import web

from tidings.discovery import PROBE_PATHS, VERIFY_LIMIT, discover
from tidings.errors import ConnectError, HTTPStatusError
from tidings.net import Fetcher
from tidings.settings import Settings

RSS = """<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>{title}</title><link>http://example.org/</link>
<item><title>One</title><link>http://example.org/1</link><guid>1</guid></item>
</channel></rss>"""
ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>{title}</title><id>urn:x</id>
<updated>2025-01-01T00:00:00Z</updated>
<entry><title>One</title><id>urn:1</id><link href="http://example.org/1"/>
<updated>2025-01-01T00:00:00Z</updated></entry></feed>"""
JSONFEED = """{{"version": "https://jsonfeed.org/version/1.1", "title": "{title}",
"items": [{{"id": "1", "url": "http://example.org/1", "content_text": "x"}}]}}"""
HTML_TYPE = "text/html; charset=utf-8"


def rss(title: str) -> tuple[int, str, bytes]:
    return 200, "application/rss+xml", RSS.format(title=title).encode()


def page(head: str, body: str = "") -> tuple[int, str, bytes]:
    html = f"<!DOCTYPE html><html><head><title>P</title>{head}</head><body>{body}</body></html>"
    return 200, HTML_TYPE, html.encode()


Route = tuple[int, str, bytes] | str  # (status, content type, body) or a redirect target


@dataclass
class Site:
    base: str
    seen: list[str] = field(default_factory=list)

    def hits(self, path: str) -> int:
        return self.seen.count(path)


Serve = Callable[[dict[str, Route]], Awaitable[Site]]


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    runners: list[web.AppRunner] = []

    async def start(routes: dict[str, Route]) -> Site:
        site_box: list[Site] = []

        async def handler(request: web.Request) -> web.StreamResponse:
            site_box[0].seen.append(request.path_qs)
            route = routes.get(request.path_qs, routes.get(request.path))
            if route is None:
                return web.Response(status=404, text="no such page")
            if isinstance(route, str):
                raise web.HTTPMovedPermanently(location=route)
            status, ctype, body = route
            return web.Response(status=status, body=body, headers={"Content-Type": ctype})

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handler)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        tcp = web.TCPSite(runner, "127.0.0.1", 0)
        await tcp.start()
        runners.append(runner)
        port = runner.addresses[0][1]
        site_box.append(Site(f"http://127.0.0.1:{port}"))
        return site_box[0]

    yield start
    for runner in runners:
        await runner.cleanup()


@pytest.fixture
async def fetcher(settings: Settings) -> AsyncIterator[Fetcher]:
    async with Fetcher(settings) as f:
        yield f


async def test_a_feed_address_is_its_own_answer(serve: Serve, fetcher: Fetcher) -> None:
    site = await serve({"/old.xml": "/feed.xml", "/feed.xml": rss("Direct Feed")})
    result = await discover(site.base + "/old.xml", fetcher)
    assert result.is_feed
    assert result.page_url == site.base + "/old.xml"
    assert result.final_url == site.base + "/feed.xml"
    assert result.best is not None
    assert (result.best.url, result.best.title, result.best.type) == (
        site.base + "/feed.xml",
        "Direct Feed",
        "rss",
    )
    assert result.best.verified
    assert result.candidates == (result.best,)


async def test_declared_feeds_are_verified_and_ranked(serve: Serve, fetcher: Fetcher) -> None:
    head = """
    <link rel="alternate" type="application/rss+xml" title="Comments" href="/comments/feed/">
    <link rel="alternate" type="application/atom+xml" title="Gone" href="/gone.atom">
    <link rel="alternate" type="application/rss+xml" title="Link title" href="/feed/">
    <link rel="alternate" type="application/feed+json" title="JSON" href="/feed.json">
    """
    site = await serve(
        {
            "/": page(head),
            "/feed/": rss("Site Feed"),
            "/comments/feed/": rss("Comments on Site"),
            "/feed.json": (200, "application/feed+json", JSONFEED.format(title="J").encode()),
        }
    )
    result = await discover(site.base + "/", fetcher)
    assert not result.is_feed
    got = [(c.url.removeprefix(site.base), c.title, c.type, c.verified) for c in result.candidates]
    assert got == [
        ("/feed/", "Site Feed", "rss", True),  # the feed's own title replaces the link's
        ("/feed.json", "J", "json", True),
        ("/comments/feed/", "Comments on Site", "rss", True),
        ("/gone.atom", "Gone", "atom", False),  # declared, 404 today: listed, unverified
    ]
    assert result.best == result.candidates[0]
    assert not any(site.hits(p) for p in PROBE_PATHS)  # declared: nothing probed


async def test_probing_when_nothing_is_declared(serve: Serve, fetcher: Fetcher) -> None:
    atom = (200, "application/atom+xml", ATOM.format(title="Probed").encode())
    site = await serve(
        {
            "/blog/post": page(""),
            "/feed": "/feed/",
            "/rss": "/feed/",  # the same feed under a second name
            "/feed/": atom,
            "/index.xml": page("", "soft 404"),  # 200 but not a feed
            "/rss.xml": (500, "text/plain", b"boom"),
        }
    )
    result = await discover(site.base + "/blog/post", fetcher)
    assert [(c.url, c.type, c.verified, c.title) for c in result.candidates] == [
        (site.base + "/feed/", "atom", True, "Probed")
    ]
    assert result.best == result.candidates[0]
    for path in PROBE_PATHS:
        assert site.hits(path) == 1  # on the origin, not under /blog/


async def test_no_probing_when_asked_not_to(serve: Serve, fetcher: Fetcher) -> None:
    site = await serve({"/": page(""), "/feed": rss("Hidden")})
    result = await discover(site.base + "/", fetcher, probe=False)
    assert result.candidates == ()
    assert result.best is None
    assert site.seen == ["/"]


async def test_anchor_candidates_are_verified_and_probes_add_the_rest(
    serve: Serve, fetcher: Fetcher
) -> None:
    body = '<a href="/rss.xml">RSS</a> <a href="/posts.atom">Atom</a>'
    site = await serve(
        {"/": page("", body), "/rss.xml": rss("From anchor"), "/atom.xml": rss("From probe")}
    )
    result = await discover(site.base + "/", fetcher)
    got = [(c.url.removeprefix(site.base), c.verified) for c in result.candidates]
    assert got == [("/rss.xml", True), ("/atom.xml", True), ("/posts.atom", False)]
    assert site.hits("/rss.xml") == 1  # an anchor already checked is not probed again


async def test_relative_links_resolve_against_the_final_address(
    serve: Serve, fetcher: Fetcher
) -> None:
    head = '<link rel="alternate" type="application/rss+xml" href="feed.xml">'
    site = await serve({"/old": "/new/", "/new/": page(head), "/new/feed.xml": rss("New")})
    result = await discover(site.base + "/old", fetcher)
    assert result.final_url == site.base + "/new/"
    assert result.best is not None
    assert result.best.url == site.base + "/new/feed.xml"
    assert result.best.verified


async def test_only_the_best_few_are_verified(serve: Serve, fetcher: Fetcher) -> None:
    head = "".join(
        f'<link rel="alternate" type="application/rss+xml" href="/f{i}.xml">' for i in range(8)
    )
    routes: dict[str, Route] = {"/": page(head)}
    routes.update({f"/f{i}.xml": rss(f"F{i}") for i in range(8)})
    site = await serve(routes)
    result = await discover(site.base + "/", fetcher)
    assert len(result.candidates) == 8
    assert sum(c.verified for c in result.candidates) == VERIFY_LIMIT
    assert sum(site.hits(f"/f{i}.xml") for i in range(8)) == VERIFY_LIMIT


async def test_page_charset_reaches_the_titles(serve: Serve, fetcher: Fetcher) -> None:
    html = (
        '<html><head><meta charset="gbk">'
        '<link rel="alternate" type="application/rss+xml" title="中文订阅" href="/missing.xml">'
        "</head></html>"
    ).encode("gbk")
    site = await serve({"/": (200, "text/html", html)})
    result = await discover(site.base + "/", fetcher)
    assert [(c.title, c.verified) for c in result.candidates] == [("中文订阅", False)]


async def test_page_errors_propagate(serve: Serve, fetcher: Fetcher) -> None:
    site = await serve({"/": page("")})
    with pytest.raises(HTTPStatusError) as info:
        await discover(site.base + "/nothing-here", fetcher)
    assert info.value.status == 404


async def test_unreachable_page_is_a_fetch_error(fetcher: Fetcher) -> None:
    with socket.socket() as sock:  # a port that was free a moment ago refuses connections
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ConnectError):
        await discover(f"http://127.0.0.1:{port}/", fetcher)
