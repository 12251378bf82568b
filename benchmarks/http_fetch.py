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

Crawl-shaped (``--sites 1000``): what the blogroll crawler asks of the wire (and a
collection round of a host it has not seen for a while). Every site
is a host of its own (``sNNNNNN.test``, resolved to 127.0.0.1 by an injected resolver, as
in ``benchmarks/crawl.py``) asked for three pages on one fresh connection: robots.txt
(a 404, ``raise_for_status=False``), the home page and the feed, 32 sites at once, by
tidings (a crawl's own 1 s keep-alive, politeness spacing off) and by bare aiohttp
(a 1 s keep-alive, the same resolver). The figure is client CPU ms per request
(``time.process_time``); reps alternate who goes first. ``--profile FILE`` also writes
a cProfile of tidings' runs (``time.thread_time`` as its clock).

    .venv/bin/python benchmarks/http_fetch.py --sites 1000 [--reps 5] [--profile FILE]

Instructions per request, steady on a loaded machine: one client alone under callgrind
(the server is spawned, so not counted), 100 warm-up sites then ``--sites``; the count
at 600 sites minus the count at 300, divided by 900 requests:

    PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=cg.out \
        .venv/bin/python benchmarks/http_fetch.py --sites 300 --reps 1 --only tidings
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import multiprocessing
import os
import socket
import statistics
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import ClassVar

import aiohttp
import httpx
from aiohttp import web
from aiohttp.abc import ResolveResult

from tidings.net import Fetcher
from tidings.settings import Settings, load_settings

BODY = b"<rss><channel><title>bench</title></channel></rss>" * 40  # about 2 KB


_REPLY = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/rss+xml\r\n"
    b"Content-Length: " + str(len(BODY)).encode() + b"\r\n\r\n" + BODY
)


class _KeepAliveServer(asyncio.Protocol):
    """A minimal HTTP/1.1 server (GET only, keep-alive) so the server costs little CPU:
    ``replies`` by path, ``default`` for any other path."""

    replies: ClassVar[Mapping[bytes, bytes]] = {}
    default = _REPLY

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while b"\r\n\r\n" in self.buffer:
            head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
            path = head.split(b" ", 2)[1] if self.replies else b""
            self.transport.write(self.replies.get(path, self.default))


def _serve(port_out: multiprocessing.SimpleQueue[int],
           protocol: type[_KeepAliveServer] = _KeepAliveServer) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(protocol, "127.0.0.1", 0, backlog=1024)
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


# --- crawl-shaped: a fresh host for every three requests -----------------------------

_PAGES = {
    b"/robots.txt": (b"404 Not Found", b"text/plain", b"Not Found"),
    b"/": (b"200 OK", b"text/html; charset=utf-8",
           b"<!DOCTYPE html><html><head><title>Blog</title></head><body>"
           + b"<p>tea and trains, week after week</p>" * 100 + b"</body></html>"),
    b"/feed/": (b"200 OK", b"application/rss+xml", BODY),
}
#: what a blog's server sends besides the type and length
_USUAL = (b"Date: Tue, 01 Dec 2026 22:00:00 GMT\r\nServer: nginx\r\n"
          b"Cache-Control: max-age=600\r\nETag: \"5f3a-61b2c\"\r\n"
          b"Last-Modified: Mon, 30 Nov 2026 08:00:00 GMT\r\nVary: Accept-Encoding\r\n"
          b"X-Content-Type-Options: nosniff\r\n")
_REPLIES = {
    path: b"HTTP/1.1 " + status + b"\r\n" + _USUAL + b"Content-Type: " + kind
    + b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    for path, (status, kind, body) in _PAGES.items()
}


class _PagesServer(_KeepAliveServer):
    """The three pages of every site (the Host is ignored); any other path is a 404."""

    replies = _REPLIES
    default = _REPLIES[b"/robots.txt"]


class _Loopback:
    """tidings' resolver for the benchmark's names: every one is 127.0.0.1."""

    async def resolve(self, host: str, port: int) -> list[str]:
        return ["127.0.0.1"]


class _AiohttpLoopback(aiohttp.abc.AbstractResolver):
    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        return [ResolveResult(hostname=host, host="127.0.0.1", port=port,
                              family=socket.AF_INET, proto=0, flags=socket.AI_NUMERICHOST)]

    async def close(self) -> None:
        return None


#: one site's visit, given the site's base URL
Visit = Callable[[str], Awaitable[None]]


