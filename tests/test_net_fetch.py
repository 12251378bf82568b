"""Redirects, time budget, byte cap, conditional requests and statuses (R-HTTP-2..4, 7, 9)."""

from __future__ import annotations

import gzip
import re
import time
import zlib
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from aiohttp import web

from netservers import GZIP_BOMB_SIZE, ServerLog, body_app, serve, standard_app
from tidings.errors import (
    BodyTooLargeError,
    FetchError,
    FetchTimeoutError,
    HTTPStatusError,
    TooManyRedirectsError,
)
from tidings.net import Fetcher
from tidings.settings import Settings


@pytest.fixture
async def server() -> AsyncIterator[str]:
    async with serve(standard_app(ServerLog())) as base:
        yield base


@pytest.fixture
async def fetcher(settings: Settings) -> AsyncIterator[Fetcher]:
    async with Fetcher(settings) as f:
        yield f


async def test_five_redirects_are_followed_and_reported(fetcher: Fetcher, server: str) -> None:
    resp = await fetcher.fetch(f"{server}/chain/5")
    assert resp.content == b"end of chain"
    assert resp.url == f"{server}/chain/5"
    assert resp.final_url == f"{server}/chain/0"
    assert resp.redirects == tuple(f"{server}/chain/{n}" for n in (5, 4, 3, 2, 1))
    assert fetcher.connections_opened == 1  # a redirect's small body is read: one connection


async def test_a_sixth_redirect_is_an_error(fetcher: Fetcher, server: str) -> None:
    with pytest.raises(TooManyRedirectsError, match="more than 5 redirects") as info:
        await fetcher.fetch(f"{server}/chain/6")
    assert info.value.url == f"{server}/chain/6"


async def test_a_redirect_loop_is_an_error(fetcher: Fetcher, server: str) -> None:
    with pytest.raises(TooManyRedirectsError, match=r"redirect loop at .*/loop/a"):
        await fetcher.fetch(f"{server}/loop/a")


async def test_303_after_post_continues_as_get(fetcher: Fetcher, server: str) -> None:
    resp = await fetcher.fetch(f"{server}/post-303", method="POST", json={"q": 1})
    assert resp.content == b"GET "


async def test_json_body_is_sent(fetcher: Fetcher, server: str) -> None:
    resp = await fetcher.fetch(f"{server}/method", method="POST", json={"q": 1})
    assert resp.content == b'POST {"q":1}'


async def test_conditional_request_gets_304_with_the_final_url(
    fetcher: Fetcher, server: str
) -> None:
    resp = await fetcher.fetch(f"{server}/old", etag='"v2"')
    assert resp.not_modified
    assert resp.status == 304
    assert resp.final_url == f"{server}/new"
    assert resp.redirects == (f"{server}/old",)
    assert resp.etag == '"v2"'
    assert resp.content == b""
    changed = await fetcher.fetch(f"{server}/old", etag='"v1"')
    assert changed.status == 200
    assert changed.content == b"new content"


async def test_user_agent_is_honest(settings: Settings) -> None:
    log = ServerLog()
    async with serve(standard_app(log)) as base, Fetcher(settings) as fetcher:
        await fetcher.fetch(f"{base}/ok")
        await fetcher.fetch(f"{base}/ok", headers={"User-Agent": "Mozilla/5.0 (disguise)"})
    assert log.user_agents == [settings.user_agent] * 2
    assert re.fullmatch(r"tidings/\d+\.\d+\.\d+ \(\+https?://\S+\)", settings.user_agent)


async def test_error_status_raises_with_url_and_retry_after(fetcher: Fetcher, server: str) -> None:
    before = datetime.now(UTC)
    with pytest.raises(HTTPStatusError) as info:
        await fetcher.fetch(f"{server}/status/429?retry=120")
    err = info.value
    assert err.status == 429
    assert err.kind == "http"
    assert str(err).startswith(f"{server}/status/429?retry=120: HTTP 429")
    assert err.retry_after is not None
    assert before + timedelta(seconds=119) <= err.retry_after <= datetime.now(UTC) + timedelta(
        seconds=121
    )


