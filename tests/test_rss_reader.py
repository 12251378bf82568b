"""RssReader.read against real servers on 127.0.0.1 (R-RSS-1, R-RSS-7, R-RSS-9)."""

from __future__ import annotations

import gzip
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from netservers import serve
from tidings.errors import ConfigError, HTTPStatusError, ParseError
from tidings.model import Source, SourceKind
from tidings.net import Fetcher
from tidings.pipeline.reading import SourceRules
from tidings.readers import get_reader, registered_kinds
from tidings.readers.base import ReadResult
from tidings.readers.rss import RssReader, parse_feed
from tidings.readers.rss.hints import MAX_HINT, not_before
from tidings.settings import Settings

FEED = (Path(__file__).parent / "data" / "feeds" / "rss20.xml").read_bytes()
NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class Seen:
    """What the test server received."""

    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    def headers(self, n: int = -1) -> dict[str, str]:
        return self.requests[n][1]


@pytest.fixture
async def fetcher(settings: Settings) -> AsyncIterator[Fetcher]:
    async with Fetcher(settings) as f:
        yield f


def app_with(routes: dict[str, Handler], seen: Seen) -> web.Application:
    @web.middleware
    async def record(request: web.Request, handler: Handler) -> web.StreamResponse:
        seen.requests.append((request.path, {k.lower(): v for k, v in request.headers.items()}))
        return await handler(request)

    app = web.Application(middlewares=[record])
    for path, handler in routes.items():
        app.router.add_get(path, handler)
    return app


def source(url: str, cursor: dict[str, Any] | None = None, **config: Any) -> Source:
    return Source(id="s1", kind=SourceKind("rss"), url=url, config=config, cursor=cursor or {})


async def read(fetcher: Fetcher, src: Source) -> ReadResult:
    """Read as collection does: the context the pipeline builds from the source's config."""
    return await RssReader().read(SourceRules.of(src).context(src, fetcher, NOW))


def feed_response(body: bytes = FEED, **headers: str) -> web.Response:
    return web.Response(body=body, headers={"Content-Type": "application/rss+xml", **headers})


# ----------------------------------------------------------------------- delivery paths


async def plain(request: web.Request) -> web.Response:
    return feed_response()


async def gzipped(request: web.Request) -> web.Response:
    return web.Response(body=gzip.compress(FEED), headers={
        "Content-Type": "application/rss+xml", "Content-Encoding": "gzip"})


async def wrong_type(request: web.Request) -> web.Response:
    return web.Response(body=FEED, headers={"Content-Type": "text/html; charset=utf-8"})


async def no_type(request: web.Request) -> web.Response:
    return web.Response(body=FEED, headers={"Content-Type": "application/octet-stream"})


async def redirected(request: web.Request) -> web.Response:
    raise web.HTTPFound("/plain")


@pytest.mark.parametrize("path", ["/plain", "/gzip", "/wrong-type", "/no-type", "/redirect"])
async def test_same_feed_through_every_delivery_path(fetcher: Fetcher, path: str) -> None:
    routes = {"/plain": plain, "/gzip": gzipped, "/wrong-type": wrong_type,
              "/no-type": no_type, "/redirect": redirected}
    async with serve(app_with(routes, Seen())) as base:
        result = await read(fetcher, source(base + path))
        final = base + ("/plain" if path == "/redirect" else path)
    expected = parse_feed(FEED, url=final)
    assert result.items == expected.items
    assert len(result.items) == 4
    assert result.final_url == final
    assert result.http_status == 200
    assert result.bytes == len(FEED)
    assert result.title == "Example & Co. Blog"
    assert result.site_url == "https://blog.example.org/"
    assert result.items[0].url == f"{base}/2024/01/full-post"  # resolved against the final URL
    assert [r.body for r in result.raw] == [FEED]
    assert result.raw[0].source_id == "s1"
    assert result.raw[0].url == base + path


async def test_parse_raw_reparses_the_archived_response(fetcher: Fetcher) -> None:
    async with serve(app_with({"/plain": plain}, Seen())) as base:
        result = await read(fetcher, source(base + "/plain"))
    again = RssReader().parse_raw(source(base + "/plain"), result.raw[0])
    assert again.items == result.items
    assert again.title == result.title
    assert again.raw == ()


async def test_an_html_page_is_a_parse_error_naming_the_url(fetcher: Fetcher) -> None:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<html><head><title>Please log in</title></head></html>",
                            content_type="text/html")

    async with serve(app_with({"/feed": page}, Seen())) as base:
        with pytest.raises(ParseError, match=r"/feed: not a feed: got an HTML page \(<title>Plea"):
            await read(fetcher, source(base + "/feed"))


