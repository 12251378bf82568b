"""Cost of the guard: tidings.net.Fetcher versus plain httpx.AsyncClient, same run.

A minimal keep-alive HTTP server runs in a child process on 127.0.0.1 (so the server does
not share the client's event loop). Both clients make the same requests at the
same concurrency with the same connection-pool limits; repetitions alternate
between them so drift hits both. Politeness is switched off for the headline
figure (per-host concurrency = the benchmark's concurrency, no spacing): it is
a deliberate wait, not overhead. One extra informational run uses the default
politeness settings.

    .venv/bin/python benchmarks/http_fetch.py [--requests 2000] [--concurrency 32] [--reps 5]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

import httpx

from tidings.net import Fetcher
from tidings.net.transport import LIMITS
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


async def _drive(
    get: Callable[[], Awaitable[bytes]], requests: int, concurrency: int
) -> tuple[float, float]:
    """Requests per wall second, and client CPU ms per request, for ``requests`` calls."""
    remaining = requests

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            body = await get()
            assert body == BODY

    start, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    wall = time.perf_counter() - start
    return requests / wall, (time.process_time() - cpu) * 1000 / requests


async def _run(url: str, settings: Settings, args: argparse.Namespace) -> None:
    guarded: list[tuple[float, float]] = []
    plain: list[tuple[float, float]] = []
    async with (
        Fetcher(settings) as fetcher,
        httpx.AsyncClient(limits=LIMITS, trust_env=False) as client,
    ):

        async def guarded_get() -> bytes:
            return (await fetcher.fetch(url)).content

        async def plain_get() -> bytes:
            response = await client.get(url)
            response.raise_for_status()
            return response.content

        await _drive(guarded_get, 200, args.concurrency)  # warm both pools
        await _drive(plain_get, 200, args.concurrency)
        for _ in range(args.reps):
            guarded.append(await _drive(guarded_get, args.requests, args.concurrency))
            plain.append(await _drive(plain_get, args.requests, args.concurrency))
    print(f"{args.requests} requests x {args.reps} reps, concurrency {args.concurrency}, "
          f"politeness off (per_host_concurrency={settings.per_host_concurrency}, delay 0)")
    rates = _report("tidings.net Fetcher", guarded), _report("plain httpx client ", plain)
    (g_rate, g_cpu), (p_rate, p_cpu) = rates
    print(f"  ratio guarded/plain : {g_rate / p_rate:.3f} req/s "
          f"(guard overhead {1 - g_rate / p_rate:+.1%}); "
          f"CPU per request x{g_cpu / p_cpu:.3f} ({g_cpu / p_cpu - 1:+.1%}); budget < 15 %")


def _report(name: str, runs: list[tuple[float, float]]) -> tuple[float, float]:
    rate = statistics.median(r for r, _ in runs)
    cpu = statistics.median(c for _, c in runs)
    print(f"  {name}: {rate:7.0f} req/s, {cpu:.3f} client CPU ms/req "
          f"(runs: {', '.join(f'{r:.0f}' for r, _ in runs)} req/s)")
    return rate, cpu


async def _polite(url: str, settings: Settings) -> None:
    async with Fetcher(settings) as fetcher:
        rate, _ = await _drive(lambda: _content(fetcher, url), 20, 8)
    print(f"  default politeness ({settings.per_host_concurrency} per host, "
          f"{settings.per_host_delay} s spacing + jitter), one host: {rate:.1f} req/s "
          "(information: this is the intended ceiling)")


async def _content(fetcher: Fetcher, url: str) -> bytes:
    return (await fetcher.fetch(url)).content


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--no-polite", action="store_true", help="skip the default-politeness run")
    args = parser.parse_args()

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
