"""``tidings crawl`` end to end on four tiny blogs on 127.0.0.2-5 (R-DISC-3)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from aiohttp import web
from click.testing import CliRunner

from farm import serve_app
from tidings.cli import cli

ENV = {"TIDINGS_ALLOW_PRIVATE_HOSTS": "127.0.0.0/8", "TIDINGS_PER_HOST_DELAY": "0"}
HOSTS = ("127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5")


def run(data: Path, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--data", str(data), *args], env=ENV)
    assert result.exit_code == code, result.output
    return result.output


def blog(name: str, bases: dict[str, str], requests: Counter[str]) -> web.Application:
    async def handle(request: web.Request) -> web.Response:
        requests[f"{name}{request.path}"] += 1
        if request.path == "/robots.txt":
            if name == "c":
                return web.Response(text="User-agent: tidings-crawler\nDisallow: /\n")
            raise web.HTTPNotFound()
        if request.path == "/":
            roll = "".join(f'<li><a href="{bases[o]}/">Blog {o.upper()}</a></li>'
                           for o in "bcd" if o != name) if name == "a" else ""
            return web.Response(content_type="text/html", text=(
                f'<html><head><title>Blog {name.upper()}</title><link rel="alternate" '
                f'type="application/rss+xml" href="/feed.xml"></head><body><main><p>Blog '
                f'{name.upper()} writes about tea, trains and typography, slowly and at '
                f'length, since 2009.</p></main><aside><ul class="blogroll">{roll}</ul></aside>'
                f'</body></html>'))
        if request.path == "/feed.xml":
            return web.Response(content_type="application/rss+xml", text=(
                f'<?xml version="1.0"?><rss version="2.0"><channel><title>Blog {name.upper()}'
                f'</title><link>{bases[name]}/</link><description>d</description>'
                f'<item><title>t</title><link>{bases[name]}/1</link></item></channel></rss>'))
        raise web.HTTPNotFound()

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    return app


@pytest.fixture
def blogs() -> Iterator[tuple[dict[str, str], Counter[str]]]:
    bases: dict[str, str] = {}
    requests: Counter[str] = Counter()
    with ExitStack() as stack:
        for name, host in zip("abcd", HOSTS, strict=True):
            bases[name] = stack.enter_context(serve_app(blog(name, bases, requests), host))
        yield bases, requests


def test_crawl_results_opml_and_add(tmp_path: Path,
                                    blogs: tuple[dict[str, str], Counter[str]]) -> None:
    bases, requests = blogs
    opml = tmp_path / "found.opml"
    out = run(tmp_path, "crawl", bases["a"] + "/", "--depth", "1", "--out", str(opml))
    assert "3 feeds from 3 sites" in out and "1 skipped" in out
    assert requests["c/"] == 0, "robots.txt said no"
    assert max(requests.values()) == 1

    listing = json.loads(run(tmp_path, "crawl", "--results", "--json"))
    finds = {f["feed_url"]: f for f in listing["finds"]}
    assert set(finds) == {bases[n] + "/feed.xml" for n in "abd"}
    b = finds[bases["b"] + "/feed.xml"]
    assert (b["site_title"], b["depth"], b["found_from"]) == ("Blog B", 1, "127.0.0.2")
    assert b["abstract"].startswith("Blog B writes about tea")
    (trouble,) = listing["troubles"]
    assert trouble["site"] == "127.0.0.4" and "robots.txt disallows" in trouble["reason"]

    outlines = ET.parse(opml).getroot().findall(".//outline")
    assert {o.get("xmlUrl") for o in outlines} == set(finds)
    first = next(o for o in outlines if o.get("xmlUrl") == b["feed_url"])
    assert (first.get("title"), first.get("depth"), first.get("feedType")) == ("Blog B", "1",
                                                                                 "rss")
    assert first.get("description", "").startswith("Blog B writes") and first.get("foundFrom")

    assert "added 1 source from crawl" in run(tmp_path, "crawl", "--add", str(b["id"]))
    sources = json.loads(run(tmp_path, "sources", "--json"))
    assert [s["url"] for s in sources] == [b["feed_url"]]
    again = run(tmp_path, "crawl", "--add", "all")
    assert "added 2 sources" in again and "already a source" in again
    missing = run(tmp_path, "crawl", "--add", "99", code=1)  # docs/cli.md: not done is 1
    assert "find 99: not in crawl 1" in missing and "added 0 sources" in missing
    table = run(tmp_path, "crawl", "--results")  # piped: tab-separated, "added" second
    assert [line.split("\t")[1] for line in table.splitlines() if "\t" in line] == ["yes"] * 3


def test_crawl_bad_input_is_one_line(tmp_path: Path) -> None:
    out = run(tmp_path, "crawl", "--results", code=1)
    assert out.startswith("tidings: no crawl yet") and "Traceback" not in out
    out = run(tmp_path, "crawl", "ftp://example.org/", code=2)
    assert "not a web address" in out
    out = run(tmp_path, "crawl", "https://a.example/", "--depth", "-1", code=2)
    assert "--depth" in out
    out = run(tmp_path, "crawl", code=2)
    assert "name the sites to start from" in out
    assert "no unfinished crawl" in run(tmp_path, "crawl", "--resume", code=1)
    assert "give find numbers" in run(tmp_path, "crawl", "--add", "x,y", code=2)
