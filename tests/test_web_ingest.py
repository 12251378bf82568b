"""Push ingest (R-INGEST-1…4): tokens, rate, per-item answers, isolation, backfill, races."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from test_web_support import (
    ServerThread,
    add_source,
    new_token,
    open_archive,
    run,
    serve_web,
    store_password,
    wait_until,
)
from tidings.app import ItemQuery, SourceUpdate, Tidings
from tidings.model import SourceKind, Visibility
from tidings.settings import Settings
from tidings.web import auth

PATH = "/api/ingest/items"


@pytest.fixture
def served(settings: Settings) -> Iterator[tuple[Tidings, ServerThread, str]]:
    settings = replace(settings, public_reading=True, ingest_per_minute=1000)
    tid = open_archive(settings)
    store_password(tid, "a long password")
    token = new_token(tid, "script")
    server = serve_web(tid, settings)
    yield tid, server, token
    server.stop()
    tid.close()


def push(server: ServerThread, token: str | None, body: Any, **kw: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    return httpx.post(server.url + PATH, json=body, headers=headers, timeout=30, **kw)


def item(n: int, **extra: Any) -> dict[str, Any]:
    return {"title": f"Found {n}", "url": f"https://found.example/{n}", **extra}


def test_tokens_short_placeholder_unknown_or_missing_are_refused(
        served: tuple[Tidings, ServerThread, str]) -> None:
    tid, server, token = served
    placeholder = "x" * 24
    run(lambda: tid.tokens.add("p1", "placeholder", auth.digest(placeholder)))
    body = {"source_id": "script", "items": [item(1)]}
    for bad in (None, "short-token", placeholder, "changeme", "tdg_" + "a1b2" * 8):
        answer = push(server, bad, body)
        assert answer.status_code == 401, bad
        assert "detail" in answer.json()
    assert tid.items.query() == []
    assert push(server, token, body).status_code == 200


def test_each_item_is_answered_and_the_first_of_a_url_wins(
        served: tuple[Tidings, ServerThread, str]) -> None:
    tid, server, token = served
    items = [item(1, content_html="<p>one</p>"), {"url": "https://found.example/2"},
             {"title": "No link"}, item(1, title="Second spelling"),
             {"title": "Mail", "url": "mailto:a@b.example"},
             item(3, id="urn:three", author="Ann", tags=["x"], summary="s")]
    answer = push(server, token, {"source_id": "script", "items": items}).json()
    statuses = [(r["index"], r["status"], r["reason"]) for r in answer["items"]]
    assert statuses[0][:2] == (0, "stored") and statuses[5][:2] == (5, "stored")
    assert statuses[1] == (1, "skipped", "no title") and statuses[2] == (2, "skipped", "no url")
    assert statuses[3][1] == "skipped" and "first wins" in statuses[3][2]
    assert statuses[4][1] == "skipped" and "http" in statuses[4][2]
    assert (answer["stored"], answer["skipped"], answer["created_source"]) == (2, 4, True)
    stored = {i.title: i for i in tid.items.query()}
    assert set(stored) == {"Found 1", "Found 3"}
    assert stored["Found 1"].body == "<p>one</p>" and stored["Found 3"].author == "Ann"
    again = push(server, token, {"source_id": "script", "items": [item(1, content_html=
                                                                       "<p>one</p>")]}).json()
    assert again["items"][0]["status"] == "unchanged" and not again["created_source"]
    assert again["items"][0]["id"] == answer["items"][0]["id"]


def test_bad_requests_are_4xx_and_apply_nothing(
        served: tuple[Tidings, ServerThread, str]) -> None:
    tid, server, token = served
    add_source(tid, "collected", "Collected")
    headers = {"Authorization": f"Bearer {token}", "content-type": "application/json"}
    cases: list[tuple[Any, int]] = [
        ({"source_id": "script", "items": [item(n) for n in range(51)]}, 422),
        ({"source_id": "script", "items": [item(1, colour="red")]}, 422),
        ({"source_id": "script", "items": [item(1)], "extra": 1}, 422),
        ({"source_id": "Bad Id!", "items": [item(1)]}, 422),
        ({"source_id": "script", "items": []}, 422),
        ({"source_id": "script", "items": [item(1, published_at="yesterday")]}, 422),
        # one date rule at the edge: a time that has no UTC instant, or none stored
        ({"source_id": "script", "items": [item(1, published_at="0001-01-01T00:00:00+14:00")]},
         422),
        ({"source_id": "script", "items": [item(1, published_at="9999-12-31T23:59:59-14:00")]},
         422),
        ({"source_id": "collected", "items": [item(1)]}, 400),
    ]
    for body, status in cases:
        answer = push(server, token, body)
        assert answer.status_code == status, (body, answer.text)
        assert "detail" in answer.json()
    for raw in (b"{not json", b"[]", b'"text"', b"\xff\xfe"):
        answer = httpx.post(server.url + PATH, content=raw, headers=headers)
        assert answer.status_code == 422 and "detail" in answer.json()
    huge = b'{"source_id": "script", "items": [{"title": "' + b"a" * 3_000_000 + b'"}]}'
    answer = httpx.post(server.url + PATH, content=huge, headers=headers)
    assert answer.status_code == 413 and "detail" in answer.json()
    assert tid.items.query() == [] and [s.id for s in tid.sources.all()] == ["collected"]


def test_ten_requests_a_minute_per_address_then_429(settings: Settings) -> None:
    tid = open_archive(settings)
    token = new_token(tid, "script")
    server = serve_web(tid, settings)
    for n in range(10):
        assert push(server, token, {"source_id": "script", "items": [item(n)]}).is_success
    answer = push(server, token, {"source_id": "script", "items": [item(99)]})
    assert answer.status_code == 429
    assert 1 <= int(answer.headers["retry-after"]) <= 60 and "detail" in answer.json()
    server.stop()
    tid.close()


def test_pushed_to_unknown_source_stays_isolated_until_promoted(
        served: tuple[Tidings, ServerThread, str]) -> None:
    tid, server, token = served
    add_source(tid, "alpha", "Alpha")
    push(server, token, {"source_id": "secret-finds", "items": [item(7, title="Hidden gem")]})
    source = tid.sources.get("secret-finds")
    assert source.kind == SourceKind("external") and source.visibility is Visibility.ISOLATED
    with httpx.Client(base_url=server.url) as anon:  # public reading: no login
        for path in ("/", "/all", "/unread", "/source/secret-finds", "/search?q=gem",
                     "/api/v1/items", "/api/v1/sources", "/api/v1/search?q=gem"):
            assert "Hidden gem" not in anon.get(path).text, path
            assert "secret-finds" not in anon.get(path).text or path.startswith("/source/"), path
    run(lambda: tid.sources.update("secret-finds",
                                   SourceUpdate(visibility=Visibility.EDITORIAL)))
    wait_until(lambda: "Hidden gem" in httpx.get(server.url + "/api/v1/items").text, 10)
    assert "Hidden gem" in httpx.get(server.url + "/api/v1/items").text


def test_backfill_follows_the_timeline_rule(served: tuple[Tidings, ServerThread, str]) -> None:
    tid, server, token = served
    now = datetime.now(UTC)
    old = (now - timedelta(days=30)).isoformat()
    fresh = (now - timedelta(hours=1)).isoformat()
    future = (now + timedelta(days=3)).isoformat()
    items = [item(1, published_at=old, backfill=True), item(2, published_at=fresh,
                                                            backfill=True),
             item(3, backfill=True), item(4), item(5, published_at=old),
             item(6, published_at=future)]
    assert push(server, token, {"source_id": "history", "items": items}).json()["stored"] == 6
    by_title = {i.title: i for i in tid.items.query()}
    assert [by_title[f"Found {n}"].backfill for n in range(1, 7)] == [
        True, False, True, False, True, False]
    assert by_title["Found 6"].published_at is None  # an untrusted future date is dropped


def test_ten_concurrent_writers_with_overlapping_batches(
        served: tuple[Tidings, ServerThread, str]) -> None:
    tid, server, token = served

    def writer(w: int) -> list[dict[str, Any]]:
        batch = [item(n) for n in range(w * 10, w * 10 + 40)]  # each overlaps the next 3
        answer = push(server, token, {"source_id": "crowd", "items": batch})
        assert answer.status_code == 200, answer.text
        results: list[dict[str, Any]] = answer.json()["items"]
        return results

    with ThreadPoolExecutor(10) as pool:
        answers = list(pool.map(writer, range(10)))
    urls = [i.url for i in tid.items.query(ItemQuery(limit=1000))]
    assert len(urls) == len(set(urls)) == 130
    stored = [r for results in answers for r in results if r["status"] == "stored"]
    assert len(stored) == 130  # every URL stored exactly once, by whichever came first
    assert all(r["status"] in {"stored", "unchanged"} for results in answers for r in results)
