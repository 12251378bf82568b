"""The Fever API (R-API-3) driven as Reeder and FeedMe drive it: md5 key, groups, feeds,
item pages by since_id / max_id / with_ids, unread and saved ids, marks with before."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest

from test_web_support import (
    ServerThread,
    Spec,
    add_items,
    add_source,
    open_archive,
    run,
    serve_web,
    store_password,
)
from tidings.app import ItemQuery, SourceUpdate, Tidings
from tidings.model import Visibility
from tidings.settings import Settings
from tidings.web import auth


class Fever:
    """A Fever client: every call a POST of api_key to /api/fever?api&…"""

    def __init__(self, server: ServerThread, password: str) -> None:
        self.url = server.url + "/api/fever"
        self.key = hashlib.md5(f"admin:{password}".encode()).hexdigest()

    def call(self, query: str, status: int = 200, **form: Any) -> dict[str, Any]:
        answer = httpx.post(f"{self.url}?api&{query}", data={"api_key": self.key, **form})
        assert answer.status_code == status, (query, answer.text)
        body: dict[str, Any] = answer.json()
        assert body["api_version"] == 3
        return body


@pytest.fixture
def served(settings: Settings) -> Iterator[tuple[Tidings, Fever, ServerThread]]:
    tid = open_archive(settings)
    add_source(tid, "alpha", "Alpha")
    add_source(tid, "beta", "Beta")
    add_source(tid, "hidden", "Hidden", visibility=Visibility.ISOLATED)
    run(lambda: tid.sources.update("alpha", SourceUpdate(folder="Tech")))
    add_items(tid, [Spec(f"Alpha {i}", source_id="alpha", age=timedelta(hours=i))
                    for i in range(60)])
    add_items(tid, [Spec(f"Beta {i}", source_id="beta", age=timedelta(hours=i))
                    for i in range(5)])
    add_items(tid, [Spec("Hidden thing", source_id="hidden")])
    store_password(tid, "a long password")
    token_id, value, digest = auth.new_token()  # as the settings page makes one
    run(lambda: tid.tokens.add(token_id, "reeder", digest))
    run(lambda: tid.compat.remember_fever_key(token_id, value))
    server = serve_web(tid, settings)
    yield tid, Fever(server, value), server
    server.stop()
    tid.close()


def test_auth_by_md5_key_only(served: tuple[Tidings, Fever, ServerThread]) -> None:
    tid, fever, server = served
    assert fever.call("")["auth"] == 1
    wrong = hashlib.md5(b"admin:a long password").hexdigest()
    for data in ({"api_key": wrong}, {}, {"api_key": "x" * 500}):
        answer = httpx.post(server.url + "/api/fever?api", data=data)
        # as Fever and FreshRSS: 200, and the flag says no
        assert answer.status_code == 200 and answer.json() == {"api_version": 3, "auth": 0}
    token = tid.tokens.all()[0]
    run(lambda: tid.tokens.revoke(token.id))
    assert httpx.post(server.url + "/api/fever?api", data={"api_key": fever.key}
                      ).json()["auth"] == 0


def test_groups_feeds_and_items(served: tuple[Tidings, Fever, ServerThread]) -> None:
    _, fever, _ = served
    body = fever.call("groups&feeds")
    feeds = {f["title"]: f for f in body["feeds"]}
    assert set(feeds) == {"Alpha", "Beta"}
    (group,) = body["groups"]
    assert group["title"] == "Tech"
    assert body["feeds_groups"] == [{"group_id": group["id"],
                                     "feed_ids": str(feeds["Alpha"]["id"])}]
    seen: list[int] = []
    since = 0
    while True:
        page = fever.call(f"items&since_id={since}")["items"]
        if not page:
            break
        seen += [i["id"] for i in page]
        since = max(i["id"] for i in page)
    assert len(seen) == len(set(seen)) == 65  # not the isolated source's item
    assert fever.call("items")["total_items"] == 65
    back: list[int] = []
    top = max(seen) + 1
    while page := fever.call(f"items&max_id={top}")["items"]:
        back += [i["id"] for i in page]
        top = min(i["id"] for i in page)
    assert sorted(back) == sorted(seen)
    picked = fever.call("items", with_ids=f"{seen[0]},{seen[3]}")["items"]
    assert [i["id"] for i in picked] == sorted([seen[0], seen[3]])
    item = picked[0]
    assert item["html"] == "<p>Body text.</p>" and item["is_read"] == 0
    assert item["feed_id"] in {f["id"] for f in feeds.values()}


def test_marks_and_id_lists(served: tuple[Tidings, Fever, ServerThread]) -> None:
    tid, fever, _ = served
    unread = [int(i) for i in fever.call("unread_item_ids")["unread_item_ids"].split(",")]
    assert len(unread) == 65
    body = fever.call("", mark="item", **{"as": "read"}, id=str(unread[0]))
    assert str(unread[0]) not in body["unread_item_ids"].split(",")
    fever.call("", mark="item", **{"as": "saved"}, id=str(unread[1]))
    assert fever.call("saved_item_ids")["saved_item_ids"] == str(unread[1])
    fever.call("", mark="item", **{"as": "unsaved"}, id=str(unread[1]))
    assert fever.call("saved_item_ids")["saved_item_ids"] == ""
    feeds = {f["title"]: f["id"] for f in fever.call("feeds")["feeds"]}
    beta = tid.items.query(ItemQuery(source_id="beta"))
    cutoff = int(beta[2].discovered_at.timestamp())  # what had arrived by then
    fever.call("", mark="feed", **{"as": "read"}, id=str(feeds["Beta"]), before=str(cutoff))
    assert [i.read for i in tid.items.query(ItemQuery(source_id="beta"))] == [
        False, False, True, True, True]
    group = fever.call("groups")["groups"][0]["id"]
    fever.call("", mark="group", **{"as": "read"}, id=str(group), before="99999999999")
    assert all(i.read for i in tid.items.query(ItemQuery(source_id="alpha", limit=100)))
    fever.call("", mark="group", **{"as": "read"}, id="0", before="99999999999")
    assert not any(not i.read for i in tid.items.query(ItemQuery(source_id="beta")))
    assert not tid.items.query(ItemQuery(source_id="hidden"))[0].read  # isolated: untouched


def test_bad_arguments_are_400_unknown_ids_ignored_and_nothing_changes(
        served: tuple[Tidings, Fever, ServerThread]) -> None:
    tid, fever, server = served
    hidden = tid.items.query(ItemQuery(source_id="hidden"))[0].id
    cases: list[tuple[str, dict[str, str], int]] = [
        ("items&since_id=abc", {}, 400), ("items&max_id=-1", {}, 400),
        ("items", {"with_ids": "1,two"}, 400),
        ("", {"mark": "item", "as": "read", "id": "999999"}, 200),  # unknown: ignored
        ("", {"mark": "item", "as": "read", "id": str(hidden)}, 200),
        ("", {"mark": "item", "as": "sideways", "id": "1"}, 400),
        ("", {"mark": "feed", "as": "read", "id": "12345"}, 200),
        ("", {"mark": "feed", "as": "saved", "id": "1"}, 400),
        ("", {"mark": "group", "as": "read", "id": "77"}, 200),
        ("", {"mark": "item", "as": "read"}, 400),
        ("", {"mark": "feed", "as": "read", "id": "1", "before": "soon"}, 400),
    ]
    for query, form, status in cases:
        body = fever.call(query, status, **form)
        assert ("detail" in body) == (status != 200), (query, form)
    assert not any(i.read for i in tid.items.query(ItemQuery(limit=100)))
    answer = httpx.post(server.url + "/api/fever", data={"api_key": fever.key})
    assert answer.status_code == 400


def test_filters_long_id_lists_and_marks_by_arrival(
        served: tuple[Tidings, Fever, ServerThread]) -> None:
    """FreshRSS's ``feed_ids``/``group_ids`` narrow ``items``; ``with_ids`` past Fever's
    50 are all served; ``before`` is about arrival: items that came after the client
    looked, dated earlier, stay unread."""
    tid, fever, _ = served
    feeds = {f["title"]: f["id"] for f in fever.call("feeds")["feeds"]}
    group = fever.call("groups")["groups"][0]["id"]
    beta = fever.call("items", feed_ids=str(feeds["Beta"]))["items"]
    assert {i["feed_id"] for i in beta} == {feeds["Beta"]} and len(beta) == 5
    tech = fever.call("items", group_ids=str(group))["items"]
    assert {i["feed_id"] for i in tech} == {feeds["Alpha"]} and len(tech) == 50
    assert fever.call("items", feed_ids="424242")["items"] == []
    ids = [int(i) for i in fever.call("unread_item_ids")["unread_item_ids"].split(",")]
    assert len(fever.call("items", with_ids=",".join(map(str, ids[:60])))["items"]) == 60
    looked = int(max(i.discovered_at for i in tid.items.query(ItemQuery(limit=100))).timestamp())
    late = add_items(tid, [Spec(f"Late {n}", source_id="beta", age=timedelta(days=3),
                                arrived_age=timedelta(minutes=-10 - n)) for n in range(4)])
    fever.call("", mark="feed", **{"as": "read"}, id=str(feeds["Beta"]), before=str(looked))
    assert [tid.items.get(i).read for i in late] == [False] * 4
    assert all(i.read for i in tid.items.query(ItemQuery(source_id="beta")) if i.id not in late)
