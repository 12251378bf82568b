"""XSS campaign (issue 16): a hostile corpus *collected* from feeds, every page in Chromium.

The payloads come the way a hostile publisher sends them: in an RSS feed's
titles, descriptions, authors, categories and links, and in an article page
that extraction fetches (so the raw-page views have one too). Every page that
shows items (lists, an author, a source, search with highlighting, every
article, sources, review, raw) is opened in headless Chromium with three
detectors: a dialog handler (``alert``), a console marker (payloads log
``XSS-RAN``) and a beacon (payloads load an image from a counting server on
loopback, which the CSP would allow: only script can ask for it). Every
response the browser gets from the reader must carry the Content-Security-Policy.
Pass: 0 dialogs, 0 markers, 0 beacon hits, the CSP on every response.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import replace
from typing import Any
from urllib.parse import quote
from xml.sax.saxutils import escape

import pytest
from aiohttp import web

from extract_site import article_page
from farm import serve_app
from test_browser_reader import ARGS, CHROMIUM, XSS
from test_web_support import open_archive, serve_web
from tidings.app import ItemQuery, Tidings
from tidings.settings import Settings

pytestmark = pytest.mark.browser

MARKER = "XSS-RAN"


def _payloads(beacon: str) -> list[str]:
    """The browser suite's corpus, each also trying the marker and the beacon."""
    run = f"console.log('{MARKER}');new Image().src='{beacon}/hit'"
    extra = [
        f"<script>{run}</script>",
        f"<img src=x onerror=\"{run}\">",
        f"<svg><script>{run}</script></svg>",
        f"<a href=\"javascript:{run}\" id=jslink>js</a>",
        f"<iframe srcdoc=\"<script>{run}</script>\"></iframe>",
        f"<math><mi xlink:href=\"javascript:{run}\">m</mi></math>",
        f"</title><script>{run}</script>",
        f"\"><svg onload=\"{run}\">",
        f"<style>*{{background:url('{beacon}/css')}}</style>",
        f"<template><script>{run}</script></template>",
    ]
    return [*XSS, *extra]


def _feed(base: str, payloads: list[str]) -> bytes:
    items = "".join(
        f"<item><title>{escape(p)}</title><link>{base}/story/{n}</link><guid>{base}/g/{n}</guid>"
        f"<author>{escape(p)}</author><category>{escape(p)}</category>"
        f"<description>{escape('<p>Body</p>' + p)}</description></item>"
        for n, p in enumerate(payloads))
    pending = (f"<item><title>Hostile page</title><link>{base}/article</link>"
               f"<guid>{base}/article</guid></item>")
    return (f"<?xml version='1.0' encoding='utf-8'?><rss version='2.0'><channel>"
            f"<title>{escape(payloads[0])}Evil</title><link>{base}/</link>{pending}{items}"
            "</channel></rss>").encode()


def _publisher(payloads: list[str], hits: Counter[str]) -> web.Application:
    async def feed(request: web.Request) -> web.Response:
        return web.Response(body=_feed(f"http://{request.host}", payloads),
                            content_type="application/rss+xml")

    async def article(request: web.Request) -> web.Response:
        page = article_page(5, title=payloads[0]).replace(
            "</article>", "".join(f"<p>{p}</p>" for p in payloads) + "</article>")
        return web.Response(text=page, content_type="text/html")

    async def beacon(request: web.Request) -> web.Response:
        hits[request.path] += 1
        return web.Response(status=204)

    app = web.Application()
    app.add_routes([web.get("/feed.xml", feed), web.get("/article", article),
                    web.get("/hit", beacon), web.get("/css", beacon)])
    return app


def _pages(tid: Tidings, payloads: list[str]) -> list[str]:
    items = tid.items.query(ItemQuery(limit=500))
    hostile = next(i for i in items if i.url and i.url.endswith("/article"))
    return ["/", "/all", "/unread", "/source/evil", "/sources", "/sources/evil", "/review",
            "/search?q=alert", "/search?q=script+onerror", f"/author?name={quote(payloads[1])}",
            f"/item/{hostile.id}/raw", f"/item/{hostile.id}/raw/0", "/trending", "/feeds",
            "/explore", *(f"/item/{i.id}/story" for i in items[:5]),
            *(f"/item/{i.id}?q=alert" for i in items)]


def test_a_collected_hostile_corpus_never_runs_script_on_any_page(settings: Settings) -> None:
    from playwright.sync_api import sync_playwright

    settings = replace(settings, initial_backfill_limit=1000)
    hits: Counter[str] = Counter()
    app_payloads: list[str] = []  # filled once the server's address (the beacon's) is known
    with serve_app(_publisher(app_payloads, hits)) as base:
        app_payloads.extend(_payloads(base))

        async def collect() -> None:
            t = Tidings.open(settings, create=True)
            await t.sources.create(f"{base}/feed.xml", source_id="evil")
            await t.collection.round()
            await t.stories.cluster_pending()  # the story pages and Trending show them too
            await t.aclose()

        asyncio.run(collect())
        tid = open_archive(settings)
        server = serve_web(tid, settings)
        seen: dict[str, Any] = {"dialogs": [], "markers": [], "no_csp": [], "loads": 0}
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS,
                                            headless=True)
                page = browser.new_page()
                page.on("dialog", lambda d: (seen["dialogs"].append(d.message), d.dismiss()))
                page.on("console", lambda m: seen["markers"].append(m.text)
                        if MARKER in m.text else None)

                def on_response(response: Any) -> None:
                    if response.url.startswith(server.url):
                        seen["loads"] += 1
                        if "content-security-policy" not in response.headers:
                            seen["no_csp"].append(response.url)

                page.on("response", on_response)
                for path in _pages(tid, app_payloads):
                    page.goto(server.url + path)
                    page.wait_for_load_state("load")
                page.wait_for_timeout(300)
                # the control: script that does run is seen by all three detectors
                page.evaluate(f"() => {{ console.log('{MARKER} control'); alert('control');"
                              f" new Image().src = '{base}/hit'; }}")
                page.wait_for_timeout(300)
                browser.close()
        finally:
            server.stop()
            tid.close()
    assert seen["loads"] > 40
    assert seen["dialogs"] == ["control"], seen["dialogs"]
    assert seen["markers"] == [f"{MARKER} control"], seen["markers"]
    assert hits == Counter({"/hit": 1}), hits
    assert seen["no_csp"] == [], seen["no_csp"]
    print(f"XSS campaign: {len(app_payloads)} payloads collected, {seen['loads']} responses "
          "with the CSP, 0 executions")

