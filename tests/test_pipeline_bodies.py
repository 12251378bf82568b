"""Feeds whose body fails only when decoded: in the loop or in worker processes."""

from __future__ import annotations

import gzip
import pickle
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from aiohttp import web

import tidings.errors as errors_module
from netservers import serve
from tidings.app import Tidings
from tidings.errors import TidingsError
from tidings.model import RunOutcome
from tidings.settings import Settings

_RSS = ("<?xml version='1.0'?><rss version='2.0'><channel><title>F{n}</title>"
        "<item><guid>g{n}</guid><title>Item {n}</title><link>http://x.example/{n}</link>"
        "<description>Body {n}</description></item></channel></rss>")
_BOMB = gzip.compress(b"<rss>" + b" " * 2_000_000, compresslevel=9)


def _app() -> web.Application:
    async def feed(request: web.Request) -> web.Response:
        n = request.match_info["n"]
        return web.Response(body=gzip.compress(_RSS.format(n=n).encode()),
                            headers={"Content-Encoding": "gzip",
                                     "Content-Type": "application/rss+xml"})

    async def bomb(request: web.Request) -> web.Response:
        return web.Response(body=_BOMB, headers={"Content-Encoding": "gzip",
                                                 "Content-Type": "application/rss+xml"})

    app = web.Application()
    app.add_routes([web.get("/feed/{n}", feed), web.get("/bomb", bomb)])
    return app


async def test_a_body_too_large_once_decoded_fails_its_source_only(settings: Settings) -> None:
    """The round keeps such bodies encoded until their turn to be parsed; the cap
    still holds then."""
    t = Tidings.open(replace(settings, http_max_bytes=1_000_000), create=True)
    async with serve(_app()) as base:
        for n in range(60):
            await t.sources.create(f"{base}/feed/{n}", source_id=f"f{n}")
        await t.sources.create(f"{base}/bomb", source_id="bomb")
        report = await t.collection.round()
    assert report.results["bomb"].outcome is RunOutcome.FAILED
    assert report.results["bomb"].error == f"{base}/bomb: body larger than 1000000 bytes " \
                                           "(raise max_bytes if it is expected)"
    assert report.created == 60 and report.failed == 1
    await t.aclose()


def _sample(cls: type[TidingsError]) -> TidingsError:
    if issubclass(cls, errors_module.HTTPStatusError):
        return cls("http://x/", "http://x/: HTTP 503", 503, datetime(2026, 1, 1, tzinfo=UTC))
    if issubclass(cls, errors_module.FetchError):
        return cls("http://x/", "http://x/: failed")
    if issubclass(cls, errors_module.ParseError):
        return cls("not a feed", "http://x/")
    if issubclass(cls, errors_module.ProviderError):
        return cls("socialdata", "rate limited", datetime(2026, 1, 1, tzinfo=UTC))
    return cls("went wrong")


@pytest.mark.parametrize("cls", [c for c in vars(errors_module).values()
                                 if isinstance(c, type) and issubclass(c, TidingsError)])
def test_every_error_crosses_a_process_boundary_whole(cls: type[TidingsError]) -> None:
    error = _sample(cls)
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is cls and str(again) == str(error) and vars(again) == vars(error)
