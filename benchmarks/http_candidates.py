"""Prototype: the two candidate wires for tidings.net, measured beside the present code.

Issue "Refit the core", item 1: one maintained HTTP client with a compiled
parser for direct and proxied requests alike, either

- httpx's engine (httpcore) over the guarded network backend, one small
  httpcore pool per host (``httpcore+anyio``: httpcore's own asyncio backend
  through anyio, i.e. nothing of ours on the wire; ``httpcore+ours``: the same
  over tidings' asyncio streams of net/stream.py, as a bound), or
- aiohttp: one ClientSession whose resolver resolves and checks once per
  connection and whose socket factory checks the address actually dialed.

Each candidate is a Fetcher subclass that replaces only ``_send`` (the wire):
politeness, budget, redirects and the capped body reader stay the present
code's, so the figures compare wires. Throwaway code for the decision, kept in
git history (it imports modules the refit deletes):

    .venv/bin/python benchmarks/http_candidates.py --hosts 32 [--requests 2000] [--reps 5]
    .venv/bin/python benchmarks/http_candidates.py [--requests 2000] [--reps 5]
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import ipaddress
import multiprocessing
import os
import socket
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
import httpcore
import httpx
from aiohttp.abc import AbstractResolver, ResolveResult

from http_fetch import (
    _drive,
    _drive_hosts,
    _report,
    _serve,
    _serve_hosts,
)
from tidings.net import Fetcher
from tidings.net.addresses import address_refusal
from tidings.net.backend import AddressRefusedError, GuardedBackend, checked_addresses
from tidings.net.client import _Answer, _Hop, _payload, _Request
from tidings.net.stream import AsyncioBackend
from tidings.settings import Settings, load_settings

# --------------------------------------------------------------- httpx's engine


class _HttpcoreWire:
    def __init__(self, response: httpcore.Response) -> None:
        self.status = response.status
        self.reason = response.extensions.get("reason_phrase", b"").decode("latin-1")
        flat: dict[str, str] = {}
        for name, value in response.headers:
            key = name.decode("latin-1").lower()
            text = value.decode("latin-1")
            flat[key] = f"{flat[key]}, {text}" if key in flat else text
        self.headers = flat
        self._response = response

    def aiter_raw(self) -> AsyncIterator[bytes]:
        return self._response.aiter_stream()

    async def aclose(self) -> None:
        await self._response.aclose()


class HttpcoreFetcher(Fetcher):
    """Per-host httpcore pools dialing through the guarded backend."""

    def __init__(self, settings: Settings, *, ours: bool) -> None:
        super().__init__(settings)
        inner = AsyncioBackend() if ours else httpcore.AnyIOBackend()
        self._guarded = GuardedBackend(self._resolver, self.allow, inner)
        self._tls = httpx.create_ssl_context(trust_env=False)
        self._hpools: dict[str, httpcore.AsyncConnectionPool] = {}

    async def aclose(self) -> None:
        for pool in self._hpools.values():
            await pool.aclose()
        await super().aclose()

    async def _send(self, request: _Request, hop: _Hop) -> _Answer:
        host = hop.url.host
        request.current = str(hop.url)
        async with self.limiter.slot(host), request.budget.spend():
            seconds = request.budget.total - request.budget.used + 1
            pool = self._hpools.get(host)
            if pool is None:
                keep = self.limiter.concurrency
                pool = self._hpools[host] = httpcore.AsyncConnectionPool(
                    ssl_context=self._tls, max_connections=keep,
                    max_keepalive_connections=keep, keepalive_expiry=30,
                    network_backend=self._guarded)
            headers, body = _payload(hop)
            outgoing = httpcore.Request(
                hop.method, str(hop.url),
                headers=[(b"host", hop.url.netloc)] + [
                    (k.encode(), v.encode()) for k, v in headers.items()],
                content=body,
                extensions={"timeout": dict.fromkeys(("connect", "read", "write", "pool"),
                                                     seconds)})
            wire = _HttpcoreWire(await pool.handle_async_request(outgoing))
            return await self._exchange(request, hop, wire)


# --------------------------------------------------------------------- aiohttp

#: (host, addresses the resolver approved) of the hop being sent, set per hop by the Fetcher
_HOP: contextvars.ContextVar[tuple[str, set[str]]] = contextvars.ContextVar("hop")


class _GuardedResolver(AbstractResolver):
    """Resolves once per new connection, checks every answer, returns exactly those."""

    def __init__(self, fetcher: AiohttpFetcher) -> None:
        self._fetcher = fetcher

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        f = self._fetcher
        addresses = await checked_addresses(host, port, f._resolver, f.allow)
        _HOP.get()[1].update(addresses)
        return [ResolveResult(hostname=host, host=a, port=port,
                              family=socket.AF_INET6 if ":" in a else socket.AF_INET,
                              proto=0, flags=socket.AI_NUMERICHOST) for a in addresses]

    async def close(self) -> None:
        return None


class _AiohttpWire:
    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self.status = response.status
        self.reason = response.reason or ""
        flat: dict[str, str] = {}
        for name, value in response.raw_headers:
            key = name.decode("latin-1").lower()
            text = value.decode("latin-1")
            flat[key] = f"{flat[key]}, {text}" if key in flat else text
        self.headers = flat
        self._response = response

    def aiter_raw(self) -> AsyncIterator[bytes]:
        return self._response.content.iter_any()

    async def aclose(self) -> None:
        if self._response.content.is_eof():
            self._response.release()
        else:
            self._response.close()


class AiohttpFetcher(Fetcher):
    """One aiohttp session; the resolver and the socket factory are the guard."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self._session: aiohttp.ClientSession | None = None
        self.dials = 0

    def _factory(self, addr_info: Any) -> socket.socket:
        family, type_, proto, _, sockaddr = addr_info
        host, approved = _HOP.get()
        address = str(ipaddress.ip_address(sockaddr[0]))
        if address not in approved:  # an IP literal: aiohttp skipped the resolver
            refusal = address_refusal(ipaddress.ip_address(host), self.allow)
            if address != host or refusal:
                raise AddressRefusedError(refusal or f"{address} was not checked")
        self.dials += 1
        return socket.socket(family, type_, proto)

    def _open(self) -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(
            resolver=_GuardedResolver(self), use_dns_cache=False,
            ssl=ssl.create_default_context(), socket_factory=self._factory,
            keepalive_timeout=30, limit=4096, limit_per_host=self.limiter.concurrency)
        return aiohttp.ClientSession(
            connector=connector, auto_decompress=False, cookie_jar=aiohttp.DummyCookieJar(),
            trust_env=False, timeout=aiohttp.ClientTimeout())

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
        await super().aclose()

    async def _send(self, request: _Request, hop: _Hop) -> _Answer:
        host = hop.url.host
        request.current = str(hop.url)
        session = self._session or self._open()
        self._session = session
        async with self.limiter.slot(host), request.budget.spend():
            headers, body = _payload(hop)
            token = _HOP.set((host, set()))
            try:
                response = await session.request(
                    hop.method, str(hop.url), headers=headers, data=body,
                    allow_redirects=False)
            finally:
                _HOP.reset(token)
            return await self._exchange(request, hop, _AiohttpWire(response))


