"""Per-host connection pools: many hosts at once, limits per host, eviction closes sockets."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Iterable
from dataclasses import replace
from typing import Any

import httpcore
import pytest

from netservers import RecordingDialer, ServerLog, TableResolver, serve, standard_app
from tidings.errors import HTTPStatusError
from tidings.net import Fetcher
from tidings.net.addresses import AllowList
from tidings.net.backend import GuardedBackend
from tidings.net.pools import HostPools
from tidings.net.stream import readable
from tidings.settings import Settings


class _TrackedStream(httpcore.AsyncNetworkStream):
    """A real loopback stream that remembers whether it was closed."""

    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self.inner = inner
        self.closed = False

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self.inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self.inner.write(buffer, timeout)

    async def aclose(self) -> None:
        self.closed = True
        await self.inner.aclose()

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


class _TrackingDialer(RecordingDialer):
    """Dials loopback only (as RecordingDialer) and keeps every stream it opened, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.streams: list[_TrackedStream] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        stream = _TrackedStream(
            await super().connect_tcp(host, port, timeout, local_address, socket_options))
        self.streams.append(stream)
        return stream


@pytest.fixture
async def logged() -> AsyncIterator[tuple[int, ServerLog]]:
    log = ServerLog()
    async with serve(standard_app(log)) as base:
        yield int(base.rsplit(":", 1)[1]), log


def _names(count: int) -> list[str]:
    return [f"h{index}.example.com" for index in range(count)]


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
        assert len(fetcher.pools) == 16
        opened = fetcher.connections_opened
    assert all(resp.content == b"done" for resp in answers)
    assert {name: log.peak[name] for name in names} == dict.fromkeys(names, 2)
    assert log.peak_total == 32  # every host busy at once: no host waited for another
    assert opened == 32  # two connections per host, each reused for the second pair


async def test_evicted_pools_close_their_connections(
    settings: Settings, logged: tuple[int, ServerLog]
) -> None:
    port, _ = logged
    names = _names(5)
    resolver = TableResolver.fixed({name: ["127.0.0.1"] for name in names})
    dialer = _TrackingDialer()
    async with Fetcher(
        settings, resolver=resolver, network_backend=dialer, max_host_pools=3
    ) as fetcher:
        for name in names:  # one keep-alive connection each, in this order
            assert (await fetcher.fetch(f"http://{name}:{port}/ok")).content == b"hello"
        assert [s.closed for s in dialer.streams] == [True, True, False, False, False]
        assert len(fetcher.pools) == 3
        assert fetcher.pools.evicted == 2
        assert (await fetcher.fetch(f"http://{names[0]}:{port}/ok")).content == b"hello"
        assert len(dialer.streams) == 6  # h0 lost its pool: a new connection
        assert [s.closed for s in dialer.streams] == [True, True, True, False, False, False]
    assert all(s.closed for s in dialer.streams)  # aclose closes every pool


async def test_a_pool_with_a_request_in_flight_is_not_evicted(
    settings: Settings, logged: tuple[int, ServerLog]
) -> None:
    port, _ = logged
    names = _names(3)
    resolver = TableResolver.fixed({name: ["127.0.0.1"] for name in names})
    dialer = _TrackingDialer()
    async with Fetcher(
        settings, resolver=resolver, network_backend=dialer, max_host_pools=1
    ) as fetcher:
        slow = asyncio.create_task(fetcher.fetch(f"http://{names[0]}:{port}/busy?wait=0.4"))
        await asyncio.sleep(0.1)
        assert (await fetcher.fetch(f"http://{names[1]}:{port}/ok")).content == b"hello"
        assert len(fetcher.pools) == 2  # over the cap rather than cut a live request
        assert (await slow).content == b"done"
        assert not dialer.streams[0].closed
        await fetcher.fetch(f"http://{names[2]}:{port}/ok")
        assert names[2] in fetcher.pools
        assert len(fetcher.pools) == 1
        assert [s.closed for s in dialer.streams] == [True, True, False]


async def test_pools_idle_past_their_expiry_are_closed() -> None:
    backend = GuardedBackend(TableResolver({}), AllowList())
    pools = HostPools(backend, connections=2, idle_expiry=0.05)
    pools.release(await pools.acquire("a.example.com"))
    busy = await pools.acquire("b.example.com")
    await asyncio.sleep(0.1)
    await pools.acquire("c.example.com")
    assert "a.example.com" not in pools
    assert "b.example.com" in pools  # stale but busy
    assert pools.evicted == 1
    pools.release(busy)
    await pools.aclose()
    assert len(pools) == 0


async def test_answers_without_a_body_and_error_pages_keep_the_connection(
    settings: Settings, logged: tuple[int, ServerLog]
) -> None:
    """A connection goes back to its pool only once its response was read to the
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


def test_an_idle_connection_reads_as_closed_once_the_server_sends_or_hangs_up() -> None:
    """The pool drops an idle connection that is readable (the server closed it, or
    sent what nobody asked for); the probe reads the socket directly."""
    for hang_up in (False, True):
        ours, theirs = socket.socketpair()
        with ours, theirs:
            assert readable(ours) is False
            if hang_up:
                theirs.shutdown(socket.SHUT_WR)
            else:
                theirs.sendall(b"HTTP/1.1 200 OK\r\n")
            assert readable(ours) is True
