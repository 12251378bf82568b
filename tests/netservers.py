"""Servers, resolvers and a dial recorder for the tidings.net tests.

Every server listens on 127.0.0.1. Resolvers answer from a table, so tests can
claim that a name resolves to a private or changing address; the recording
dial hook then proves what was (not) dialed, and refuses anything but loopback
itself, so no test can open a socket elsewhere.
"""

from __future__ import annotations

import asyncio
import gzip
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from aiohttp import web


@asynccontextmanager
async def serve(app: web.Application, host: str = "127.0.0.1") -> AsyncIterator[str]:
    """Run ``app`` on an ephemeral port of ``host``; yields ``http://host:port``."""
    runner = web.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://{host}:{port}"
    finally:
        await runner.cleanup()


@dataclass
class ServerLog:
    """What the standard server saw: request starts, concurrency per Host header."""

    starts: list[tuple[float, str]] = field(default_factory=list)
    active: Counter[str] = field(default_factory=Counter)
    peak: Counter[str] = field(default_factory=Counter)
    peak_total: int = 0
    user_agents: list[str] = field(default_factory=list)

    def enter(self, host: str) -> None:
        self.starts.append((time.monotonic(), host))
        self.active[host] += 1
        self.peak[host] = max(self.peak[host], self.active[host])
        self.peak_total = max(self.peak_total, sum(self.active.values()))

    def leave(self, host: str) -> None:
        self.active[host] -= 1


GZIP_BOMB_SIZE = 64 * 1024 * 1024
_BOMB = gzip.compress(b"\0" * GZIP_BOMB_SIZE, compresslevel=9)