async def test_503_with_an_http_date(fetcher: Fetcher, server: str) -> None:
    with pytest.raises(HTTPStatusError) as info:
        await fetcher.fetch(f"{server}/status/503?retry=Wed, 21 Oct 2099 07:28:00 GMT")
    # a date decades ahead is capped at a day (issue 16)
    wait = info.value.retry_after - datetime.now(UTC) if info.value.retry_after else None
    assert wait is not None and timedelta(hours=23, minutes=59) < wait <= timedelta(hours=24)


async def test_error_status_can_be_returned(fetcher: Fetcher, server: str) -> None:
    resp = await fetcher.fetch(f"{server}/status/404", raise_for_status=False)
    assert resp.status == 404
    assert resp.content == b"nope"


async def test_slow_drip_cannot_stretch_the_budget(fetcher: Fetcher, server: str) -> None:
    """Every read arrives within any per-read timeout; only a budget for the whole
    fetch ends it, long before the 200 s the drip would last (a bound 10x the budget,
    not a tight one, so a loaded machine does not fail it)."""
    start = time.monotonic()
    with pytest.raises(FetchTimeoutError, match=r"within 1\.5 s") as info:
        await fetcher.fetch(f"{server}/drip?every=0.2", timeout=1.5)
    assert 1.4 < time.monotonic() - start < 15
    assert info.value.kind == "timeout"


async def test_budget_covers_every_redirect(fetcher: Fetcher, server: str) -> None:
    """Four hops of 0.4 s each fit no single per-read timeout but blow a 1 s budget:
    were the budget per hop, the chain would succeed after 1.6 s instead of raising."""
    with pytest.raises(FetchTimeoutError):
        await fetcher.fetch(f"{server}/slow-redirect/3?wait=0.4", timeout=1.0)


async def test_default_budget_comes_from_settings(settings: Settings, server: str) -> None:
    async with Fetcher(replace(settings, http_timeout=0.8)) as fetcher:
        with pytest.raises(FetchTimeoutError, match=r"within 0\.8 s"):
            await fetcher.fetch(f"{server}/drip?every=0.1")


async def test_gzip_bomb_stops_at_the_cap(fetcher: Fetcher, server: str) -> None:
    start = time.monotonic()
    with pytest.raises(BodyTooLargeError, match=f"larger than {8 * 1024 * 1024} bytes"):
        await fetcher.fetch(f"{server}/bomb")
    assert time.monotonic() - start < 5
    resp = await fetcher.fetch(f"{server}/bomb", max_bytes=GZIP_BOMB_SIZE)
    assert len(resp.content) == GZIP_BOMB_SIZE


async def test_endless_body_stops_at_the_per_call_cap(fetcher: Fetcher, server: str) -> None:
    with pytest.raises(BodyTooLargeError) as info:
        await fetcher.fetch(f"{server}/endless", max_bytes=1_000_000)
    assert info.value.kind == "too_large"
    assert info.value.url == f"{server}/endless"


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", lambda b: zlib.compress(b)[2:-4]),  # raw deflate, as some servers send
        ("gzip", lambda b: gzip.compress(b[:7]) + gzip.compress(b[7:])),  # two members
        ("identity", lambda b: b),
    ],
)
async def test_compressed_bodies_are_decoded(
    fetcher: Fetcher, encoding: str, encode: object
) -> None:
    text = b"<rss>" + b"plenty of news " * 500 + b"</rss>"
    assert callable(encode)
    body = encode(text)
    async with serve(body_app(body, {"Content-Encoding": encoding})) as base:
        resp = await fetcher.fetch(f"{base}/feed")
    assert resp.content == text


async def test_cap_counts_decoded_bytes(fetcher: Fetcher) -> None:
    body = gzip.compress(b"a" * 100_000)
    async with serve(body_app(body, {"Content-Encoding": "gzip"})) as base:
        with pytest.raises(BodyTooLargeError):
            await fetcher.fetch(f"{base}/x", max_bytes=50_000)
        assert len((await fetcher.fetch(f"{base}/x", max_bytes=100_000)).content) == 100_000


async def test_corrupt_and_unknown_encodings_are_fetch_errors(fetcher: Fetcher) -> None:
    async with serve(body_app(b"not gzip at all", {"Content-Encoding": "gzip"})) as base:
        with pytest.raises(FetchError, match="corrupt gzip body"):
            await fetcher.fetch(f"{base}/x")
    async with serve(body_app(b"??", {"Content-Encoding": "br"})) as base:
        with pytest.raises(FetchError, match="unsupported Content-Encoding 'br'"):
            await fetcher.fetch(f"{base}/x")


