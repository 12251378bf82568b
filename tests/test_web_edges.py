"""What the attack campaign (issue 16) found at the web edge, each kept as a regression test."""

from __future__ import annotations

import asyncio
import re
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
import uvicorn

from test_web_support import (
    Spec,
    add_items,
    add_source,
    free_port,
    new_token,
    open_archive,
    serve_web,
    store_password,
)
from tidings.app import Tidings
from tidings.settings import Settings
from tidings.web import create_app
from tidings.web.server import proxy_options

HUGE = "99999999999999999999"


@pytest.fixture
def tid(settings: Settings) -> Iterator[Tidings]:
    archive = open_archive(settings)
    add_source(archive, "alpha", "Alpha")
    add_items(archive, [Spec(f"Story {i}", age=timedelta(minutes=i)) for i in range(3)])
    yield archive
    archive.close()


@pytest.fixture
def web(tid: Tidings, settings: Settings) -> Iterator[httpx.Client]:
    """The reader in open mode (no password): every loopback client is the admin."""
    server = serve_web(tid, settings)
    with httpx.Client(base_url=server.url) as client:
        yield client
    server.stop()


def csrf_of(client: httpx.Client, path: str = "/") -> str:
    match = re.search(r'<meta name="csrf" content="([^"]+)"', client.get(path).text)
    assert match
    return match.group(1)


@pytest.mark.parametrize("path", [f"/api/v1/items/{HUGE}", f"/item/{HUGE}",
                                  f"/item/{HUGE}/raw", f"/item/1/raw/{HUGE}", "/item/-1",
                                  f"/api/v1/items/{HUGE}0"])
def test_ids_past_the_database_integers_are_4xx(web: httpx.Client, path: str) -> None:
    response = web.get(path)
    assert 400 <= response.status_code < 500, response.text[:200]
    if path.startswith("/api/"):
        assert "detail" in response.json()


@pytest.mark.parametrize("ids", ["²", "1" * 23, "1,²", "0", "-3", "٣"])
def test_mark_read_refuses_what_is_not_an_id(web: httpx.Client, ids: str) -> None:
    token = csrf_of(web)
    response = web.post("/mark-read", data={"csrf": token, "ids": ids})
    assert response.status_code == 400
    assert "no items to mark" in response.text


@pytest.mark.parametrize(("path", "params"), [
    ("/api/v1/search", {"q": "a\x00"}), ("/api/v1/items", {"author": "x\x01"}),
    ("/search", {"q": "\x7fb"}), ("/api/v1/sources/a%00b", {}),
])
def test_control_characters_are_refused_before_any_route(
    web: httpx.Client, path: str, params: dict[str, str],
) -> None:
    response = web.get(path, params=params)
    assert response.status_code == 400
    assert "control characters" in response.text
    if path.startswith("/api/"):
        assert response.json()["detail"]


def test_database_errors_are_never_echoed(web: httpx.Client, settings: Settings) -> None:
    with sqlite3.connect(settings.data_dir / "tidings.sqlite3") as conn:
        conn.execute("DROP TABLE item_search")  # a broken archive: the search fails inside
    response = web.get("/api/v1/search", params={"q": "story"})
    assert response.status_code == 503
    assert response.json() == {"detail": "the archive could not answer this request; "
                                         "the server log says why"}
    assert "item_search" not in web.get("/search", params={"q": "story"}).text


@pytest.mark.parametrize("host", ["[::1]x", "127.0.0.1:18091@evil.example", "127.0.0.1:x",
                                  "localhost:1:2", "a b"])
def test_malformed_host_headers_are_421(web: httpx.Client, host: str) -> None:
    response = web.get("/", headers={"Host": host})
    assert response.status_code == 421
    api = web.get("/api/v1/stats", headers={"Host": host})
    assert api.status_code == 421 and api.json() == {"detail": "malformed Host header"}
    assert web.get("/", headers={"Host": "[::1]:8080"}).status_code == 200


class _Counting(BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self) -> None:
        type(self).hits += 1
        body = b"<html><head><title>x</title></head><body>no feeds</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_get_add_never_fetches_finding_feeds_is_a_post(tid: Tidings, settings: Settings) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Counting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    target = f"http://127.0.0.1:{server.server_address[1]}/page"
    app = create_app(tid, settings, page_ttl=0)

    async def go() -> None:
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 5000))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            page = await c.get("/add", params={"url": target})
            assert page.status_code == 200 and target in page.text
            assert _Counting.hits == 0
            assert (await c.post("/add/find", data={"url": target})).status_code == 403
            assert _Counting.hits == 0
            token = re.search(r'<meta name="csrf" content="([^"]+)"', page.text)
            assert token
            found = await c.post("/add/find", data={"url": target, "csrf": token.group(1)})
            assert found.status_code == 422 and "no feed found" in found.text
            assert _Counting.hits >= 1
        await tid.fetcher.aclose()

    try:
        asyncio.run(go())
    finally:
        server.shutdown()
        server.server_close()


def _failed_logins(settings: Settings, tid: Tidings) -> list[int]:
    """Eleven wrong passwords, each claiming another client address in X-Forwarded-For."""
    config = uvicorn.Config(create_app(tid, settings, page_ttl=0), host="127.0.0.1",
                            port=free_port(), log_level="warning", lifespan="off",
                            **proxy_options(settings))
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            thread.join(0.02)
        with httpx.Client(base_url=f"http://127.0.0.1:{config.port}") as c:
            token = csrf_of(c, "/login")
            return [c.post("/login", data={"csrf": token, "password": "wrong guess"},
                           headers={"X-Forwarded-For": f"203.0.113.{n}"}).status_code
                    for n in range(11)]
    finally:
        server.should_exit = True
        thread.join(10)


def test_x_forwarded_for_counts_only_from_a_configured_proxy(
    tid: Tidings, settings: Settings,
) -> None:
    store_password(tid, "correct horse battery")
    statuses = _failed_logins(settings, tid)
    assert statuses == [401] * 10 + [429]  # the header is ignored: one client, locked out
    behind = replace(settings, trusted_proxies=("127.0.0.1",))
    assert _failed_logins(behind, tid) == [401] * 11  # the proxy's word


def test_api_token_still_reads_with_strict_hosts(tid: Tidings, settings: Settings) -> None:
    store_password(tid, "correct horse battery")
    server = serve_web(tid, settings)
    try:
        headers = {"Authorization": f"Bearer {new_token(tid, 't')}", "Host": "reader.example"}
        assert httpx.get(server.url + "/api/v1/items", headers=headers).status_code == 200
    finally:
        server.stop()
