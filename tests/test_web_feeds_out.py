"""Feeds out (R-API-2): Atom and JSON Feed 1.1 of every stream, conditional GET, paging,
per-feed keys in private mode, saved searches; isolated sources in none of them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import feedparser
import httpx
import jsonschema
import pytest

from test_web_support import (
    ServerThread,
    Spec,
    add_items,
    add_source,
    new_token,
    open_archive,
    run,
    serve_web,
    store_password,
)
from tidings.app import SourceUpdate, Tidings
from tidings.model import Visibility
from tidings.settings import Settings

SCHEMA = json.loads((Path(__file__).parent / "data" / "jsonfeed-1.1.schema.json").read_text())


@pytest.fixture
def archive(settings: Settings) -> Iterator[tuple[Tidings, Settings]]:
    tid = open_archive(settings)
    add_source(tid, "alpha", "Alpha")
    add_source(tid, "beta", "Beta")
    add_source(tid, "hidden", "Hidden", visibility=Visibility.ISOLATED)
    run(lambda: tid.sources.update("alpha", SourceUpdate(folder="Tech")))
    add_items(tid, [Spec(f"Alpha story {i}", source_id="alpha", age=timedelta(minutes=i),
                         author="Ann") for i in range(7)])
    add_items(tid, [Spec(f"Beta story {i} rust", source_id="beta",
                         age=timedelta(minutes=30 + i)) for i in range(3)])
    add_items(tid, [Spec("Secret story rust", source_id="hidden")])
    store_password(tid, "a long password")
    yield tid, settings
    tid.close()


@pytest.fixture
def public(archive: tuple[Tidings, Settings]) -> Iterator[tuple[Tidings, ServerThread]]:
    tid, settings = archive
    server = serve_web(tid, replace(settings, public_reading=True))
    yield tid, server
    server.stop()


def parse(server: ServerThread, path: str) -> Any:
    answer = httpx.get(server.url + path)
    assert answer.status_code == 200, (path, answer.text)
    assert answer.headers["content-type"].startswith("application/atom+xml")
    feed = feedparser.parse(answer.content)
    assert not feed.bozo, feed.bozo_exception
    return feed


def check_json_feed(server: ServerThread, path: str) -> dict[str, Any]:
    answer = httpx.get(server.url + path)
    assert answer.status_code == 200 and "feed+json" in answer.headers["content-type"]
    doc: dict[str, Any] = answer.json()
    jsonschema.validate(doc, SCHEMA)
    for item in doc["items"]:
        datetime.fromisoformat(item["date_published"])
        assert item["url"].startswith("http")
    return doc


def test_every_stream_as_atom_and_json_feed(public: tuple[Tidings, ServerThread]) -> None:
    _, server = public
    everything = parse(server, "/feeds/all.atom")
    titles = [e.title for e in everything.entries]
    assert len(titles) == 10 and "Secret story rust" not in titles
    assert titles[0] == "Alpha story 0" and everything.entries[0].author == "Ann"
    assert everything.entries[0].content[0].value == "<p>Body text.</p>"
    assert [e.title for e in parse(server, "/feeds/source/beta.atom").entries] == [
        f"Beta story {i} rust" for i in range(3)]
    assert len(parse(server, "/feeds/folder/Tech.atom").entries) == 7
    assert httpx.get(server.url + "/feeds/folder/tech.atom").status_code == 404  # exact names
    doc = check_json_feed(server, "/feeds/all.json")
    assert [i["title"] for i in doc["items"]] == titles
    assert len(check_json_feed(server, "/feeds/source/alpha.json")["items"]) == 7
    assert len(check_json_feed(server, "/feeds/folder/Tech.json")["items"]) == 7


def test_isolated_sources_and_bad_addresses(public: tuple[Tidings, ServerThread]) -> None:
    _, server = public
    for path, status in (("/feeds/source/hidden.atom", 404), ("/feeds/source/none.json", 404),
                         ("/feeds/folder/Nope.atom", 404), ("/feeds/all.rss", 404),
                         ("/feeds/search/999.atom", 404), ("/feeds/search/x.atom", 400),
                         ("/feeds/all.atom?before=yesterday", 400),
                         ("/feeds/all.atom?limit=0", 400)):
        answer = httpx.get(server.url + path)
        assert answer.status_code == status, (path, answer.text)
        assert "Secret" not in answer.text


def test_paging_and_conditional_get(public: tuple[Tidings, ServerThread]) -> None:
    _, server = public
    seen: list[str] = []
    url: str | None = server.url + "/feeds/all.json?limit=3"
    while url:
        doc = httpx.get(url).json()
        seen += [i["title"] for i in doc["items"]]
        url = doc.get("next_url")
    assert len(seen) == len(set(seen)) == 10
    atom_page = feedparser.parse(httpx.get(server.url + "/feeds/all.atom?limit=4").content)
    nxt = next(link.href for link in atom_page.feed.links if link.rel == "next")
    assert len(feedparser.parse(httpx.get(nxt).content).entries) == 4
    first = httpx.get(server.url + "/feeds/all.atom")
    etag, modified = first.headers["etag"], first.headers["last-modified"]
    assert httpx.get(server.url + "/feeds/all.atom",
                     headers={"If-None-Match": etag}).status_code == 304
    assert httpx.get(server.url + "/feeds/all.atom",
                     headers={"If-Modified-Since": modified}).status_code == 304
    assert httpx.get(server.url + "/feeds/all.atom",
                     headers={"If-None-Match": '"other"'}).status_code == 200


def test_private_feeds_need_their_own_key(archive: tuple[Tidings, Settings]) -> None:
    tid, settings = archive
    server = serve_web(tid, settings)
    try:
        assert httpx.get(server.url + "/feeds/all.atom").status_code == 401
        token = new_token(tid, "admin")
        auth = {"Authorization": f"Bearer {token}"}
        page = httpx.get(server.url + "/feeds", headers=auth).text
        links = {part.split('"')[0] for part in page.split('href="')[1:]
                 if part.startswith("/feeds/") and "key=" in part}
        all_url = next(u for u in links if u.startswith("/feeds/all.atom"))
        beta_url = next(u for u in links if u.startswith("/feeds/source/beta.atom"))
        assert len(feedparser.parse(httpx.get(server.url + all_url).content).entries) == 10
        wrong = beta_url.replace("/source/beta.", "/source/alpha.")
        assert httpx.get(server.url + wrong).status_code == 401  # one key opens one feed
        assert httpx.get(server.url + all_url[:-4] + "0000").status_code == 401
        assert "hidden" not in page.lower() or "Secret" not in page
    finally:
        server.stop()


def test_saved_searches_are_listed_and_served(archive: tuple[Tidings, Settings]) -> None:
    tid, settings = archive
    saved = run(lambda: tid.compat.save_search("Rust news", "rust"))
    with pytest.raises(Exception, match="exists"):
        run(lambda: tid.compat.save_search("rust NEWS", "other"))
    with pytest.raises(Exception, match="date"):
        run(lambda: tid.compat.save_search("Bad", "date:2024-13-45"))
    server = serve_web(tid, replace(settings, public_reading=True))
    try:
        feed = parse(server, f"/feeds/search/{saved.id}.atom")
        titles = {e.title for e in feed.entries}
        assert titles == {f"Beta story {i} rust" for i in range(3)}  # not the isolated one
        doc = check_json_feed(server, f"/feeds/search/{saved.id}.json")
        assert len(doc["items"]) == 3 and doc["title"] == "tidings: Rust news"
    finally:
        server.stop()