# ------------------------------------------------------------------------ runs

Candidates = dict[str, Callable[[Settings], Fetcher]]

CANDIDATES: Candidates = {
    "present (net/h1.py)  ": Fetcher,
    "httpcore+anyio       ": lambda s: HttpcoreFetcher(s, ours=False),
    "httpcore+ours        ": lambda s: HttpcoreFetcher(s, ours=True),
    "aiohttp candidate    ": AiohttpFetcher,
}


Drive = Callable[[Callable[..., Awaitable[bytes]]], Awaitable[tuple[float, float]]]


async def _measure(drive: Drive, settings: Settings, reps: int) -> None:
    fetchers = {name: make(settings) for name, make in CANDIDATES.items()}
    connector = aiohttp.TCPConnector(limit=256, limit_per_host=0)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def plain(url: str) -> bytes:
            async with session.get(url) as response:
                response.raise_for_status()
                return await response.read()

        getters: dict[str, Callable[..., Awaitable[bytes]]] = {"plain aiohttp        ": plain}
        for name, fetcher in fetchers.items():

            async def get(url: str, fetcher: Fetcher = fetcher) -> bytes:
                return (await fetcher.fetch(url)).content

            getters[name] = get
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in getters}
        for get in getters.values():  # warm every pool
            await drive(get)
        order = list(getters)
        for rep in range(reps):
            shift = rep % len(order)
            for name in order[shift:] + order[:shift]:  # rotate who goes first
                runs[name].append(await drive(getters[name]))
        for fetcher in fetchers.values():
            await fetcher.aclose()
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    _, base_cpu = _report("plain aiohttp        ", runs.pop("plain aiohttp        "))
    for name, results in runs.items():
        _, cpu = _report(name, results)
        print(f"    {name.strip()}: CPU per request x{cpu / base_cpu:.2f} of plain aiohttp")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--hosts", type=int, default=0)
    args = parser.parse_args()
    ctx = multiprocessing.get_context("spawn")
    port_queue: multiprocessing.SimpleQueue[int] = ctx.SimpleQueue()
    if args.hosts:
        server = ctx.Process(target=_serve_hosts, args=(args.hosts, port_queue), daemon=True)
    else:
        server = ctx.Process(target=_serve, args=(port_queue,), daemon=True)
    server.start()
    try:
        port = port_queue.get()
        base = load_settings(Path("/nonexistent-tidings-bench"), env={},
                             overrides={"allow_private_hosts": "127.0.0.0/8"})
        if args.hosts:
            urls = [f"http://127.0.0.{2 + index}:{port}" for index in range(args.hosts)]
            settings = replace(base, per_host_delay=0.0)
            print(f"{args.requests} requests x {args.reps} reps over {args.hosts} hosts, "
                  f"64 in flight, per_host_concurrency={settings.per_host_concurrency}")

            def drive(get: Callable[..., Awaitable[bytes]]) -> Awaitable[tuple[float, float]]:
                return _drive_hosts(get, urls, args.requests, 64)
        else:
            url = f"http://127.0.0.1:{port}/feed"
            settings = replace(base, per_host_concurrency=32, per_host_delay=0.0)
            print(f"{args.requests} requests x {args.reps} reps, one host, 32 in flight")

            def drive(get: Callable[..., Awaitable[bytes]]) -> Awaitable[tuple[float, float]]:
                return _drive(lambda: get(url), args.requests, 32)

        asyncio.run(_measure(drive, settings, args.reps))
    finally:
        server.terminate()
        server.join()


if __name__ == "__main__":
    main()
