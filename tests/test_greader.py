"""The Google Reader API (R-API-3) driven as Reeder / NetNewsWire drive it: log in, list
subscriptions and folders, count unread, page streams with continuations, fetch items
by id, mark read and starred; the Atom stream newsboat reads; bad input is a 4xx."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import feedparser
import httpx
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
from tidings.app import ItemQuery, SourceUpdate, Tidings
from tidings.model import Visibility
from tidings.settings import Settings

BASE = "/api/greader"
API = BASE + "/reader/api/0"
READ = "user/-/state/com.google/read"
STARRED = "user/-/state/com.google/starred"
READING = "user/-/state/com.google/reading-list"


class Client:
    """What a Google Reader client does: ClientLogin, then GoogleLogin auth on every call."""

    def __init__(self, server: ServerThread, password: str) -> None:
        self.http = httpx.Client(base_url=server.url, timeout=30)
        answer = self.http.post(BASE + "/accounts/ClientLogin",
                                data={"Email": "admin", "Passwd": password})
        assert answer.status_code == 200, answer.text
        auth = dict(line.split("=", 1) for line in answer.text.splitlines() if "=" in line)
        self.http.headers["Authorization"] = f"GoogleLogin auth={auth['Auth']}"
        self.token = self.http.get(API + "/token").text

    def get(self, path: str, **params: Any) -> Any:
        answer = self.http.get(API + path, params={"output": "json", **params})
        assert answer.status_code == 200, (path, answer.text)
        return answer.json()

    def post(self, path: str, data: Any) -> httpx.Response:
        pairs = list(data.items()) if isinstance(data, dict) else list(data)
        form: dict[str, list[str]] = {}
        for key, value in [*pairs, ("T", self.token)]:
            form.setdefault(key, []).append(str(value))
        return self.http.post(API + path, data=form)


@pytest.fixture
def served(settings: Settings) -> Iterator[tuple[Tidings, ServerThread, Client]]:
    tid = open_archive(settings)
    add_source(tid, "alpha", "Alpha")
    add_source(tid, "beta", "Beta")
    add_source(tid, "hidden", "Hidden", visibility=Visibility.ISOLATED)
    run(lambda: tid.sources.update("alpha", SourceUpdate(folder="Tech")))
    add_items(tid, [Spec(f"Alpha {i}", source_id="alpha", age=timedelta(minutes=i))
                    for i in range(6)])
    add_items(tid, [Spec(f"Beta {i}", source_id="beta", age=timedelta(minutes=10 + i))
                    for i in range(4)])
    add_items(tid, [Spec("Hidden thing", source_id="hidden")])
    store_password(tid, "a long password")
    token = new_token(tid, "reeder")
    server = serve_web(tid, settings)
    client = Client(server, token)
    yield tid, server, client
    client.http.close()
    server.stop()
    tid.close()


def ids_of(doc: dict[str, Any]) -> list[str]:
    return [i["id"] for i in doc["items"]]


def test_login_needs_an_api_token(served: tuple[Tidings, ServerThread, Client]) -> None:
    _, server, _ = served
    for data in ({"Email": "admin", "Passwd": "a long password"},  # never the admin password
                 {"Email": "admin", "Passwd": "tdg_nothing"}, {"Email": "root", "Passwd": "x"},
                 {}):
        assert httpx.post(server.url + BASE + "/accounts/ClientLogin", data=data
                          ).status_code == 401
    for header in ({}, {"Authorization": "GoogleLogin auth=nope"}, {"Authorization": "x"}):
        answer = httpx.get(server.url + API + "/subscription/list", headers=header)
        assert answer.status_code == 401 and "detail" in answer.json()


def test_subscriptions_folders_and_unread_counts(
        served: tuple[Tidings, ServerThread, Client]) -> None:
    _, _, c = served
    assert c.get("/user-info")["userName"] == "admin"
    subs = {s["id"]: s for s in c.get("/subscription/list")["subscriptions"]}
    assert set(subs) == {"feed/alpha", "feed/beta"}
    assert subs["feed/alpha"]["categories"] == [{"id": "user/-/label/Tech", "label": "Tech"}]
    tags = [t["id"] for t in c.get("/tag/list")["tags"]]
    assert STARRED in tags and "user/-/label/Tech" in tags
    counts = {u["id"]: u["count"] for u in c.get("/unread-count")["unreadcounts"]}
    assert counts == {"feed/alpha": 6, "feed/beta": 4, "user/-/label/Tech": 6, READING: 10}


def test_streams_filters_and_orders(served: tuple[Tidings, ServerThread, Client]) -> None:
    _, _, c = served
    everything = c.get("/stream/contents/" + READING, n=50)
    titles = [i["title"] for i in everything["items"]]
    assert titles == [f"Alpha {i}" for i in range(6)] + [f"Beta {i}" for i in range(4)]
    first = everything["items"][0]
    assert first["id"].startswith("tag:google.com,2005:reader/item/")
    assert first["origin"]["streamId"] == "feed/alpha" and "user/-/label/Tech" in first[
        "categories"]
    assert first["canonical"][0]["href"].startswith("https://alpha.example/")
    assert [i["title"] for i in c.get("/stream/contents/feed/beta", r="o")["items"]] == [
        f"Beta {i}" for i in reversed(range(4))]
    assert len(c.get("/stream/contents", s="user/-/label/Tech")["items"]) == 6
    newest = int(first["timestampUsec"]) // 1_000_000
    assert len(c.get("/stream/contents/" + READING, ot=newest - 150)["items"]) == 3
    assert len(c.get("/stream/contents/" + READING, nt=newest - 150)["items"]) == 7
    # seconds with a fraction, as NetNewsWire sends them
    assert len(c.get("/stream/contents/" + READING, ot=f"{newest - 150}.123")["items"]) == 3


def test_edit_tag_mark_all_and_item_contents(
        served: tuple[Tidings, ServerThread, Client]) -> None:
    tid, _, c = served
    refs = c.get("/stream/items/ids", s=READING, n=100)["itemRefs"]
    short = [r["id"] for r in refs]
    long_ids = ids_of(c.post("/stream/items/contents", [("i", s) for s in short[:2]]).json())
    assert long_ids == [f"tag:google.com,2005:reader/item/{int(s):016x}" for s in short[:2]]
    mixed = c.post("/stream/items/contents", [("i", long_ids[0]), ("i", short[1])]).json()
    assert ids_of(mixed) == long_ids
    assert c.post("/edit-tag", [("i", long_ids[0]), ("i", short[1]), ("a", READ)]).text == "OK"
    assert c.post("/edit-tag", {"i": short[2], "a": STARRED}).text == "OK"
    unread = c.get("/stream/items/ids", s=READING, xt=READ, n=100)["itemRefs"]
    assert len(unread) == 8
    assert [r["id"] for r in c.get("/stream/items/ids", s=STARRED)["itemRefs"]] == [short[2]]
    assert c.post("/edit-tag", {"i": long_ids[0], "a": "user/-/state/com.google/kept-unread",
                                "r": READ}).text == "OK"
    assert not tid.items.get(int(short[0])).read and tid.items.get(int(short[1])).read
    assert c.post("/mark-all-as-read", {"s": "feed/beta"}).text == "OK"
    assert len(c.get("/stream/items/ids", s="feed/beta", xt=READ)["itemRefs"]) == 0
    oldest_alpha = c.get("/stream/contents/feed/alpha", r="o", n=1)["items"][0]
    ts = int(oldest_alpha["crawlTimeMsec"]) * 1000  # when it arrived: included
    # a fraction of a microsecond is taken (and dropped)
    assert c.post("/mark-all-as-read", {"s": "user/-/label/Tech", "ts": f"{ts}.5"}).text == "OK"
    # Alpha 1 was read already; the oldest (Alpha 5) is the one that had arrived by ts
    assert len(c.get("/stream/items/ids", s="feed/alpha", xt=READ)["itemRefs"]) == 4


def test_bad_input_is_4xx_and_changes_nothing(
        served: tuple[Tidings, ServerThread, Client]) -> None:
    tid, _, c = served
    hidden_id = tid.items.query(ItemQuery(source_id="hidden"))[0].id
    some = c.get("/stream/items/ids", s=READING)["itemRefs"][0]["id"]
    for data, status in (([("i", some), ("i", "99999999"), ("a", READ)], 404),
                         ([("i", str(hidden_id)), ("a", READ)], 404),
                         ([("i", "tag:google.com,2005:reader/item/zz"), ("a", READ)], 400),
                         ([("a", READ)], 400)):
        answer = c.post("/edit-tag", data)
        assert answer.status_code == status, (data, answer.text)
        assert "detail" in answer.json()
    assert not tid.items.get(int(some)).read and not tid.items.get(hidden_id).read
    wrong_t = c.http.post(API + "/edit-tag", data={"i": some, "a": READ, "T": "forged"})
    assert wrong_t.status_code == 401 and not tid.items.get(int(some)).read
    for path, params, status in (
            ("/stream/contents/feed/nope", {}, 404),
            ("/stream/contents/feed/hidden", {}, 404),
            ("/stream/contents/" + READING, {"c": "garbage"}, 400),
            ("/stream/contents/" + READING, {"c": "o1.2"}, 400),  # the other order's
            ("/stream/contents/" + READING, {"n": 0}, 400),
            ("/stream/contents/" + READING, {"ot": "soon"}, 400),
            ("/stream/items/ids", {"s": "user/-/label/Nope"}, 404)):
        answer = c.http.get(API + path, params=params)
        assert answer.status_code == status, (path, params, answer.text)
        assert isinstance(answer.json()["detail"], str)  # one line, never a list
    assert c.post("/mark-all-as-read", {"s": READING, "ts": "yesterday"}).status_code == 400
    assert c.post("/mark-all-as-read", {}).status_code == 400
    assert all(not i.read for i in tid.items.query())
    assert "Hidden thing" not in c.http.get(API + "/stream/contents/" + READING).text


def test_subscription_edit_and_quickadd(served: tuple[Tidings, ServerThread, Client]) -> None:
    tid, _, c = served
    new = "https://gamma.example/feed.xml"
    assert c.post("/subscription/edit", {"ac": "subscribe", "s": f"feed/{new}", "t": "Gamma",
                                         "a": "user/-/label/News"}).text == "OK"
    gamma = next(s for s in tid.sources.all() if s.url == new)
    assert (gamma.title, gamma.folder) == ("Gamma", "News")
    assert c.post("/subscription/edit", {"ac": "edit", "s": f"feed/{gamma.id}",
                                         "t": "Gamma!", "r": "user/-/label/News"}).text == "OK"
    assert (tid.sources.get(gamma.id).title, tid.sources.get(gamma.id).folder) == ("Gamma!", None)
    assert c.post("/subscription/edit", {"ac": "unsubscribe", "s": f"feed/{new}"}).text == "OK"
    assert new not in {s.url for s in tid.sources.all()}
    assert c.post("/subscription/edit", {"ac": "subscribe", "s": "feed/not a url"}
                  ).status_code == 400
    for refused in ("http://10.20.30.40/feed.xml", "http://localhost:9/feed.xml"):
        answer = c.post("/subscription/edit", {"ac": "subscribe", "s": f"feed/{refused}"})
        assert answer.status_code == 400 and "the guard refuses" in answer.text, answer.text
        assert refused not in {s.url for s in tid.sources.all()}, "said at once, nothing stored"
    assert c.post("/subscription/edit", {"ac": "unsubscribe", "s": "feed/hidden"}
                  ).status_code == 404
    assert c.post("/subscription/quickadd", {"quickadd": "not a url"}).status_code == 400
    assert tid.sources.get("hidden").visibility is Visibility.ISOLATED


def test_atom_stream_in_the_dialect_newsboat_reads(
        served: tuple[Tidings, ServerThread, Client]) -> None:
    tid, _, c = served
    first = tid.items.query(ItemQuery(source_id="alpha"))[0]
    run(lambda: tid.items.mark_read([first.id]))
    answer = c.http.get(BASE + "/reader/atom/feed%2Falpha", params={"n": 4})
    assert answer.status_code == 200
    feed = feedparser.parse(answer.content)
    assert not feed.bozo and feed.feed.title == "Alpha" and len(feed.entries) == 4
    entry = feed.entries[0]
    assert entry.id == f"tag:google.com,2005:reader/item/{first.id:016x}"
    labels = {t.label for t in entry.tags if t.scheme == "http://www.google.com/reader/"}
    assert "read" in labels and "fresh" not in labels
    assert "fresh" in {t.label for t in feed.entries[1].tags}
    assert b"<gr:continuation>" in answer.content
    more = answer.text.split("<gr:continuation>")[1].split("<")[0]
    rest = feedparser.parse(c.http.get(BASE + "/reader/atom/feed%2Falpha",
                                       params={"n": 4, "c": more}).content)
    assert len(rest.entries) == 2


def test_continuation_paging_over_5000_items(settings: Settings) -> None:
    tid = open_archive(settings)
    add_source(tid, "bulk", "Bulk")
    add_items(tid, [Spec(f"Bulk {i}", source_id="bulk", age=timedelta(seconds=i // 3))
                    for i in range(5000)])  # many share a time: the id breaks ties
    server = serve_web(tid, settings)
    client = Client(server, new_token(tid, "netnewswire"))
    try:
        for order in (None, "o"):
            seen: list[str] = []
            cont: str | None = None
            while True:
                params: dict[str, Any] = {"s": READING, "n": 1000}
                if order:
                    params["r"] = order
                if cont:
                    params["c"] = cont
                page = client.get("/stream/items/ids", **params)
                seen += [r["id"] for r in page["itemRefs"]]
                if len(seen) == 1000:  # items arriving meanwhile never shift the pages
                    add_items(tid, [Spec("Late arrival", source_id="bulk",
                                         age=timedelta(seconds=-5))])
                cont = page.get("continuation")
                if not cont:
                    break
            assert len(seen) == len(set(seen)) >= 5000, order
        contents: list[str] = []
        cont = None
        while True:
            page = client.get("/stream/contents/feed/bulk", n=700, **({"c": cont} if cont
                                                                       else {}))
            contents += ids_of(page)
            cont = page.get("continuation")
            if not cont:
                break
        assert len(contents) == len(set(contents)) == 5002
    finally:
        client.http.close()
        server.stop()
        tid.close()
