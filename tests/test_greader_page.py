"""A Google Reader stream page, field by field, against the stored items: the page is
built from slim rows with the text quoted by SQLite (not from ``Item`` objects), so
every field is checked against what the stored item says, for text that JSON must
escape (quotes, backslashes, control characters, CJK, emoji), an item with no body
(its summary is served), folders, read and starred state."""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest

from test_web_support import (
    Spec,
    add_items,
    add_source,
    new_token,
    open_archive,
    run,
    serve_web,
)
from tidings.app import SourceUpdate, Tidings
from tidings.app.paging import micros
from tidings.model import Item
from tidings.settings import Settings
from tidings.web.textout import title_text

API = "/api/greader/reader/api/0"
READING = "user/-/state/com.google/reading-list"
TRICKY = 'He said "hi" \\ back\\slash\ttab\u0001ctl 中文 🎉 \u2028 </b>'


@pytest.fixture
def served(settings: Settings) -> Iterator[tuple[Tidings, httpx.Client, list[int]]]:
    tid = open_archive(settings)
    add_source(tid, "alpha", "Alpha \"quoted\"")
    add_source(tid, "beta", "Beta")
    run(lambda: tid.sources.update("alpha", SourceUpdate(folder="Tech 技术")))
    ids = add_items(tid, [
        Spec(TRICKY, source_id="alpha", age=timedelta(minutes=1), body=f"<p>{TRICKY}</p>",
             author="Ann \"A\" 安"),
        Spec("No body", source_id="beta", age=timedelta(minutes=2), body=None,
             summary=TRICKY),
        Spec("Neither", source_id="beta", age=timedelta(minutes=3), body=None),
        Spec("Plain", source_id="alpha", age=timedelta(minutes=4)),
    ])
    run(lambda: tid.items.star([ids[0]], True))
    run(lambda: tid.items.mark_read([ids[1]], True))
    server = serve_web(tid, settings)
    http = httpx.Client(base_url=server.url, timeout=30, headers={
        "Authorization": f"GoogleLogin auth={new_token(tid, 'page')}"})
    yield tid, http, ids
    http.close()
    server.stop()
    tid.close()


def expected(item: Item, folder: str | None, base: str) -> dict[str, Any]:
    """The item as the Google Reader dialect spells it, from the stored item."""
    sort = item.published_at or item.discovered_at
    links = [{"href": item.url, "type": "text/html"}] if item.url else []
    categories = [READING, *([f"user/-/label/{folder}"] if folder else []),
                  "user/-/state/com.google/" + ("read" if item.read else "fresh"),
                  *(["user/-/state/com.google/starred"] if item.starred else [])]
    return {
        "id": f"tag:google.com,2005:reader/item/{item.id:016x}",
        "crawlTimeMsec": str(micros(item.discovered_at) // 1000),
        "timestampUsec": str(micros(sort)), "published": int(sort.timestamp()),
        "updated": int(item.updated_at.timestamp()), "title": title_text(item.title),
        "canonical": links, "alternate": links, "author": title_text(item.author),
        "categories": categories,
        "origin": {"streamId": f"feed/{item.source_id}", "title": item.source_title,
                   "htmlUrl": f"{base}/source/{item.source_id}"},
        "summary": {"direction": "ltr", "content": item.body or html.escape(item.summary)},
    }


def test_stream_page_matches_the_stored_items(
        served: tuple[Tidings, httpx.Client, list[int]]) -> None:
    tid, http, ids = served
    answer = http.get(f"{API}/stream/contents/{READING}", params={"n": 3})
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
    page = json.loads(answer.content)  # strict: the embedded text must be valid JSON
    base = str(http.base_url).rstrip("/")
    folders = {"alpha": "Tech 技术", "beta": None}
    items = [tid.items.get(i) for i in ids]
    assert page["items"] == [expected(i, folders[i.source_id], base) for i in items[:3]]
    body = page["items"][0]["summary"]["content"]
    assert body == items[0].body and all(part in body for part in ('"hi"', "\\", "中文 🎉"))
    # no body: the summary, a plain text, as the HTML that shows it
    assert page["items"][1]["summary"]["content"] == TRICKY.replace('"', "&quot;").replace(
        "</b>", "&lt;/b&gt;")
    assert page["items"][0]["title"] == TRICKY.replace("</b>", "\uff1c/b\uff1e")
    assert page["items"][2]["summary"]["content"] == ""
    assert page["updated"] == max(int(i.updated_at.timestamp()) for i in items[:3])
    assert page["continuation"] == f"n{page['items'][2]['timestampUsec']}.{ids[2]}"
    rest = http.get(f"{API}/stream/contents/{READING}",
                    params={"n": 3, "c": page["continuation"]}).json()
    assert rest["items"] == [expected(items[3], "Tech 技术", base)]
    assert "continuation" not in rest


def test_items_by_id_keep_the_order_asked(
        served: tuple[Tidings, httpx.Client, list[int]]) -> None:
    tid, http, ids = served
    answer = http.post(f"{API}/stream/items/contents",
                       data={"i": [str(ids[3]), str(ids[0]), str(ids[1])]})
    base = str(http.base_url).rstrip("/")
    folders = {"alpha": "Tech 技术", "beta": None}
    assert json.loads(answer.content)["items"] == [
        expected(tid.items.get(i), folders[tid.items.get(i).source_id], base)
        for i in (ids[3], ids[0], ids[1])]
