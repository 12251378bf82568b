"""The asyncio network backend under the fetcher: TLS, large bodies, timeouts, reuse.

Real servers on 127.0.0.1; the TLS ones present certificates of a CA made for
the test (trustme), which the fetcher is told to trust.
"""

from __future__ import annotations

import asyncio
import hashlib
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpcore
import pytest
import trustme
from aiohttp import web

from tidings.errors import FetchError
from tidings.net import Fetcher
from tidings.net.stream import AsyncioBackend
from tidings.settings import Settings

BIG = hashlib.sha256(b"seed").digest() * (3 * 1024 * 1024 // 32)  # 3 MiB, above the high water


def _app() -> web.Application:
    async def big(request: web.Request) -> web.Response:
        return web.Response(body=BIG, content_type="application/octet-stream")

    async def small(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app = web.Application()
    app.add_routes([web.get("/big", big), web.get("/small", small)])
    return app


@asynccontextmanager
async def serve_tls(ca: trustme.CA) -> AsyncIterator[str]:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
    runner = web.AppRunner(_app(), handle_signals=False, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
    await site.start()
    try:
        yield f"https://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


@pytest.fixture
def ca() -> trustme.CA:
    return trustme.CA()


def trusting(ca: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context()
    ca.configure_trust(context)
    return context


async def test_https_bodies_arrive_whole_and_connections_are_reused(
    settings: Settings, ca: trustme.CA,
) -> None:
    async with serve_tls(ca) as base, Fetcher(settings, tls=trusting(ca)) as fetcher:
        first = await fetcher.fetch(f"{base}/big", max_bytes=8 * 1024 * 1024)
        second = await fetcher.fetch(f"{base}/small")
        assert first.content == BIG and second.content == b"ok"
        assert fetcher.connections_opened == 1


async def test_an_untrusted_certificate_is_a_one_line_error(
    settings: Settings, ca: trustme.CA,
) -> None:
    async with serve_tls(ca) as base, Fetcher(settings) as fetcher:
        with pytest.raises(FetchError) as caught:
            await fetcher.fetch(f"{base}/small")
    message = str(caught.value)
    assert "\n" not in message and "CERTIFICATE_VERIFY_FAILED" in message.upper().replace(
        " ", "_")


async def test_plain_http_body_above_the_high_water_mark(settings: Settings) -> None:
    runner = web.AppRunner(_app(), handle_signals=False, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        async with Fetcher(settings) as fetcher:
            url = f"http://127.0.0.1:{runner.addresses[0][1]}/big"
            got = await fetcher.fetch(url, max_bytes=8 * 1024 * 1024)
            assert got.content == BIG
    finally:
        await runner.cleanup()


async def test_reads_time_out_as_httpcore_expects() -> None:
    """httpcore turns ReadTimeout into httpx's timeout; anything else would escape."""
    release = asyncio.Event()

    async def stall(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
        await release.wait()
        writer.close()

    server = await asyncio.start_server(stall, "127.0.0.1", 0)
    try:
        stream = await AsyncioBackend().connect_tcp(
            "127.0.0.1", server.sockets[0].getsockname()[1], 5)
        await stream.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        received = b""
        with pytest.raises(httpcore.ReadTimeout):
            while True:
                received += await stream.read(65536, timeout=0.3)
        assert received.endswith(b"partial")
        assert stream.get_extra_info("is_readable") is False
        await stream.aclose()
    finally:
        release.set()
        server.close()
        await server.wait_closed()


async def test_refused_connections_are_connect_errors() -> None:
    probe = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = probe.sockets[0].getsockname()[1]
    probe.close()
    await probe.wait_closed()
    with pytest.raises(httpcore.ConnectError):
        await AsyncioBackend().connect_tcp("127.0.0.1", port, 5)


async def test_a_closed_connection_reads_empty_and_probes_readable() -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server = await asyncio.start_server(hang_up, "127.0.0.1", 0)
    try:
        stream = await AsyncioBackend().connect_tcp(
            "127.0.0.1", server.sockets[0].getsockname()[1], 5)
        assert await stream.read(100, timeout=5) == b""
        assert stream.get_extra_info("is_readable") is True
        with pytest.raises(httpcore.WriteError):
            await stream.write(b"GET / HTTP/1.1\r\n\r\n")
        await stream.aclose()
    finally:
        server.close()
        await server.wait_closed()
