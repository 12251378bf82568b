"""Per-host limits, spacing, Retry-After and proxy routing (R-HTTP-6, R-HTTP-8)."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from aiohttp import web

from netservers import RecordingDialer, ServerLog, TableResolver, serve, standard_app
from tidings.errors import BlockedAddressError, ConfigError
from tidings.net import Fetcher, HostLimiter, parse_retry_after, retry_after, uses_proxy
from tidings.settings import Settings

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
async def logged() -> AsyncIterator[tuple[str, ServerLog]]:
    log = ServerLog()
    async with serve(standard_app(log)) as base:
        yield base, log


def _port(base: str) -> int:
    return int(base.rsplit(":", 1)[1])


async def test_concurrency_per_host_is_capped_at_the_server(
    settings: Settings, logged: tuple[str, ServerLog]
) -> None:
    base, log = logged
    async with Fetcher(replace(settings, per_host_concurrency=2)) as fetcher:
        await asyncio.gather(*(fetcher.fetch(f"{base}/busy?wait=0.15") for _ in range(8)))
    assert log.peak["127.0.0.1"] == 2


async def test_different_hosts_are_not_serialized(
    settings: Settings, logged: tuple[str, ServerLog]
) -> None:
    base, log = logged
    names = ["a.example.com", "b.example.com", "c.example.com"]
    resolver = TableResolver.fixed({name: ["127.0.0.1"] for name in names})
    port = _port(base)
    async with Fetcher(replace(settings, per_host_concurrency=2), resolver=resolver) as fetcher:
        await asyncio.gather(
            *(fetcher.fetch(f"http://{name}:{port}/busy?wait=0.3") for name in names * 3)
        )
    assert all(log.peak[name] == 2 for name in names)
    assert log.peak_total == 6


async def test_a_request_cancelled_while_it_waits_gives_its_place_back() -> None:
    """Cancelled waiting for a busy host's slot, or during the spacing: the slot and the
    count of users are as if it never came, and the next request gets the slot."""
    limiter = HostLimiter(1, 0.0)
    async with limiter.slot("a.example"):
        waiting = asyncio.create_task(_hold(limiter, "A.example"))
        await asyncio.sleep(0.01)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
    await asyncio.wait_for(_hold(limiter, "a.example"), 1)
    spaced = HostLimiter(1, 30.0, jitter=0)
    await _hold(spaced, "b.example")  # the next start is 30 s away
    spacing = asyncio.create_task(_hold(spaced, "b.example"))
    await asyncio.sleep(0.01)
    spacing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await spacing
    for host_limiter, host in ((limiter, "a.example"), (spaced, "b.example")):
        gate = host_limiter._gates[host]
        assert gate.users == 0 and not gate.slots.locked()


async def test_a_failing_request_gives_its_slot_back() -> None:
    limiter = HostLimiter(1, 0.0)
    with pytest.raises(ValueError, match="boom"):
        async with limiter.slot("a.example"):
            raise ValueError("boom")
    gate = limiter._gates["a.example"]
    assert gate.users == 0 and not gate.slots.locked()


async def _hold(limiter: HostLimiter, host: str) -> None:
    async with limiter.slot(host):
        await asyncio.sleep(0)


async def test_requests_to_one_host_are_spaced(
    settings: Settings, logged: tuple[str, ServerLog]
) -> None:
    base, log = logged
    polite = replace(settings, per_host_concurrency=4, per_host_delay=0.2)
    async with Fetcher(polite) as fetcher:
        await asyncio.gather(*(fetcher.fetch(f"{base}/busy?wait=0") for _ in range(4)))
    starts = sorted(t for t, _ in log.starts)
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert len(gaps) == 3
    assert all(0.18 <= gap <= 0.2 * 1.5 + 0.3 for gap in gaps), gaps


async def test_spacing_does_not_eat_the_time_budget(
    settings: Settings, logged: tuple[str, ServerLog]
) -> None:
    """Waiting for a host's turn is not network time: ten queued requests all succeed."""
    base, _ = logged
    polite = replace(settings, per_host_concurrency=1, per_host_delay=0.1)
    async with Fetcher(polite) as fetcher:
        results = await asyncio.gather(
            *(fetcher.fetch(f"{base}/busy?wait=0", timeout=0.5) for _ in range(10))
        )
    assert all(r.status == 200 for r in results)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("120", NOW + timedelta(seconds=120)),
        ("0", NOW),
        (" 7 ", NOW + timedelta(seconds=7)),
        ("Wed, 01 May 2024 12:05:00 GMT", NOW + timedelta(minutes=5)),
        ("Wednesday, 01-May-24 12:05:00 GMT", NOW + timedelta(minutes=5)),
        ("Mon, 01 Jan 2024 00:00:00 GMT", NOW),  # in the past: no wait
        ("99999999999999", NOW + timedelta(hours=24)),  # capped at a day (issue 16)
        ("99999999999999999999", NOW + timedelta(hours=24)),
        ("9" * 5000, NOW + timedelta(hours=24)),
        ("0000000000000005", NOW + timedelta(hours=24)),
        ("86401", NOW + timedelta(hours=24)),
        ("Fri, 01 Jan 9999 00:00:00 GMT", NOW + timedelta(hours=24)),
        ("٣", None),
        ("", None),
        ("soon", None),
        ("-5", None),
        ("1.5", None),
    ],
)
def test_retry_after_parsing(value: str, expected: datetime | None) -> None:
    assert parse_retry_after(value, NOW) == expected