async def _sites(visit: Visit, port: int, first: int, sites: int) -> float:
    """Client CPU ms per request for visiting ``sites`` fresh hosts, 32 at once."""
    queue = [f"http://s{n:06d}.test:{port}" for n in range(first, first + sites)]
    queue.reverse()

    async def worker() -> None:
        while queue:
            await visit(queue.pop())

    cpu = time.process_time()
    await asyncio.gather(*(worker() for _ in range(32)))
    return (time.process_time() - cpu) * 1000 / (3 * sites)


def _tidings_visit(fetcher: Fetcher) -> Visit:
    """The crawler's three asks (discovery's robots.py and crawlpage.py)."""
    accept = {"accept": "text/html"}

    async def visit(base: str) -> None:
        robots = await fetcher.fetch(base + "/robots.txt", raise_for_status=False,
                                     max_bytes=512 * 1024, timeout=15.0,
                                     user_agent="bench-crawler/1", headers=accept)
        assert robots.status == 404
        for path in ("/", "/feed/"):
            resp = await fetcher.fetch(base + path, timeout=15.0, max_bytes=1024 * 1024,
                                       user_agent="bench-crawler/1", headers=accept)
            assert resp.content

    return visit


def _aiohttp_visit(session: aiohttp.ClientSession) -> Visit:
    async def visit(base: str) -> None:
        async with session.get(base + "/robots.txt") as r:
            assert r.status == 404
            await r.read()
        for path in ("/", "/feed/"):
            async with session.get(base + path) as r:
                r.raise_for_status()
                assert await r.read()

    return visit


async def _run_sites(port: int, settings: Settings, args: argparse.Namespace) -> None:
    first = 0
    runs: dict[str, list[float]] = {"tidings": [], "aiohttp": []}
    profile = cProfile.Profile(time.thread_time) if args.profile else None
    connector = aiohttp.TCPConnector(limit=4096, limit_per_host=4, keepalive_timeout=1.0,
                                     resolver=_AiohttpLoopback())
    async with (
        Fetcher(settings, resolver=_Loopback()) as shared,
        aiohttp.ClientSession(connector=connector) as session,
    ):
        fetcher = shared.with_keepalive(1.0)
        visits = {"tidings": _tidings_visit(fetcher), "aiohttp": _aiohttp_visit(session)}
        if args.only:
            visits = {args.only: visits[args.only]}
        try:
            for visit in visits.values():  # warm up: first sessions, code paths
                await _sites(visit, port, first, 100)
                first += 100
            for rep in range(args.reps):
                for name in list(visits)[:: 1 if rep % 2 == 0 else -1]:
                    if profile is not None and name == "tidings":
                        profile.enable()
                    runs[name].append(await _sites(visits[name], port, first, args.sites))
                    if profile is not None and name == "tidings":
                        profile.disable()
                    first += args.sites
        finally:
            await fetcher.aclose()
    if args.only or not args.reps:
        return
    print(f"{args.sites} sites x 3 requests x {args.reps} reps, 32 sites at once, a fresh "
          f"host per site, load average {os.getloadavg()[0]:.2f}")
    mine, bare = statistics.median(runs["tidings"]), statistics.median(runs["aiohttp"])
    for label, name in (("tidings.net Fetcher", "tidings"), ("aiohttp session    ", "aiohttp")):
        print(f"  {label}: {statistics.median(runs[name]):.3f} client CPU ms/req "
              f"(runs: {', '.join(f'{c:.3f}' for c in runs[name])})")
    print(f"  ratio tidings/aiohttp CPU per request: x{mine / bare:.2f}")
    if profile is not None:
        profile.dump_stats(args.profile)


def _main_sites(args: argparse.Namespace) -> None:
    ctx = multiprocessing.get_context("spawn")
    port_queue: multiprocessing.SimpleQueue[int] = ctx.SimpleQueue()
    server = ctx.Process(target=_serve, args=(port_queue, _PagesServer), daemon=True)
    server.start()
    try:
        port = port_queue.get()
        base = load_settings(Path("/nonexistent-tidings-bench"), env={},
                             overrides={"allow_private_hosts": "127.0.0.1"})
        asyncio.run(_run_sites(port, replace(base, per_host_delay=0.0,
                                             per_host_concurrency=4), args))
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
    parser.add_argument("--sites", type=int, default=0,
                        help="crawl-shaped: N fresh hosts, three requests each")
    parser.add_argument("--profile", default="",
                        help="with --sites: also write a cProfile (thread time) of tidings' runs")
    parser.add_argument("--only", choices=("tidings", "aiohttp"), default="",
                        help="with --sites: run one client and print nothing (for callgrind)")
    args = parser.parse_args()
    if args.sites:
        _main_sites(args)
        return
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