# ----------------------------------------------------------------------- conditional GET


def conditional(etag: str) -> Handler:
    async def handler(request: web.Request) -> web.Response:
        if request.headers.get("If-None-Match") == etag:
            return web.Response(status=304, headers={"ETag": etag})
        return feed_response(ETag=etag, **{"Last-Modified": "Sat, 01 Jun 2024 10:00:00 GMT"})

    return handler


async def test_conditional_get_round_trip(fetcher: Fetcher) -> None:
    seen = Seen()
    async with serve(app_with({"/feed": conditional('"v1"')}, seen)) as base:
        first = await read(fetcher, source(base + "/feed"))
        assert first.cursor == {"etag": '"v1"', "last_modified": "Sat, 01 Jun 2024 10:00:00 GMT",
                                "validators_url": base + "/feed",
                                # the feed names a WebSub hub (R-RSS-8)
                                "websub_hub": "https://hub.example.net/",
                                "websub_topic": "https://blog.example.org/feed.xml"}
        assert "if-none-match" not in seen.headers()
        second = await read(fetcher, source(base + "/feed", cursor=dict(first.cursor)))
    assert seen.headers()["if-none-match"] == '"v1"'
    assert seen.headers()["if-modified-since"] == "Sat, 01 Jun 2024 10:00:00 GMT"
    assert second.not_modified
    assert second.items == ()
    assert second.http_status == 304
    assert second.cursor == first.cursor  # unchanged; nothing new to store


async def test_304_from_another_final_url_is_ignored(fetcher: Fetcher) -> None:
    """The source now redirects elsewhere; that host's 304 says nothing about our ETag."""
    seen = Seen()

    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPMovedPermanently("/new-feed")

    routes = {"/feed": moved, "/new-feed": conditional('"v1"')}
    async with serve(app_with(routes, seen)) as base:
        cursor = {"etag": '"v1"', "last_modified": None, "validators_url": base + "/old-feed"}
        result = await read(fetcher, source(base + "/feed", cursor=cursor))
    assert not result.not_modified
    assert len(result.items) == 4
    assert result.final_url == base + "/new-feed"
    assert result.cursor["validators_url"] == base + "/new-feed"
    conditional_hits = [h for p, h in seen.requests if p == "/new-feed" and "if-none-match" in h]
    assert len(conditional_hits) == 1  # the conditional try, then one unconditional refetch
    assert "if-none-match" not in seen.headers()


async def test_validators_without_their_url_are_not_sent(fetcher: Fetcher) -> None:
    seen = Seen()
    async with serve(app_with({"/feed": conditional('"v1"')}, seen)) as base:
        result = await read(fetcher, source(base + "/feed", cursor={"etag": '"v1"'}))
    assert "if-none-match" not in seen.headers()
    assert len(result.items) == 4


async def test_no_validators_means_an_empty_cursor(fetcher: Fetcher) -> None:
    async with serve(app_with({"/plain": plain}, Seen())) as base:
        result = await read(fetcher, source(base + "/plain", cursor={"etag": "old"}))
    # no validators kept (what is left names the feed's WebSub hub, R-RSS-8)
    assert set(result.cursor) <= {"websub_hub", "websub_topic"}


# ----------------------------------------------------------------------- 403 and request options


async def picky(request: web.Request) -> web.Response:
    """403 unless the request looks like a browser's."""
    if not request.headers.get("Accept", "").startswith("text/html"):
        return web.Response(status=403, text="forbidden")
    return feed_response()


async def test_403_is_retried_once_with_browser_accept_headers(fetcher: Fetcher) -> None:
    seen = Seen()
    async with serve(app_with({"/feed": picky}, seen)) as base:
        result = await read(fetcher, source(base + "/feed"))
    assert len(result.items) == 4
    assert len(seen.requests) == 2
    assert "application/rss+xml" in seen.headers(0)["accept"]
    assert "accept-language" in seen.headers(1)


async def test_the_403_retry_keeps_the_headers_the_user_configured(fetcher: Fetcher) -> None:
    """Issue 15: the browser-header retry overwrote a configured Accept-Language."""
    seen = Seen()
    async with serve(app_with({"/feed": picky}, seen)) as base:
        result = await read(fetcher, source(base + "/feed",
                                            headers={"accept-language": "de-DE"}))
    assert len(result.items) == 4 and len(seen.requests) == 2
    assert seen.headers(0)["accept-language"] == "de-DE"
    assert seen.headers(1)["accept-language"] == "de-DE", "the user's header wins"
    assert seen.headers(1)["accept"].startswith("text/html")


