"""Entries of one feed told apart only by a fragment, end to end (R-DEDUP-1/2/10).

The golden cases ``atom_now_page.xml`` (a "now" page: 30 entries without links,
ids ``…/now.html#<date> <title>``) and ``rss_comment_page.xml`` (5 comments
linking ``…/comment-page-1/#comment-NNN``, all titled alike) are served on
127.0.0.1 with the pages they point to, and collected with the ``tidings``
command: every entry is an item, and every item's URL opens its page.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from aiohttp import web
from click.testing import CliRunner

from farm import serve_app
from tidings.cli import cli

FEEDS = Path(__file__).parent / "data" / "feeds"
ENV = {"TIDINGS_ALLOW_PRIVATE_HOSTS": "127.0.0.1", "TIDINGS_PER_HOST_DELAY": "0",
       "TIDINGS_INITIAL_BACKFILL_MONTHS": "1200"}  # the cases' dates never age out
COMMENTS = "/2026/02/a-post-about-feeds/comment-page-1"
NOW_TITLES = ["Reading Middlemarch again", "Learning to bake sourdough"]


class Site:
    """The cases' feeds and pages, with example.com replaced by the served address."""

    def __init__(self) -> None:
        self.base = ""
        self.pages: list[str] = []  # paths of the pages opened

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/now.xml", self._feed("atom_now_page.xml"))
        app.router.add_get("/comments.xml", self._feed("rss_comment_page.xml"))
        for path in ("/now.html", COMMENTS, COMMENTS + "/"):
            app.router.add_get(path, self._page)
        return app

    def _feed(self, name: str) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def handler(request: web.Request) -> web.Response:
            body = (FEEDS / name).read_bytes().replace(b"https://example.com",
                                                       self.base.encode())
            return web.Response(body=body, content_type="application/xml")
        return handler

    async def _page(self, request: web.Request) -> web.Response:
        self.pages.append(request.path)
        return web.Response(text="<html><body><h1>One page, many entries</h1></body></html>",
                            content_type="text/html")


def run(data: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--data", str(data), *args], env=ENV)
    assert result.exit_code == 0, result.output
    return result.output


def open_url(url: str) -> int:
    """What a reader's browser does with the stored URL (no proxy: 127.0.0.1 only)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=10) as response:
        return int(response.status)


@pytest.mark.parametrize(("feed", "page", "fragments"), [
    ("now.xml", "/now.html", [f"2026-02-16 {NOW_TITLES[0]}", f"2026-02-09 {NOW_TITLES[1]}"]),
    ("comments.xml", COMMENTS, [f"comment-{n}" for n in range(214, 209, -1)]),
], ids=["now-page", "comment-page"])
def test_entries_told_apart_by_a_fragment_are_items_that_open(
    tmp_path: Path, feed: str, page: str, fragments: list[str],
) -> None:
    count = 30 if feed == "now.xml" else 5
    site = Site()
    with serve_app(site.app()) as base:
        site.base = base
        run(tmp_path, "init", "--empty")
        source = json.loads(run(tmp_path, "add", f"{base}/{feed}", "--json"))
        summary = json.loads(run(tmp_path, "collect", "--once", "--json"))
        assert summary["created"] == count and summary["failed"] == 0
        items = json.loads(run(tmp_path, "items", "--json", "--limit", "100"))
        urls = [item["url"] for item in items]
        assert len(urls) == count == len(set(urls))
        assert [item["key"] for item in items] == urls
        for url in urls:
            assert url.startswith(f"{base}{page}#")
            assert open_url(url) == 200
        assert site.pages == [page] * count
        got = [unquote(urlsplit(u).fragment) for u in urls]
        assert got[:len(fragments)] == fragments  # newest first, as listed

        # doctor and re-parse key the listing as collection did
        report = json.loads(run(tmp_path, "doctor", source["id"], "--json"))
        assert [e["verdict"] for e in report["entries"]] == ["unchanged"] * count
        assert [e["key"] for e in report["entries"]] == urls
        reparsed = json.loads(run(tmp_path, "reparse", "--json"))
        assert (reparsed["feeds"], reparsed["unchanged"], reparsed["revised"]) == (1, count, 0)
        again = json.loads(run(tmp_path, "collect", source["id"], "--json"))
        assert again["created"] == 0
        assert len(json.loads(run(tmp_path, "items", "--json", "--limit", "100"))) == count
