"""Accounts on the web: the add page takes x:@handle and wechat:<id>; the sources page,
a source's page and /api/v1/stats show what the paid APIs cost and hold."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import httpx
import pytest

from test_web_support import ServerThread, open_archive, run, serve_web
from tidings.app import SourceUpdate, Tidings
from tidings.model import PaidCall, SourceKind
from tidings.settings import Settings


@dataclass
class Web:
    tid: Tidings
    client: httpx.Client
    server: ServerThread

    def csrf(self) -> str:
        found = re.search(r'name="csrf" value="([^"]+)"', self.client.get("/add").text)
        assert found
        return found.group(1)


@pytest.fixture
def web(settings: Settings) -> Iterator[Web]:
    tid = open_archive(settings)
    server = serve_web(tid, settings)
    with httpx.Client(base_url=server.url, timeout=10) as client:
        yield Web(tid, client, server)
    server.stop()
    tid.close()


def test_the_add_page_offers_an_account_without_discovery(web: Web) -> None:
    page = web.client.post("/add/find", data={"csrf": web.csrf(), "url": "x:@karpathy"})
    assert page.status_code == 200
    assert "<h2>Account</h2>" in page.text and 'name="kind" value="x"' in page.text
    added = web.client.post("/add", data={"csrf": web.csrf(), "url": "x:@karpathy",
                                          "kind": "x", "title": "karpathy"})
    assert added.status_code == 303 and added.headers["location"] == "/sources/x-karpathy"
    source = web.tid.source("x-karpathy")
    assert (source.kind, source.url, source.interval_min) == (
        SourceKind("x"), "https://x.com/karpathy", 30)
    again = web.client.post("/add", data={"csrf": web.csrf(), "url": "x:@karpathy"})
    assert again.status_code == 400 and "already a source" in again.text
    bad = web.client.post("/add", data={"csrf": web.csrf(), "url": "wechat:"})
    assert bad.status_code == 400 and "x:@handle" in bad.text


def test_spend_balance_and_trouble_are_shown(web: Web) -> None:
    added = web.client.post("/add", data={"csrf": web.csrf(), "url": "wechat:gh_42"})
    assert added.status_code == 303
    now = datetime.now(UTC)
    call = PaidCall("dajiala", "list:1", ("wx-gh_42",), "ok", 0.14, 120, now)
    run(lambda: web.tid.write(lambda unit: unit.record_paid_call(call)))
    run(lambda: web.tid.update_source("wx-gh_42", SourceUpdate(cursor={"balance": 87.5})))
    sources = web.client.get("/sources").text
    assert "Paid APIs" in sources and "dajiala: 1 call, cost 0.14" in sources
    detail = web.client.get("/sources/wx-gh_42").text
    assert "Provider balance" in detail and "87.5" in detail
    token = re.search(r'name="csrf" value="([^"]+)"', detail)
    assert token
    form = {"csrf": token.group(1), "title": "gh_42", "url": "wechat:gh_42",
            "interval_min": "15", "priority": "0", "visibility": "editorial",
            "config": '{"account": "gh_42"}'}
    assert web.client.post("/sources/wx-gh_42", data=form).status_code == 303
    stats = web.client.get("/api/v1/stats").json()
    today = now.astimezone().date().isoformat()
    assert stats["spend_by_day"][today]["dajiala"] == {"calls": 1, "cost": 0.14}
    assert stats["paid_troubles"] == {}