async def test_a_second_403_is_raised(fetcher: Fetcher) -> None:
    seen = Seen()

    async def never(request: web.Request) -> web.Response:
        return web.Response(status=403)

    async with serve(app_with({"/feed": never}, seen)) as base:
        with pytest.raises(HTTPStatusError) as info:
            await read(fetcher, source(base + "/feed"))
    assert info.value.status == 403
    assert len(seen.requests) == 2


async def test_other_errors_are_not_retried(fetcher: Fetcher) -> None:
    seen = Seen()

    async def gone(request: web.Request) -> web.Response:
        return web.Response(status=410)

    async with serve(app_with({"/feed": gone}, seen)) as base:
        with pytest.raises(HTTPStatusError):
            await read(fetcher, source(base + "/feed"))
    assert len(seen.requests) == 1


async def test_per_source_request_options_reach_the_server(fetcher: Fetcher) -> None:
    seen = Seen()
    async with serve(app_with({"/plain": plain}, seen)) as base:
        await read(fetcher, source(base + "/plain", user_agent="MyAgent/1.0", cookie="sid=abc",
                                   headers={"X-Token": "t1"}, proxy=False))
    sent = seen.headers()
    assert sent["user-agent"] == "MyAgent/1.0"
    assert sent["cookie"] == "sid=abc"
    assert sent["x-token"] == "t1"


async def test_default_user_agent_is_the_crawlers(fetcher: Fetcher, settings: Settings) -> None:
    seen = Seen()
    async with serve(app_with({"/plain": plain}, seen)) as base:
        await read(fetcher, source(base + "/plain"))
    assert seen.headers()["user-agent"] == settings.user_agent


# ----------------------------------------------------------------------- caching hints


async def test_caching_hints_push_the_next_fetch_later(fetcher: Fetcher) -> None:
    async def cached(request: web.Request) -> web.Response:
        return feed_response(**{"Cache-Control": "public, max-age=7200"})

    async with serve(app_with({"/plain": plain, "/cached": cached}, Seen())) as base:
        ttl_only = await read(fetcher, source(base + "/plain"))  # <ttl>90</ttl>
        max_age = await read(fetcher, source(base + "/cached"))
    assert ttl_only.not_before == NOW + timedelta(minutes=90)
    assert max_age.not_before == NOW + timedelta(hours=2)


HINTS = [
    ({}, None, None),
    ({}, 30, NOW + timedelta(minutes=30)),
    ({"cache-control": "max-age=600"}, 30, NOW + timedelta(minutes=30)),
    ({"cache-control": "max-age=3600"}, 30, NOW + timedelta(hours=1)),
    ({"cache-control": "no-cache, max-age=3600"}, None, None),
    ({"cache-control": "max-age=0"}, None, None),
    ({"expires": format_datetime(NOW + timedelta(hours=3), usegmt=True)}, None,
     NOW + timedelta(hours=3)),
    # Expires is read against the server's Date: its clock may be off by hours
    ({"expires": "Mon, 01 Jan 2024 03:00:00 GMT", "date": "Mon, 01 Jan 2024 01:00:00 GMT"},
     None, NOW + timedelta(hours=2)),
    ({"expires": "0"}, None, None),
    ({"expires": "Mon, 01 Jan 2024 03:00:00 GMT", "cache-control": "max-age=60"}, None,
     NOW + timedelta(minutes=1)),
    ({"cache-control": "max-age=99999999"}, None, NOW + MAX_HINT),
]


@pytest.mark.parametrize(("headers", "ttl", "expected"), HINTS)
def test_not_before(headers: dict[str, str], ttl: int | None, expected: datetime | None) -> None:
    assert not_before(headers, ttl, NOW) == expected


# ----------------------------------------------------------------------- config and registry


def test_registry_finds_the_rss_reader() -> None:
    reader = get_reader(SourceKind("rss"))
    assert isinstance(reader, RssReader)
    assert get_reader("rss") is reader
    assert SourceKind("rss") in registered_kinds()


@pytest.mark.parametrize("kind", ["nonsense", ""])
def test_registry_rejects_unknown_kinds(kind: str) -> None:
    with pytest.raises(ConfigError, match="unknown source kind"):
        get_reader(kind)


async def test_unknown_config_key_fails_the_read(fetcher: Fetcher) -> None:
    with pytest.raises(ConfigError, match="'items_path'"):
        await read(fetcher, source("http://127.0.0.1:9/feed", items_path="$.x"))
    assert fetcher.connections_opened == 0, "refused before any request"
