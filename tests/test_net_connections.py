"""Connections under the Fetcher: many hosts at once, reuse, expiry, TLS, no leaks.

Real servers on 127.0.0.1; names map to it through a table resolver. The TLS
servers present certificates of a CA made for the test (trustme), which the
fetcher is told to trust. Unclosed sockets fail the suite (ResourceWarning is
an error), so every test here also checks that nothing leaks.
"""

from __future__ import annotations

import asyncio
import hashlib
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace

import pytest
import trustme
from aiohttp import web

from netservers import (
    RecordingDialer,
    ServerLog,
    TableResolver,
    ok,
    scripted,
    serve,
    standard_app,
)
from tidings.errors import FetchError, HTTPStatusError
from tidings.net import Fetcher
from tidings.settings import Settings

BIG = hashlib.sha256(b"seed").digest() * (3 * 1024 * 1024 // 32)  # 3 MiB


@pytest.fixture
async def logged() -> AsyncIterator[tuple[int, ServerLog]]:
    log = ServerLog()
    async with serve(standard_app(log)) as base:
        yield int(base.rsplit(":", 1)[1]), log


def _names(count: int) -> list[str]:
    return [f"h{index}.example.com" for index in range(count)]


async def _settle(condition: object, seconds: float = 3.0) -> None:
    """Wait until ``condition()`` holds (sockets close on the loop's next turns)."""
    assert callable(condition)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition() and loop.time() < deadline:
        await asyncio.sleep(0.02)


async def test_many_hosts_run_in_parallel_with_the_per_host_cap_intact(
    settings: Settings, logged: tuple[int, ServerLog]
) -> None:
    port, log = logged
    names = _names(16)
    resolver = TableResolver.fixed({name: ["127.0.0.1"] for name in names})
    async with Fetcher(replace(settings, per_host_concurrency=2), resolver=resolver) as fetcher:
        answers = await asyncio.gather(
            *(fetcher.fetch(f"http://{name}:{port}/busy?wait=0.3") for name in names * 4)
        )
        opened = fetcher.connections_opened
    assert all(resp.content == b"done" for resp in answers)
    assert {name: log.peak[name] for name in names} == dict.fromkeys(names, 2)
    assert log.peak_total == 32  # every host busy at once: no host waited for another
    assert opened == 32  # two connections per host, each reused for the second pair
    assert resolver.calls.count(names[0]) == 2  # one lookup per connection, none per request


async def test_idle_connections_expire_and_the_fetcher_closes_the_rest(
    settings: Settings,
) -> None:
    """Hosts fetched once keep no socket past the keep-alive time; ``aclose`` ends all."""
    names = _names(20)
    resolver = TableResolver.fixed({name: ["127.0.0.1"] for name in names})
    async with scripted(ok(b"x")) as script:
        port = script.url.rsplit(":", 1)[1]
        async with Fetcher(settings, resolver=resolver, keepalive=0.3) as fetcher:
            for name in names:
                assert (await fetcher.fetch(f"http://{name}:{port}/")).content == b"x"
            assert script.open == 20  # kept alive, one per host
            await _settle(lambda: script.open == 0)
            assert script.open == 0
        async with Fetcher(settings, resolver=resolver) as fetcher:
            for name in names:
                await fetcher.fetch(f"http://{name}:{port}/")
            assert script.open == 20
        await _settle(lambda: script.open == 0)
        assert script.open == 0 and script.connections == 40


async def test_a_short_keepalive_twin_shares_the_guard_and_limits_not_the_connections(
    settings: Settings,
) -> None:
    """The crawl's Fetcher (``with_keepalive``): its idle sockets go after its own short
    keep-alive, the parent's stay; dials are counted and politeness kept together."""
    names = _names(10)
    resolver = TableResolver.fixed({name: ["127.0.0.1"] for name in names})
    async with scripted(ok(b"x")) as script:
        port = script.url.rsplit(":", 1)[1]
        async with Fetcher(settings, resolver=resolver) as fetcher:
            twin = fetcher.with_keepalive(0.3)
            assert twin.limiter is fetcher.limiter
            for name in names:
                assert (await twin.fetch(f"http://{name}:{port}/")).content == b"x"
                assert (await twin.fetch(f"http://{name}:{port}/")).content == b"x"
            await fetcher.fetch(f"http://{names[0]}:{port}/")
            assert script.connections == 11  # the twin reused its own, the parent dialed
            assert fetcher.connections_opened == 11
            await _settle(lambda: script.open == 1)
            assert script.open == 1  # the parent's, kept its usual 30 s
            await twin.aclose()
            assert (await fetcher.fetch(f"http://{names[0]}:{port}/")).content == b"x"
            assert script.connections == 11
        await _settle(lambda: script.open == 0)
        assert script.open == 0


async def test_answers_without_a_body_and_error_pages_keep_the_connection(
    settings: Settings, logged: tuple[int, ServerLog]
) -> None:
    """A connection goes back to the pool only once its response was read to the
    end; 304s and small error pages must get there, or every source a conditional
    round finds unchanged costs a new TCP connection."""
    port, _ = logged
    base = f"http://127.0.0.1:{port}"
    async with Fetcher(settings) as fetcher:
        for _ in range(3):
            answer = await fetcher.fetch(f"{base}/status/304", raise_for_status=False)
            assert answer.status == 304 and answer.content == b""
        for path in ("/status/404", "/status/500"):
            with pytest.raises(HTTPStatusError):
                await fetcher.fetch(base + path)
        assert (await fetcher.fetch(base + "/status/204")).status == 204
        assert (await fetcher.fetch(base + "/ok")).status == 200
        assert fetcher.connections_opened == 1


async def test_a_slow_error_page_is_not_waited_for(
    settings: Settings, logged: tuple[int, ServerLog]
) -> None:
    port, _ = logged
    async with Fetcher(settings) as fetcher:
        started = asyncio.get_running_loop().time()
        with pytest.raises(HTTPStatusError, match="HTTP 503"):
            await fetcher.fetch(f"http://127.0.0.1:{port}/drip?status=503&every=0.2")
        assert asyncio.get_running_loop().time() - started < 2


# ------------------------------------------------------------------------- TLS


def _app() -> web.Application:
    async def big(request: web.Request) -> web.Response:
        return web.Response(body=BIG, content_type="application/octet-stream")

    async def small(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app = web.Application()
    app.add_routes([web.get("/big", big), web.get("/small", small)])
    return app


@asynccontextmanager
async def serve_tls(ca: trustme.CA, *names: str) -> AsyncIterator[str]:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(*(names or ("127.0.0.1", "localhost"))).configure_cert(context)
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


async def test_the_certificate_is_checked_for_the_host_name(
    settings: Settings, ca: trustme.CA,
) -> None:
    """The name goes to TLS (SNI and verification) although the checked address is dialed."""
    resolver = TableResolver.fixed({"feeds.example.com": ["127.0.0.1"]})
    allowing = replace(settings, allow_private_hosts=("feeds.example.com",))
    async with serve_tls(ca) as base, Fetcher(allowing, resolver=resolver,
                                              tls=trusting(ca)) as fetcher:
        port = base.rsplit(":", 1)[1]
        with pytest.raises(FetchError) as caught:  # the certificate names 127.0.0.1, localhost
            await fetcher.fetch(f"https://feeds.example.com:{port}/small")
    message = str(caught.value)
    assert "\n" not in message and "hostname mismatch" in message.lower()


async def test_an_untrusted_certificate_is_a_one_line_error(
    settings: Settings, ca: trustme.CA,
) -> None:
    async with serve_tls(ca) as base, Fetcher(settings) as fetcher:
        with pytest.raises(FetchError) as caught:
            await fetcher.fetch(f"{base}/small")
    message = str(caught.value)
    assert "\n" not in message and "CERTIFICATE_VERIFY_FAILED" in message.upper().replace(
        " ", "_")


async def test_a_large_plain_body_arrives_whole(settings: Settings) -> None:
    async with serve(_app()) as base, Fetcher(settings) as fetcher:
        got = await fetcher.fetch(f"{base}/big", max_bytes=8 * 1024 * 1024)
    assert got.content == BIG


@asynccontextmanager
async def connect_proxy(tls_port: int) -> AsyncIterator[tuple[str, list[str]]]:
    """A forward proxy that tunnels every CONNECT to the local TLS server, whatever
    host it names (so nothing leaves the machine); yields its URL and the targets."""
    targets: list[str] = []
    tasks: set[asyncio.Task[None]] = set()

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        method, target = head.split(b" ")[:2]
        assert method == b"CONNECT"
        targets.append(target.decode())
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", tls_port)
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def track(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.ensure_future(handle(reader, writer))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    server = await asyncio.start_server(track, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", targets
    finally:
        server.close()
        await server.wait_closed()
        await asyncio.gather(*tasks, return_exceptions=True)


async def test_https_through_the_proxy_is_a_tunnel_verified_for_the_target(
    settings: Settings, ca: trustme.CA,
) -> None:
    """The target is checked here, the proxy is dialed, TLS is end to end with the target."""
    resolver = TableResolver.fixed({"feeds.example.com": ["93.184.216.34"],
                                    "other.example.com": ["93.184.216.34"]})
    dialer = RecordingDialer()
    async with serve_tls(ca, "feeds.example.com") as base:
        port = int(base.rsplit(":", 1)[1])
        async with connect_proxy(port) as (proxy, targets):
            proxied = replace(settings, allow_private_hosts=(), egress_proxy=proxy)
            async with Fetcher(proxied, resolver=resolver, dial_hook=dialer,
                               tls=trusting(ca)) as fetcher:
                resp = await fetcher.fetch(f"https://feeds.example.com:{port}/small")
                with pytest.raises(FetchError, match=r"(?i)hostname mismatch"):
                    await fetcher.fetch(f"https://other.example.com:{port}/small")
    assert resp.content == b"ok"
    assert targets == [f"feeds.example.com:{port}", f"other.example.com:{port}"]
    assert resolver.calls == ["feeds.example.com", "other.example.com"]
    assert dialer.dialed == []  # the proxy was dialed, never the target
