"""Adding sources and changing configs through the JSON API: the same per-kind schema
as the CLI and the web form, with the unknown key named (R-SCHED-2, issue 17)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from test_web_support import new_token, open_archive, serve_web
from tidings.app import Tidings
from tidings.settings import Settings


@pytest.fixture
def api(settings: Settings) -> Iterator[tuple[Tidings, httpx.Client]]:
    tid = open_archive(settings)
    token = new_token(tid, "tests")
    server = serve_web(tid, settings)
    with httpx.Client(base_url=server.url + "/api/v1",
                      headers={"Authorization": f"Bearer {token}"}) as client:
        yield tid, client
    server.stop()
    tid.close()


def test_a_source_is_added_with_its_config_checked(api: tuple[Tidings, httpx.Client]) -> None:
    tid, c = api
    body = {"kind": "json_list", "url": "https://hn.algolia.com/api/v1/search?tags=story",
            "config": {"items_path": "hits", "url_template": "https://x/{objectID}"}}
    made = c.post("/sources", json=body)
    assert made.status_code == 201, made.text
    sid = made.json()["id"]
    assert tid.source(sid).config["items_path"] == "hits"
    typo = c.post("/sources", json={**body, "url": "https://other.example/api",
                                    "config": {"itemspath": "hits", "url": "u"}})
    assert typo.status_code == 400
    assert "did you mean 'items_path'?" in typo.json()["detail"]
    assert len(tid.sources()) == 1


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
    assert tid.source(sid).cost_class.value == "paid_render"
    assert c.put("/sources/nope/config", json={"config": {}}).status_code == 404
