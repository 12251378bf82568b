"""Cost of the guard: tidings.net.Fetcher versus plain aiohttp and plain httpx, same run.

A minimal keep-alive HTTP server runs in a child process on 127.0.0.1 (so the server does
not share the client's event loop). The clients make the same requests at the
same concurrency; repetitions rotate who goes first so drift hits all. tidings
speaks HTTP through aiohttp, so plain aiohttp is the floor: the ratio to it is
what the guard, politeness, budget and capped body reader cost. Politeness is
switched off for the headline figure (per-host concurrency = the benchmark's
concurrency, no spacing): it is a deliberate wait, not overhead. One extra
informational run uses the default politeness settings.

    .venv/bin/python benchmarks/http_fetch.py [--requests 2000] [--concurrency 32] [--reps 5]

Many hosts (``--hosts 32``): one aiohttp server in a child process listens on
127.0.0.2 .. 127.0.0.33 (one port, loopback only) and tidings, plain httpx and
aiohttp each fetch ``--requests`` from it with 64 requests in flight, worker
``i`` sticking to host ``i % 32`` (so 2 per host: tidings' default politeness
cap never makes it wait; spacing is off). Reps rotate who goes first.

    .venv/bin/python benchmarks/http_fetch.py --hosts 32 [--requests 2000] [--reps 5]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

import aiohttp
import httpx
from aiohttp import web

from tidings.net import Fetcher
from tidings.settings import Settings, load_settings

BODY = b"<rss><channel><title>bench</title></channel></rss>" * 40  # about 2 KB


_REPLY = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/rss+xml\r\n"
    b"Content-Length: " + str(len(BODY)).encode() + b"\r\n\r\n" + BODY
)


class _KeepAliveServer(asyncio.Protocol):
    """A minimal HTTP/1.1 server (GET only, keep-alive) so the server costs little CPU."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while b"\r\n\r\n" in self.buffer:
            _, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
            self.transport.write(_REPLY)


def _serve(port_out: multiprocessing.SimpleQueue[int]) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(_KeepAliveServer, "127.0.0.1", 0, backlog=1024)
        port_out.put(server.sockets[0].getsockname()[1])
        await asyncio.Event().wait()

    asyncio.run(main())


Get = Callable[[str], Awaitable[bytes]]
#: the URL worker ``i`` asks for as the run's ``n``th request
Pick = Callable[[int, int], str]


async def _drive(get: Get, pick: Pick, requests: int, concurrency: int) -> tuple[float, float]:
    """Requests per wall second, and client CPU ms per request, for ``requests`` calls."""
    remaining = requests

    async def worker(i: int) -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            body = await get(pick(i, requests - remaining))
            assert body == BODY

    start, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker(i) for i in range(concurrency)))
    wall = time.perf_counter() - start
    return requests / wall, (time.process_time() - cpu) * 1000 / requests


def _tidings_get(fetcher: Fetcher) -> Get:
    async def get(url: str) -> bytes:
        return (await fetcher.fetch(url)).content

    return get


def _aiohttp_get(session: aiohttp.ClientSession) -> Get:
    async def get(url: str) -> bytes:
        async with session.get(url) as response:
            response.raise_for_status()
            return await response.read()

    return get


def _httpx_get(client: httpx.AsyncClient) -> Get:
    async def get(url: str) -> bytes:
        response = await client.get(url)
        response.raise_for_status()
        return response.content

    return get


async def _compare(pick: Pick, settings: Settings, args: argparse.Namespace, *,
                   limits: httpx.Limits, warm_up: int) -> dict[str, list[tuple[float, float]]]:
    """The three clients, each warmed up, then ``args.reps`` runs of each; the peers' pools
    are sized by ``limits`` (tidings sizes its own from ``settings``)."""
    runs: dict[str, list[tuple[float, float]]] = {"tidings": [], "aiohttp": [], "httpx": []}
    connector = aiohttp.TCPConnector(limit=limits.max_connections or 0, limit_per_host=0)
    async with (
        Fetcher(settings) as fetcher,
        aiohttp.ClientSession(connector=connector) as session,
        httpx.AsyncClient(limits=limits, trust_env=False) as client,
    ):
        getters = {"tidings": _tidings_get(fetcher), "aiohttp": _aiohttp_get(session),
                   "httpx": _httpx_get(client)}
        for get in getters.values():  # warm every pool
            await _drive(get, pick, warm_up, args.concurrency)
        order = list(getters)
        for rep in range(args.reps):
            for name in order[rep % 3 :] + order[: rep % 3]:  # rotate who goes first
                runs[name].append(await _drive(getters[name], pick, args.requests,
                                               args.concurrency))
    return runs


#: plain httpx's pool in the single-host run (32 in flight)
LIMITS = httpx.Limits(max_connections=256, max_keepalive_connections=64, keepalive_expiry=30)


async def _run(url: str, settings: Settings, args: argparse.Namespace) -> None:
    runs = await _compare(lambda i, n: url, settings, args, limits=LIMITS, warm_up=200)
    print(f"{args.requests} requests x {args.reps} reps, concurrency {args.concurrency}, "
          f"politeness off (per_host_concurrency={settings.per_host_concurrency}, delay 0), "
          f"load average {os.getloadavg()[0]:.2f}")
    _report_all(runs)


