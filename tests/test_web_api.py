"""The JSON API (R-API-1): shapes, keyset paging, read/star, search; and a fuzz run."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import httpx
import pytest

from test_web_support import (
    Spec,
    add_items,
    add_source,
    new_token,
    open_archive,
    serve_web,
)
from tidings.app import Tidings
from tidings.settings import Settings


@pytest.fixture
def api(settings: Settings) -> Iterator[tuple[Tidings, httpx.Client]]:
    tid = open_archive(settings)
    add_source(tid, "alpha", "Alpha")
    add_source(tid, "beta", "Beta")
    add_items(tid, [Spec(f"Story {i}", source_id="alpha" if i % 2 else "beta",
                         age=timedelta(minutes=i), author="Ann" if i < 3 else "")
                    for i in range(7)])
    add_items(tid, [Spec("过去的历史", backfill=True, age=timedelta(days=400))])
    token = new_token(tid, "tests")
    server = serve_web(tid, settings)
    with httpx.Client(base_url=server.url + "/api/v1",
                      headers={"Authorization": f"Bearer {token}"}) as client:
        yield tid, client
    server.stop()
    tid.close()


def test_items_page_through_with_cursors(api: tuple[Tidings, httpx.Client]) -> None:
    _, c = api
    first = c.get("/items", params={"limit": 3}).json()
    assert [i["title"] for i in first["items"]] == ["Story 0", "Story 1", "Story 2"]
    second = c.get("/items", params={"limit": 3, "before": first["next"]}).json()
    assert [i["title"] for i in second["items"]] == ["Story 3", "Story 4", "Story 5"]
    rest = c.get("/items", params={"limit": 3, "before": second["next"]}).json()
    assert [i["title"] for i in rest["items"]] == ["Story 6", "过去的历史"] and rest["next"] is None
    assert first["items"][0]["source_title"] == "Beta"


def test_views_and_filters(api: tuple[Tidings, httpx.Client]) -> None:
    _, c = api
    today = c.get("/items", params={"view": "today"}).json()["items"]
    assert "过去的历史" not in [i["title"] for i in today] and len(today) == 7
    assert len(c.get("/items", params={"source": "alpha"}).json()["items"]) == 4  # + history
    assert len(c.get("/items", params={"author": "Ann"}).json()["items"]) == 3
    assert c.get("/items", params={"view": "sideways"}).status_code == 422
    assert c.get("/items", params={"before": "yesterday"}).status_code == 422
    assert c.get("/items", params={"limit": 0}).status_code == 422


def test_read_and_star_state(api: tuple[Tidings, httpx.Client]) -> None:
    tid, c = api
    ids = [i["id"] for i in c.get("/items").json()["items"]]
    one = c.patch(f"/items/{ids[0]}", json={"read": True, "starred": True}).json()
    assert one["read"] and one["starred"]
    assert c.post("/items/state", json={"ids": ids[1:3], "read": True}).json() == {"updated": 2}
    unread = c.get("/items", params={"view": "unread"}).json()["items"]
    assert {i["id"] for i in unread} == set(ids[3:])
    starred = c.get("/items", params={"view": "starred"}).json()["items"]
    assert [i["id"] for i in starred] == [ids[0]]
    assert c.patch("/items/99999", json={"read": True}).status_code == 404
    assert c.post("/items/state", json={"ids": []}).status_code == 422
    assert c.post("/items/state", content=b"not json",
                  headers={"content-type": "application/json"}).status_code == 422
    assert tid.items.get(ids[1]).read


def test_item_sources_stats_and_search(api: tuple[Tidings, httpx.Client]) -> None:
    _, c = api
    item = c.get("/items").json()["items"][0]
    full = c.get(f"/items/{item['id']}").json()
    assert full["body"] == "<p>Body text.</p>" and full["title"] == item["title"]
    assert c.get("/items/0").status_code == 404
    assert [s["id"] for s in c.get("/sources").json()] == ["alpha", "beta"]
    assert c.get("/sources/beta").json()["title"] == "Beta"
    assert c.get("/sources/none").status_code == 404
    assert c.get("/stats").json()["items"] == 8
    hits = c.get("/search", params={"q": "历史"}).json()["hits"]
    assert [h["item"]["title"] for h in hits] == ["过去的历史"]
    assert c.get("/search", params={"q": '"unclosed'}).status_code in {200, 400}
    assert c.get("/search", params={"q": "date:2024-13-45"}).status_code == 400
    assert c.get("/search").status_code == 422


def test_openapi_document_lists_the_api(api: tuple[Tidings, httpx.Client]) -> None:
    _, c = api
    doc = c.get("/api/openapi.json".join(str(c.base_url).rsplit("/api/v1/", 1))).json()
    paths = set(doc["paths"])
    assert {"/api/v1/items", "/api/v1/items/{item_id}", "/api/v1/items/state",
            "/api/v1/search", "/api/v1/sources", "/api/v1/stats"} <= paths
    assert not any(p.startswith(("/item/", "/sources")) for p in paths)  # pages stay out


# The schemathesis run over the whole API is tests/test_attack_schema.py.


# Adding sources and changing configs (issue 17): the same per-kind schema as the CLI
# and the web form, with the unknown key named (R-SCHED-2).


def test_a_source_is_added_with_its_config_checked(api: tuple[Tidings, httpx.Client]) -> None:
    tid, c = api
    body = {"kind": "json_list", "url": "https://hn.algolia.com/api/v1/search?tags=story",
            "config": {"items_path": "hits", "url_template": "https://x/{objectID}"}}
    made = c.post("/sources", json=body)
    assert made.status_code == 201, made.text
    sid = made.json()["id"]
    assert tid.sources.get(sid).config["items_path"] == "hits"
    typo = c.post("/sources", json={**body, "url": "https://other.example/api",
                                    "config": {"itemspath": "hits", "url": "u"}})
    assert typo.status_code == 400
    assert "did you mean 'items_path'?" in typo.json()["detail"]
    odd = c.post("/sources", json={**body, "kind": "gopher", "url": "https://g.example/"})
    assert odd.status_code == 400
    assert odd.json()["detail"].startswith("unknown source kind 'gopher' (known: rss, ")
    assert len(tid.sources.all()) == 3  # alpha, beta and the new one


def test_a_config_change_is_checked_for_the_source_kind(
    api: tuple[Tidings, httpx.Client],
) -> None:
    tid, c = api
    sid = c.post("/sources", json={"kind": "web_list", "url": "https://lab.example/news",
                                   "config": {"item": "article"}}).json()["id"]
    bad = c.put(f"/sources/{sid}/config", json={"config": {"item": "article[[", "date": "t"}})
    assert bad.status_code == 400 and "config key 'item': invalid CSS selector" in (
        bad.json()["detail"])
    good = c.put(f"/sources/{sid}/config", json={"config": {"mode": "markdown"}})
    assert good.status_code == 200
    assert tid.sources.get(sid).cost_class.value == "paid_render"
    assert c.put("/sources/nope/config", json={"config": {}}).status_code == 404