@pytest.mark.parametrize("encode", [gzip.compress, zlib.compress])
async def test_a_deferred_body_is_held_as_sent_and_decoded_when_read(
    fetcher: Fetcher, encode: Callable[[bytes], bytes]
) -> None:
    text = b"<rss>" + "新闻 plenty of news ".encode() * 2000 + b"</rss>"
    encoding = "gzip" if encode is gzip.compress else "deflate"
    async with serve(body_app(encode(text), {"Content-Encoding": encoding})) as base:
        resp = await fetcher.fetch(f"{base}/feed", defer_decoding=True)
        eager = await fetcher.fetch(f"{base}/feed")
    assert not resp.body.decoded and resp.body.held_bytes == len(encode(text)) < len(text) // 10
    assert resp.content == eager.content == text
    assert resp.body.decoded and resp.body.held_bytes == len(text)


async def test_a_deferred_body_fails_when_read_as_an_eager_one_fails_when_fetched(
    fetcher: Fetcher, server: str
) -> None:
    """Same errors, same messages; only the moment differs (the bomb is small as sent)."""
    with pytest.raises(BodyTooLargeError) as eager:
        await fetcher.fetch(f"{server}/bomb")
    deferred = await fetcher.fetch(f"{server}/bomb", defer_decoding=True)
    with pytest.raises(BodyTooLargeError) as late:
        _ = deferred.content
    assert str(late.value) == str(eager.value) and late.value.url == eager.value.url
    with pytest.raises(BodyTooLargeError):  # a body too large as sent stops at once
        await fetcher.fetch(f"{server}/endless", max_bytes=1_000_000, defer_decoding=True)
    async with serve(body_app(b"not gzip at all", {"Content-Encoding": "gzip"})) as base:
        corrupt = await fetcher.fetch(f"{base}/x", defer_decoding=True)
        with pytest.raises(FetchError, match="corrupt gzip body"):
            _ = corrupt.content
    async with serve(body_app(b"??", {"Content-Encoding": "br"})) as base:
        with pytest.raises(FetchError, match="unsupported Content-Encoding 'br'"):
            await fetcher.fetch(f"{base}/x", defer_decoding=True)


async def test_keep_alive_reuses_connections(fetcher: Fetcher, server: str) -> None:
    for _ in range(5):
        await fetcher.fetch(f"{server}/ok")
    assert fetcher.connections_opened == 1


async def test_response_headers_are_lower_cased(fetcher: Fetcher, server: str) -> None:
    resp = await fetcher.fetch(f"{server}/ok")
    assert resp.headers["etag"] == '"v1"'
    assert resp.content_type == "text/plain"
    assert resp.elapsed > 0
    assert resp.fetched_at.tzinfo is UTC


async def test_the_pool_stays_usable_after_aborted_bodies(fetcher: Fetcher, server: str) -> None:
    """A timeout or cap abort mid-body must not leave a broken connection in the pool."""
    with pytest.raises(FetchTimeoutError):
        await fetcher.fetch(f"{server}/drip?every=0.2", timeout=0.5)
    with pytest.raises(BodyTooLargeError):
        await fetcher.fetch(f"{server}/endless", max_bytes=100_000)
    for _ in range(3):
        assert (await fetcher.fetch(f"{server}/ok")).content == b"hello"


async def test_no_cookie_jar_carries_state_between_requests(fetcher: Fetcher) -> None:
    async def set_cookie(request: web.Request) -> web.Response:
        response = web.Response(text="set")
        response.set_cookie("session", "s3cret")
        return response

    async def show(request: web.Request) -> web.Response:
        return web.Response(text=request.headers.get("Cookie", "none"))

    app = web.Application()
    app.router.add_get("/set", set_cookie)
    app.router.add_get("/show", show)
    async with serve(app) as base:
        assert (await fetcher.fetch(f"{base}/set")).headers["set-cookie"].startswith("session=")
        assert (await fetcher.fetch(f"{base}/show")).content == b"none"
