"""Feeds with scripted behaviour for the scheduler tests, on 127.0.0.1, in simulated time.

Each path plays a part: healthy (ETag, 304), slow, failing, recovering after a
few failures, rate-limited once with a Retry-After date, gone (410), cached
(Cache-Control max-age). The server reads the same accelerated clock as the
runner, so its Retry-After dates and its request log are in simulated time.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.utils import format_datetime

from aiohttp import web


def rss(name: str, now: datetime, count: int = 3) -> str:
    items = "".join(
        f"<item><title>{name} post {i}</title><link>http://{name}.example/p{i}</link>"
        f"<guid>{name}-{i}</guid>"
        f"<pubDate>{format_datetime(now - timedelta(minutes=10 * (i + 1)))}</pubDate></item>"
        for i in range(count))
    return (f"<?xml version='1.0'?><rss version='2.0'><channel><title>{name}</title>"
            f"<link>http://{name}.example/</link>{items}</channel></rss>")


@dataclass
class SchedFeeds:
    clock: Callable[[], datetime]
    slow_seconds: float = 0.1
    retry_after: timedelta = timedelta(hours=2)
    fail_first: int = 3
    hits: dict[str, list[datetime]] = field(default_factory=dict)
    active: dict[str, int] = field(default_factory=dict)
    overlaps: list[str] = field(default_factory=list)
    delay: float = 0.0  # every answer waits this long (the two-runner test)
    #: set when the test ends, so that no handler keeps the server's cleanup waiting
    released: asyncio.Event = field(default_factory=asyncio.Event)

    async def pause(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.released.wait(), seconds)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/{name}.xml", self.handle)
        return app

    async def handle(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        self.hits.setdefault(name, []).append(self.clock())
        self.active[name] = self.active.get(name, 0) + 1
        if self.active[name] > 1:
            self.overlaps.append(name)
        try:
            if self.delay:
                await self.pause(self.delay)
            return await self.answer(name, request)
        finally:
            self.active[name] -= 1

    async def answer(self, name: str, request: web.Request) -> web.StreamResponse:
        now = self.clock()
        n = len(self.hits[name])
        kind = name.rstrip("0123456789")
        if kind == "slow":
            await self.pause(self.slow_seconds)
        if kind == "failing" or (kind == "recovering" and n <= self.fail_first):
            return web.Response(status=500, text="broken")
        if kind == "limited" and n == 1:
            later = format_datetime(now + self.retry_after, usegmt=True)
            return web.Response(status=429, text="slow down", headers={"Retry-After": later})
        if kind == "gone":
            return web.Response(status=410, text="gone")
        headers = {"ETag": f'"{name}-v1"'}
        if kind == "cached":
            headers["Cache-Control"] = "max-age=5400"
        if request.headers.get("If-None-Match") == headers["ETag"]:
            return web.Response(status=304, headers=headers)
        return web.Response(text=rss(name, now), content_type="application/rss+xml",
                            headers=headers)
