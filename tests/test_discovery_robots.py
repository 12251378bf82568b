"""robots.txt for the crawler (R-DISC-3): what each answer means, and the cache."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from netservers import serve
from tidings.discovery.robots import (
    ROBOTS_MAX_BYTES,
    RobotsCache,
    crawler_user_agent,
    fetch_robots,
    robots_url,
)
from tidings.net import Fetcher
from tidings.settings import Settings

RULES = """User-agent: *
Disallow: /private/

User-agent: tidings-crawler
Disallow: /no-crawlers/
Allow: /no-crawlers/but-this
"""


def robots_app(seen: list[str]) -> web.Application:
    async def handle(request: web.Request) -> web.Response:
        seen.append(request.headers.get("User-Agent", ""))
        name = request.match_info["name"]
        if name == "rules":
            return web.Response(text=RULES)
        if name == "html":
            return web.Response(text="<!DOCTYPE html><html><body>home</body></html>",
                                content_type="text/html")
        if name == "huge":
            return web.Response(text="Disallow: /x\n" * (ROBOTS_MAX_BYTES // 12 + 10))
        if name == "gone":
            raise web.HTTPNotFound()
        raise web.HTTPServiceUnavailable()

    app = web.Application()
    app.router.add_get("/{name}", handle)
    return app


@pytest.fixture
async def base() -> AsyncIterator[tuple[str, list[str]]]:
    seen: list[str] = []
    async with serve(robots_app(seen)) as url:
        yield url, seen


async def verdict(settings: Settings, url: str) -> dict[str, str]:
    async with Fetcher(settings) as fetcher:
        return await fetch_robots(fetcher, url, crawler_user_agent("https://bot.example/"), 5)


async def test_rules_are_read_for_the_crawler_own_agent(
        settings: Settings, base: tuple[str, list[str]]) -> None:
    url, seen = base
    found = await verdict(settings, url + "/rules")
    assert found["verdict"] == "rules"
    assert seen == [crawler_user_agent("https://bot.example/")]
    cache = RobotsCache()
    cache.learn("https://a.example/x", found)
    assert not cache.allowed("https://a.example/no-crawlers/page")
    assert cache.allowed("https://a.example/no-crawlers/but-this")
    assert cache.allowed("https://a.example/private/")  # the * group is not ours


@pytest.mark.parametrize(("name", "kind", "note"), [
    ("gone", "allow", ""),
    ("html", "allow", "HTML page"),
    ("huge", "deny", "larger than 512 KiB"),
    ("down", "deny", "HTTP 503"),
])
async def test_what_each_answer_means(settings: Settings, base: tuple[str, list[str]],
                                      name: str, kind: str, note: str) -> None:
    found = await verdict(settings, f"{base[0]}/{name}")
    assert found["verdict"] == kind
    assert note in found["note"]


async def test_an_unreachable_host_is_left_alone(settings: Settings) -> None:
    found = await verdict(settings, "http://127.0.0.1:9/robots.txt")
    assert found["verdict"] == "deny" and "unreachable" in found["note"]


def test_cache_is_bounded_and_per_origin() -> None:
    cache = RobotsCache(size=2)
    for host in ("a", "b", "c"):
        cache.learn(f"http://{host}.example/", {"verdict": "allow", "body": "", "note": ""})
    assert not cache.known("http://a.example/")  # the least recently used went
    assert cache.known("http://c.example/page") and cache.allowed("http://c.example/page")
    assert robots_url("https://x.example:8443/a/b?c") == "https://x.example:8443/robots.txt"