def _report_all(runs: dict[str, list[tuple[float, float]]]) -> None:
    """Each client's medians, then tidings' ratio to each peer of the same run."""
    t_rate, t_cpu = _report("tidings.net Fetcher", runs["tidings"])
    peers = {"aiohttp": _report("aiohttp session    ", runs["aiohttp"]),
             "httpx": _report("plain httpx client ", runs["httpx"])}
    for peer, (rate, cpu) in peers.items():
        print(f"  ratio tidings/{peer:8}: {t_rate / rate:.2f} req/s, CPU per request "
              f"x{t_cpu / cpu:.2f}")


def _report(name: str, runs: list[tuple[float, float]]) -> tuple[float, float]:
    rate = statistics.median(r for r, _ in runs)
    cpu = statistics.median(c for _, c in runs)
    print(f"  {name}: {rate:7.0f} req/s, {cpu:.3f} client CPU ms/req "
          f"(runs: {', '.join(f'{r:.0f}' for r, _ in runs)} req/s)")
    return rate, cpu


async def _polite(url: str, settings: Settings) -> None:
    async with Fetcher(settings) as fetcher:
        rate, _ = await _drive(_tidings_get(fetcher), lambda i, n: url, 20, 8)
    print(f"  default politeness ({settings.per_host_concurrency} per host, "
          f"{settings.per_host_delay} s spacing + jitter), one host: {rate:.1f} req/s "
          "(information: this is the intended ceiling)")


# --- many hosts: tidings vs plain httpx vs aiohttp -------------------------------------


def _serve_hosts(hosts: int, port_out: multiprocessing.SimpleQueue[int]) -> None:
    """One aiohttp server listening on 127.0.0.2 .. 127.0.0.(hosts+1), all on one port."""

    async def feed(request: web.Request) -> web.Response:
        return web.Response(body=BODY, content_type="application/rss+xml")

    async def main() -> None:
        app = web.Application()
        app.router.add_get("/feed/{n}", feed)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        port = 0
        for index in range(hosts):
            site = web.TCPSite(runner, f"127.0.0.{2 + index}", port, backlog=1024)
            await site.start()
            port = port or runner.addresses[0][1]
        port_out.put(port)
        await asyncio.Event().wait()

    asyncio.run(main())


async def _run_hosts(urls: list[str], settings: Settings, args: argparse.Namespace) -> None:
    """Worker ``i`` sticks to host ``i % hosts`` (the hosts share the load)."""
    pool = 4 * args.concurrency
    runs = await _compare(lambda i, n: f"{urls[i % len(urls)]}/feed/{n}", settings, args,
                          limits=httpx.Limits(max_connections=pool,
                                              max_keepalive_connections=pool),
                          warm_up=pool)  # one connection per host and slot
    print(f"{args.requests} requests x {args.reps} reps over {len(urls)} hosts "
          f"({urls[0]} ..), concurrency {args.concurrency}, "
          f"per_host_concurrency={settings.per_host_concurrency}, delay 0, "
          f"load average {os.getloadavg()[0]:.2f}")
    _report_all(runs)


def _main_hosts(args: argparse.Namespace) -> None:
    ctx = multiprocessing.get_context("spawn")
    port_queue: multiprocessing.SimpleQueue[int] = ctx.SimpleQueue()
    server = ctx.Process(target=_serve_hosts, args=(args.hosts, port_queue), daemon=True)
    server.start()
    try:
        port = port_queue.get()
        urls = [f"http://127.0.0.{2 + index}:{port}" for index in range(args.hosts)]
        base = load_settings(Path("/nonexistent-tidings-bench"), env={},
                             overrides={"allow_private_hosts": "127.0.0.0/8"})
        asyncio.run(_run_hosts(urls, replace(base, per_host_delay=0.0), args))
    finally:
        server.terminate()
        server.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=None,
                        help="requests in flight (default 32; 64 with --hosts)")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--hosts", type=int, default=0,
                        help="spread requests over 127.0.0.2 .. 127.0.0.(N+1) and compare "
                             "with plain httpx and aiohttp (max 250)")
    parser.add_argument("--no-polite", action="store_true", help="skip the default-politeness run")
    args = parser.parse_args()
    if args.hosts:
        if not 0 < args.hosts <= 250:
            parser.error("--hosts must be between 1 and 250 (loopback addresses only)")
        args.concurrency = args.concurrency or 64
        _main_hosts(args)
        return
    args.concurrency = args.concurrency or 32

    ctx = multiprocessing.get_context("spawn")
    port_queue: multiprocessing.SimpleQueue[int] = ctx.SimpleQueue()
    server = ctx.Process(target=_serve, args=(port_queue,), daemon=True)
    server.start()
    try:
        url = f"http://127.0.0.1:{port_queue.get()}/feed"
        base = load_settings(Path("/nonexistent-tidings-bench"), env={},
                             overrides={"allow_private_hosts": "127.0.0.1"})
        fast = replace(base, per_host_concurrency=args.concurrency, per_host_delay=0.0)
        asyncio.run(_run(url, fast, args))
        if not args.no_polite:
            asyncio.run(_polite(url, base))
    finally:
        server.terminate()
        server.join()


if __name__ == "__main__":
    main()