def standard_app(log: ServerLog) -> web.Application:
    """The routes most tests use; see each handler for its behaviour."""
    routes = web.RouteTableDef()

    @routes.get("/ok")
    async def ok(request: web.Request) -> web.Response:
        log.user_agents.append(request.headers.get("User-Agent", ""))
        return web.Response(text="hello", headers={"ETag": '"v1"'})

    @routes.get("/chain/{n}")
    async def chain(request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        if n == 0:
            return web.Response(text="end of chain")
        raise web.HTTPFound(f"/chain/{n - 1}")

    @routes.get("/loop/{name}")
    async def loop(request: web.Request) -> web.Response:
        other = "b" if request.match_info["name"] == "a" else "a"
        raise web.HTTPFound(f"/loop/{other}")

    @routes.get("/to")
    async def to(request: web.Request) -> web.Response:
        raise web.HTTPFound(request.query["url"])

    @routes.get("/old")
    async def old(request: web.Request) -> web.Response:
        raise web.HTTPMovedPermanently("/new")

    @routes.get("/new")
    async def new(request: web.Request) -> web.Response:
        if request.headers.get("If-None-Match") == '"v2"':
            return web.Response(status=304, headers={"ETag": '"v2"'})
        return web.Response(text="new content", headers={"ETag": '"v2"'})

    @routes.get("/bomb")
    async def bomb(request: web.Request) -> web.Response:
        return web.Response(body=_BOMB, headers={"Content-Encoding": "gzip"})

    @routes.get("/endless")
    async def endless(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        chunk = b"x" * 65536
        while True:
            await response.write(chunk)

    @routes.get("/drip")
    async def drip(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(status=int(request.query.get("status", "200")),
                                      headers={"Content-Length": "1000"})
        await response.prepare(request)
        for _ in range(1000):
            await response.write(b"x")
            await asyncio.sleep(float(request.query.get("every", "1")))
        return response

    @routes.get("/slow-redirect/{n}")
    async def slow_redirect(request: web.Request) -> web.Response:
        await asyncio.sleep(float(request.query.get("wait", "0.4")))
        n = int(request.match_info["n"])
        if n == 0:
            return web.Response(text="end")
        raise web.HTTPFound(f"/slow-redirect/{n - 1}?{request.query_string}")

    @routes.get("/busy")
    async def busy(request: web.Request) -> web.Response:
        host = request.headers.get("Host", "").split(":")[0]
        log.enter(host)
        try:
            await asyncio.sleep(float(request.query.get("wait", "0.2")))
        finally:
            log.leave(host)
        return web.Response(text="done")

    @routes.get("/status/{code}")
    async def status(request: web.Request) -> web.Response:
        headers = {"Retry-After": request.query["retry"]} if "retry" in request.query else {}
        return web.Response(status=int(request.match_info["code"]), text="nope", headers=headers)

    @routes.post("/post-303")
    async def post_303(request: web.Request) -> web.Response:
        raise web.HTTPSeeOther("/method")

    @routes.route("*", "/method")
    async def method(request: web.Request) -> web.Response:
        body = await request.text()
        return web.Response(text=f"{request.method} {body}")

    @routes.get("/close")
    async def close(request: web.Request) -> web.Response:
        return web.Response(text="closing", headers={"Connection": "close"})

    app = web.Application()
    app.add_routes(routes)
    return app


def body_app(body: bytes, headers: dict[str, str]) -> web.Application:
    """A server that answers every GET with ``body`` and ``headers``."""

    async def handler(request: web.Request) -> web.Response:
        return web.Response(body=body, headers=headers)

    app = web.Application()
    app.router.add_get("/{tail:.*}", handler)
    return app


class TableResolver:
    """Answers from a table; ``answers[name]`` may hold one list per call (rebinding)."""

    def __init__(self, answers: dict[str, list[list[str]]]) -> None:
        self.answers = answers
        self.calls: list[str] = []

    @classmethod
    def fixed(cls, table: dict[str, list[str]]) -> TableResolver:
        return cls({name: [addresses] for name, addresses in table.items()})

    async def resolve(self, host: str, port: int) -> list[str]:
        from tidings.net import ResolveError

        self.calls.append(host)
        seq = self.answers.get(host)
        if not seq:
            raise ResolveError(f"cannot resolve {host} (not in the test table)")
        return seq.pop(0) if len(seq) > 1 else seq[0]


class RecordingDialer:
    """A ``dial_hook``: records every dial the guard approved; reaches only loopback."""

    def __init__(self) -> None:
        self.dialed: list[tuple[str, int]] = []

    def __call__(self, address: str, port: int) -> None:
        self.dialed.append((address, port))
        if not address.startswith("127."):
            raise OSError(f"test network: no route to {address}")


@dataclass
class Scripted:
    """Answers request n with ``answers[n]`` (the last one repeats); closes after
    the requests in ``close_after``; counts connections and those still open."""

    answers: list[bytes]
    close_after: set[int] = field(default_factory=set)
    requests: list[bytes] = field(default_factory=list)
    connections: int = 0
    open: int = 0
    url: str = ""
    tasks: set[asyncio.Task[None]] = field(default_factory=set)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.tasks.add(task)
        self.connections += 1
        self.open += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                request = head + (await reader.readexactly(length) if length else b"")
                n = len(self.requests)
                self.requests.append(request)
                writer.write(self.answers[min(n, len(self.answers) - 1)])
                await writer.drain()
                if n in self.close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self.open -= 1
            writer.close()
            self.tasks.discard(task)


@asynccontextmanager
async def scripted(*answers: bytes, close_after: set[int] | None = None
                   ) -> AsyncIterator[Scripted]:
    """A :class:`Scripted` server on 127.0.0.1 for the block; its handlers end with it."""
    script = Scripted(list(answers), close_after or set())
    server = await asyncio.start_server(script.handle, "127.0.0.1", 0)
    script.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    try:
        yield script
    finally:
        server.close()
        await server.wait_closed()
        for task in list(script.tasks):
            task.cancel()
        await asyncio.gather(*script.tasks, return_exceptions=True)


def ok(body: bytes, *headers: bytes) -> bytes:
    return (b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n" % len(body) + b"".join(
        h + b"\r\n" for h in headers) + b"\r\n" + body)
