"""R-EXTRACT-4 against real local servers: Referer, caps, 404, refused redirect."""

from __future__ import annotations

import hashlib
import struct
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import lxml.html
import pytest
from aiohttp import web

from tidings.extract import localize_images
from tidings.net import Fetcher
from tidings.settings import Settings


def _png(color: tuple[int, int, int]) -> bytes:
    raw = b"".join(b"\x00" + bytes(color) * 2 for _ in range(2))

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


RED = _png((255, 0, 0))
BLUE = _png((0, 0, 255))


@dataclass
class Site:
    base: str
    trap_port: int
    hits: list[tuple[str, str]] = field(default_factory=list)  # (host, path)


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    state = Site("", 0)

    async def handle(request: web.Request) -> web.StreamResponse:
        state.hits.append((request.host, request.path))
        page = f"{state.base}/article"
        if request.path in ("/img/red.png", "/img/red-again.png"):
            if request.headers.get("Referer") != page:
                return web.Response(status=403, text="hotlinking refused")
            return web.Response(body=RED, content_type="image/png")
        if request.path == "/img/blue.png":
            return web.Response(body=BLUE, content_type="image/png")
        if request.path == "/img/huge.png":
            return web.Response(body=b"\x89PNG" + b"\0" * 4096, content_type="image/png")
        if request.path == "/img/page.html":
            return web.Response(text="<html></html>", content_type="text/html")
        if request.path == "/img/evil.svg":
            return web.Response(text="<svg onload='x()'/>", content_type="image/svg+xml")
        if request.path == "/img/moved.png":
            raise web.HTTPFound(f"http://127.0.0.2:{state.trap_port}/img/red.png")
        return web.Response(status=404)

    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    main = web.TCPSite(runner, "127.0.0.1", 0)
    await main.start()
    trap = web.TCPSite(runner, "127.0.0.2", 0)
    await trap.start()
    port = main._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    state.trap_port = trap._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    state.base = f"http://127.0.0.1:{port}"
    yield state
    await runner.cleanup()


def _srcs(html: str) -> list[tuple[str, str]]:
    root = lxml.html.fragment_fromstring(html, create_parent="div")
    return [(img.get("src", ""), img.get("data-original-src", "")) for img in root.iter("img")]


async def test_images_are_localized_and_failures_leave_empty_src(
    site: Site, settings: Settings, tmp_path: Path
) -> None:
    html = (
        '<p>Story</p><img src="/img/red.png" srcset="/img/red.png 2x" alt="r">'
        '<img src="img/missing.png"><img src="/img/huge.png"><img src="/img/moved.png">'
        '<img src="/img/page.html"><img src="/img/evil.svg"><img src="/img/red-again.png">'
    )
    media = tmp_path / "media"
    async with Fetcher(settings) as fetcher:
        result = await localize_images(
            html, f"{site.base}/article", fetcher, media, max_bytes=1024, url_prefix="/m/"
        )
    digest = hashlib.sha256(RED).hexdigest()
    local = f"{digest[:2]}/{digest[2:4]}/{digest}.png"
    assert (media / local).read_bytes() == RED
    assert result.stored == (local,)  # the same bytes twice are one file
    srcs = _srcs(result.html)
    assert srcs[0] == (f"/m/{local}", f"{site.base}/img/red.png")
    assert srcs[-1] == (f"/m/{local}", f"{site.base}/img/red-again.png")
    for src, original in srcs[1:-1]:
        assert src == ""
        assert original.startswith(site.base)
    assert "srcset" not in result.html
    assert 'alt="r"' in result.html
    assert "<p>Story</p>" in result.html
    assert len(result.failed) == 5
    # The redirect to 127.0.0.2 was refused by the guard before any connection.
    assert not [h for h in site.hits if h[0].startswith("127.0.0.2")]
    assert any("127.0.0.2" in reason for _url, reason in result.failed)


async def test_referer_is_required_by_the_server(site: Site, settings: Settings) -> None:
    """The guard test above is meaningful: without a Referer the server refuses."""
    async with Fetcher(settings) as fetcher:
        resp = await fetcher.fetch(f"{site.base}/img/red.png", raise_for_status=False)
    assert resp.status == 403


async def test_at_most_max_images_are_fetched(
    site: Site, settings: Settings, tmp_path: Path
) -> None:
    html = '<img src="/img/red.png"><img src="/img/blue.png">'
    async with Fetcher(settings) as fetcher:
        result = await localize_images(
            html, f"{site.base}/article", fetcher, tmp_path, max_images=1
        )
    srcs = _srcs(result.html)
    assert srcs[0][0].startswith("/media/")
    assert srcs[1] == ("", f"{site.base}/img/blue.png")
    assert ("127.0.0.1", "/img/blue.png") not in [(h.split(":")[0], p) for h, p in site.hits]


async def test_html_without_images_is_returned_unchanged(
    settings: Settings, tmp_path: Path
) -> None:
    async with Fetcher(settings) as fetcher:
        result = await localize_images("<p>x</p>", "http://127.0.0.1/", fetcher, tmp_path)
    assert result.html == "<p>x</p>"
    assert result.stored == ()
