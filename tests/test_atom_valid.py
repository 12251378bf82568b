"""Atom that validates (issue 29 item 6): every Atom output passes our checker of the
rules the W3C validator enforced on them (``atom_rules``), feedparser reads each with
no complaint, JSON Feed stays schema-valid; entries carry their own time and an
author; weak ETags get 304, HEAD is answered, a configured WebSub hub is named."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta

import feedparser
import httpx
import jsonschema
import pytest
from lxml import etree

from atom_rules import atom_errors
from test_web_feeds_out import SCHEMA
from test_web_support import (
    NOW,
    ServerThread,
    Spec,
    add_items,
    add_source,
    new_token,
    open_archive,
    run,
    serve_web,
)
from tidings.app import SourceUpdate, Tidings
from tidings.settings import Settings

HUB = "https://hub.example/"
A = "{http://www.w3.org/2005/Atom}"


@pytest.fixture
def served(settings: Settings) -> Iterator[tuple[Tidings, ServerThread, str]]:
    tid = open_archive(settings)
    add_source(tid, "alpha", "Alpha")
    add_source(tid, "beta", "")
    run(lambda: tid.sources.update("alpha", SourceUpdate(folder="Tech")))
    add_items(tid, [Spec(f"Alpha {i}", source_id="alpha", age=timedelta(hours=i),
                         author="Ann" if i % 2 else "", summary="a < b" if i % 3 else "")
                    for i in range(5)])
    add_items(tid, [Spec(f"Beta {i}", source_id="beta", age=timedelta(days=i), body=None,
                         summary="plain") for i in range(3)])
    run(lambda: tid.compat.save_search("alphas", "alpha"))
    token = new_token(tid, "reader")
    server = serve_web(tid, replace(settings, public_reading=True, feeds_hub=HUB))
    yield tid, server, token
    server.stop()
    tid.close()


def _atoms(server: ServerThread, token: str) -> dict[str, bytes]:
    gr = {"Authorization": f"GoogleLogin auth={token}"}
    paths = {"/feeds/all.atom": {}, "/feeds/source/beta.atom": {},
             "/feeds/folder/Tech.atom": {}, "/feeds/search/1.atom": {},
             "/api/greader/reader/atom/user/-/state/com.google/reading-list": gr,
             "/api/greader/reader/atom/feed/alpha?n=2": gr}
    return {path: httpx.get(server.url + path, headers=headers).raise_for_status().content
            for path, headers in paths.items()}


def test_every_atom_output_keeps_the_rules(served: tuple[Tidings, ServerThread, str]) -> None:
    _, server, token = served
    atoms = _atoms(server, token)
    assert {path: atom_errors(body) for path, body in atoms.items()} == {
        path: [] for path in atoms}
    for body in atoms.values():
        assert not feedparser.parse(body).bozo
    jsonschema.validate(httpx.get(server.url + "/feeds/all.json").json(), SCHEMA)


def test_the_checker_finds_what_the_validator_found() -> None:
    old = (b'<feed xmlns="http://www.w3.org/2005/Atom" xmlns:tidings="urn:tidings">'
           b'<id>x</id><title>t</title><updated>2026-01-01T00:00:00Z</updated>'
           b'<link rel="self" href="https://h/x"/><entry><id>e</id><title>t</title>'
           b'<updated>2026-01-01T00:00:00Z</updated><source><id>s</id></source></entry></feed>')
    assert atom_errors(old) == [
        "xmlns:tidings 'urn:tidings' is not a valid URN",
        "entry 0: no author (nor one on the feed or the source)",
        "entry 0 source: no updated"]


def test_entries_carry_their_own_time_and_an_author(
        served: tuple[Tidings, ServerThread, str]) -> None:
    _, server, _ = served
    root = etree.fromstring(httpx.get(server.url + "/feeds/source/beta.atom").content)
    entries = root.findall(A + "entry")
    times = [e.findtext(A + "updated") for e in entries]
    expected = [(NOW - timedelta(days=i)).strftime("%Y-%m-%dT%H:%M:%SZ") for i in range(3)]
    assert times == expected  # published, not when the row was written
    assert [e.findtext(f"{A}author/{A}name") for e in entries] == ["Beta"] * 3  # the source
    assert root.findtext(A + "updated") >= times[0]
    assert entries[0].findtext(f"{A}source/{A}updated") == times[0]
    ann = etree.fromstring(httpx.get(server.url + "/feeds/source/alpha.atom").content)
    assert {e.findtext(f"{A}author/{A}name") for e in ann.findall(A + "entry")} == {
        "Ann", "Alpha"}


def test_weak_etags_head_and_the_hub(served: tuple[Tidings, ServerThread, str]) -> None:
    _, server, _ = served
    url = server.url + "/feeds/all.atom"
    first = httpx.get(url)
    etag = first.headers["etag"]
    assert httpx.get(url, headers={"If-None-Match": etag}).status_code == 304
    assert httpx.get(url, headers={"If-None-Match": f"W/{etag}"}).status_code == 304
    assert httpx.get(url, headers={"If-None-Match": 'W/"other"'}).status_code == 200
    head = httpx.head(url)
    assert head.status_code == 200 and head.content == b""
    assert head.headers["etag"] == etag and "atom" in head.headers["content-type"]
    assert httpx.head(server.url + "/feeds/source/nope.atom").status_code == 404
    hubs = etree.fromstring(first.content).findall(f"{A}link[@rel='hub']")
    assert [h.get("href") for h in hubs] == [HUB]
    assert f'<{HUB}>; rel="hub"' in first.headers["link"]
    assert httpx.get(server.url + "/feeds/all.json").json()["hubs"] == [
        {"type": "WebSub", "url": HUB}]