async def test_retry_after_of_a_returned_response(
    settings: Settings, logged: tuple[str, ServerLog]
) -> None:
    base, _ = logged
    async with Fetcher(settings) as fetcher:
        resp = await fetcher.fetch(f"{base}/status/503?retry=30", raise_for_status=False)
    assert retry_after(resp, NOW) == NOW + timedelta(seconds=30)


# ---------------------------------------------------------------- proxy routing


@pytest.mark.parametrize(
    ("host", "override", "expected"),
    [
        ("feeds.example.com", None, True),
        ("www.example.cn", None, False),
        ("example.cn", None, False),
        ("notcn", None, True),
        ("printer.local", None, False),
        ("93.184.216.34", None, False),
        ("2606:4700::1", None, False),
        ("feeds.example.com", False, False),
        ("www.example.cn", True, True),
    ],
)
def test_proxy_routing_decision(
    settings: Settings, host: str, override: bool | None, expected: bool
) -> None:
    proxied = replace(settings, egress_proxy="http://127.0.0.1:3128")
    assert uses_proxy(host, proxied, override) is expected
    assert uses_proxy(host, settings, override) is False  # no proxy configured


@pytest.fixture
async def proxy() -> AsyncIterator[tuple[str, list[str]]]:
    """A forward proxy that answers itself, so nothing leaves the machine."""
    seen: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        seen.append(str(request.url))
        return web.Response(text=f"via proxy: {request.url}")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    async with serve(app) as base:
        yield base, seen


async def test_requests_go_through_the_proxy_after_the_target_is_checked(
    settings: Settings, proxy: tuple[str, list[str]]
) -> None:
    proxy_url, seen = proxy
    strict = replace(settings, allow_private_hosts=(), egress_proxy=proxy_url)
    resolver = TableResolver.fixed({"feeds.example.com": ["93.184.216.34"]})
    dialer = RecordingDialer()
    async with Fetcher(strict, resolver=resolver, dial_hook=dialer) as fetcher:
        resp = await fetcher.fetch("http://feeds.example.com/rss")
    assert resp.content == b"via proxy: http://feeds.example.com/rss"
    assert seen == ["http://feeds.example.com/rss"]
    assert resolver.calls == ["feeds.example.com"]
    assert dialer.dialed == []  # the proxy was dialed, not the target


async def test_proxied_target_resolving_privately_never_reaches_the_proxy(
    settings: Settings, proxy: tuple[str, list[str]]
) -> None:
    proxy_url, seen = proxy
    strict = replace(settings, allow_private_hosts=(), egress_proxy=proxy_url)
    resolver = TableResolver.fixed({"feeds.example.com": ["10.1.2.3"]})
    async with Fetcher(strict, resolver=resolver) as fetcher:
        with pytest.raises(BlockedAddressError, match=r"10\.1\.2\.3 is a private address"):
            await fetcher.fetch("http://feeds.example.com/rss")
        with pytest.raises(BlockedAddressError, match="local host name"):
            await fetcher.fetch("http://metadata.internal/", proxy=True)
    assert seen == []


async def test_direct_suffixes_ip_literals_and_overrides_bypass_the_proxy(
    settings: Settings, proxy: tuple[str, list[str]], logged: tuple[str, ServerLog]
) -> None:
    proxy_url, seen = proxy
    base, _ = logged
    port = _port(base)
    routed = replace(settings, egress_proxy=proxy_url)
    resolver = TableResolver.fixed(
        {"news.example.cn": ["127.0.0.1"], "api.example.com": ["127.0.0.1"]}
    )
    async with Fetcher(routed, resolver=resolver) as fetcher:
        assert (await fetcher.fetch(f"http://news.example.cn:{port}/ok")).content == b"hello"
        assert (await fetcher.fetch(f"{base}/ok")).content == b"hello"
        direct = await fetcher.fetch(f"http://api.example.com:{port}/ok", proxy=False)
        assert direct.content == b"hello"
        proxied = await fetcher.fetch(f"http://api.example.com:{port}/ok")
        assert proxied.content.startswith(b"via proxy")
    assert seen == [f"http://api.example.com:{port}/ok"]


def test_a_bad_proxy_url_is_a_config_error(settings: Settings) -> None:
    with pytest.raises(ConfigError, match="egress_proxy"):
        Fetcher(replace(settings, egress_proxy="not a url at all"))


async def test_the_proxy_name_is_looked_up_by_the_fetchers_resolver(
    settings: Settings, proxy: tuple[str, list[str]]
) -> None:
    proxy_url, seen = proxy
    named = proxy_url.replace("127.0.0.1", "localhost")
    strict = replace(settings, allow_private_hosts=(), egress_proxy=named)
    resolver = TableResolver.fixed(
        {"feeds.example.com": ["93.184.216.34"], "localhost": ["127.0.0.1"]})
    async with Fetcher(strict, resolver=resolver) as fetcher:
        resp = await fetcher.fetch("http://feeds.example.com/rss")
    assert resp.content == b"via proxy: http://feeds.example.com/rss"
    assert seen == ["http://feeds.example.com/rss"]
    assert resolver.calls == ["feeds.example.com", "localhost"]
