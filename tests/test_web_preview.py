"""The Preview button of the add and edit pages, and the proposal for a page without
a feed, over real HTTP (issue 17)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from aiohttp import web

from farm import serve_app
from test_web_support import open_archive, run, serve_web
from tidings.app import Tidings
from tidings.model import SourceKind
from tidings.settings import Settings

DATA = Path(__file__).parent / "data" / "web_list"
CARDS = (DATA / "company_news_cards.html").read_bytes()
CONFIG = json.loads((DATA / "company_news_cards.source.json").read_text())["config"]


@dataclass
class World:
    tid: Tidings
    client: httpx.Client
    site: str

    def csrf(self, path: str) -> str:
        found = re.search(r'name="csrf" value="([^"]+)"', self.client.get(path).text)
        assert found
        return found.group(1)


@pytest.fixture
def world(settings: Settings) -> Iterator[World]:
    app = web.Application()

    async def page(request: web.Request) -> web.Response:
        return web.Response(body=CARDS, content_type="text/html")

    app.router.add_get("/news", page)
    tid = open_archive(settings)
    server = serve_web(tid, settings)
    with serve_app(app) as site, httpx.Client(base_url=server.url, timeout=20) as client:
        yield World(tid, client, site)
    server.stop()
    # the server's requests opened the archive's fetcher on the server's loop; close it
    # (the served app does this at its shutdown, serve_web's test server does not)
    run(tid.aclose)


def test_preview_on_the_add_page_shows_entries_and_keeps_the_form(world: World) -> None:
    form = {"csrf": world.csrf("/add"), "url": f"{world.site}/news", "kind": "web_list",
            "title": "Lumen", "config": json.dumps(CONFIG)}
    shown = world.client.post("/add/preview", data=form)
    assert shown.status_code == 200
    assert "Introducing Lumen 4" in shown.text and "2026-09-24 16:00" in shown.text
    assert f"{world.site}/news/introducing-lumen-4" in shown.text  # the identity key
    assert 'value="Lumen"' in shown.text and "news-grid" in shown.text
    assert world.tid.sources.all() == []
    broken = world.client.post("/add/preview", data={**form, "config": '{"item": "ul.gone"}'})
    assert broken.status_code == 200 and "item selector &#39;ul.gone&#39; matched nothing" in (
        broken.text)
    typo = world.client.post("/add/preview", data={**form, "config": '{"itme": "a"}'})
    assert typo.status_code == 400 and "did you mean &#39;item&#39;?" in typo.text


def test_preview_on_the_edit_page_tries_the_typed_config(world: World) -> None:
    run(lambda: world.tid.sources.create(f"{world.site}/news", kind=SourceKind("web_list"),
                                         source_id="lumen", config={"item": "article"}))
    form = {"csrf": world.csrf("/sources/lumen"), "title": "", "url": f"{world.site}/news",
            "interval_min": "30", "priority": "0", "visibility": "editorial", "folder": "",
            "config": json.dumps({**CONFIG, "date": ".card__eyebrow"})}
    shown = world.client.post("/sources/lumen/preview", data=form)
    assert shown.status_code == 200
    assert "date selector &#39;.card__eyebrow&#39;: no date in a known format" in shown.text
    assert world.tid.sources.get("lumen").config == {"item": "article"}, "nothing was saved"


def test_a_page_without_a_feed_gets_proposed_rules(world: World) -> None:
    page = world.client.post("/add/find", data={"url": f"{world.site}/news",
                                                "csrf": world.csrf("/add")})
    assert page.status_code == 422
    assert "no feed found on this page" in page.text
    assert "Preview" in page.text and "Introducing Lumen 4" in page.text
    assert "article.card" in page.text and '<option value="web_list" selected>' in page.text
