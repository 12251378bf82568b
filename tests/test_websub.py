"""WebSub (R-RSS-8) against a small hub written here: discovery, subscribe with a secret
and a verify token, the challenge, signed pushes stored at once, polling relaxed,
renewal before the lease ends, and polling again when the hub fails."""

from __future__ import annotations

import hashlib
import hmac
import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest

from test_web_support import Clock, ServerThread, free_port
from tidings.app import ItemQuery, Tidings
from tidings.settings import Settings
from tidings.web import create_app


def atom(hub: str, topic: str, titles: list[str]) -> bytes:
    entries = "".join(
        f"<entry><id>urn:pub:{t}</id><title>{t}</title><link href='https://pub.example/{t}'/>"
        f"<updated>2026-01-01T00:00:00Z</updated><content type='html'>&lt;p&gt;{t} body"
        "&lt;/p&gt;</content></entry>" for t in titles)
    return (f"<?xml version='1.0'?><feed xmlns='http://www.w3.org/2005/Atom'><title>Pub</title>"
            f"<id>urn:pub</id><updated>2026-01-01T00:00:00Z</updated>"
            f"<link rel='hub' href='{hub}'/><link rel='self' href='{topic}'/>"
            f"{entries}</feed>").encode()


class Hub:
    """A publisher's feed and its hub on two loopback ports; the hub records requests."""

    def __init__(self) -> None:
        self.requests: list[dict[str, str]] = []
        self.failing = False
        self.stopped = False
        self.titles = ["First post"]
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # the publisher's feed
                body = atom(hub.hub_url, hub.topic, hub.titles)
                self.send_response(200)
                self.send_header("Content-Type", "application/atom+xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:  # a subscription request
                length = int(self.headers.get("Content-Length", "0"))
                form = parse_qs(self.rfile.read(length).decode())
                hub.requests.append({k: v[0] for k, v in form.items()})
                self.send_response(503 if hub.failing else 202)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        port = self.server.server_address[1]
        self.hub_url = f"http://127.0.0.1:{port}/hub"
        self.topic = f"http://127.0.0.1:{port}/feed.xml"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if not self.stopped:
            self.stopped = True
            self.server.shutdown()
            self.server.server_close()

    def verify(self, client: httpx.Client, **overrides: str) -> httpx.Response:
        """What the hub does after a request: GET the callback with a challenge."""
        last = self.requests[-1]
        params = {"hub.mode": "subscribe", "hub.topic": last["hub.topic"],
                  "hub.challenge": "c-" + last["hub.verify_token"][:6],
                  "hub.lease_seconds": "86400", "hub.verify_token": last["hub.verify_token"],
                  **overrides}
        return client.get(last["hub.callback"], params=params)

    def publish(self, client: httpx.Client, titles: list[str], method: str = "sha256",
                secret: str | None = None) -> httpx.Response:
        """What the hub does when the topic changes: POST it, signed."""
        last = self.requests[-1]
        body = atom(self.hub_url, self.topic, titles)
        key = (secret or last["hub.secret"]).encode()
        signature = hmac.new(key, body, getattr(hashlib, method)).hexdigest()
        return client.post(last["hub.callback"], content=body, headers={
            "Content-Type": "application/atom+xml", "X-Hub-Signature": f"{method}={signature}"})


@pytest.fixture
def hub() -> Iterator[Hub]:
    h = Hub()
    yield h
    h.stop()


def open_with(settings: Settings, clock: Clock) -> Tidings:
    return Tidings.open(settings, create=True, clock=clock)


async def test_subscribe_verify_push_renew_and_fall_back(settings: Settings, hub: Hub) -> None:
    port = free_port()
    settings = replace(settings, public_url=f"http://127.0.0.1:{port}")
    clock = Clock()
    tid = open_with(settings, clock)
    server = ServerThread(create_app(tid, settings, page_ttl=0), port).start()
    web = httpx.Client(base_url=server.url)
    try:
        source = await tid.sources.create(hub.topic, title="Pub")
        await tid.collection.round([source.id], extract=False)
        assert tid.sources.get(source.id).cursor["websub_hub"] == hub.hub_url
        assert await tid.websub.maintain() == {source.id: "requested"}
        sent = hub.requests[-1]
        assert sent["hub.mode"] == "subscribe" and sent["hub.topic"] == hub.topic
        assert sent["hub.callback"] == f"{server.url}/websub/callback/{source.id}"
        assert len(sent["hub.secret"]) >= 32 and sent["hub.verify_token"]
        assert "waiting" in (tid.websub.status(tid.sources.get(source.id)) or "")

        # the hub's challenge: wrong topic or token, unknown source: refused
        assert hub.verify(web, **{"hub.topic": "http://elsewhere.example/"}).status_code == 404
        assert hub.verify(web, **{"hub.verify_token": "forged"}).status_code == 404
        assert web.get("/websub/callback/nobody", params={
            "hub.mode": "subscribe", "hub.topic": hub.topic,
            "hub.challenge": "x"}).status_code == 404
        assert hub.publish(web, ["Too early"]).status_code == 403  # not verified yet
        answer = hub.verify(web)
        assert answer.status_code == 200 and answer.text.startswith("c-")
        assert tid.websub.lease(source.id).state == "active"  # type: ignore[union-attr]

        # signed pushes are stored at once; unsigned or badly signed ones are not
        clock.advance(minutes=5)
        assert hub.publish(web, ["Pushed news", "First post"]).status_code == 202
        titles = {i.title for i in tid.items.query(ItemQuery(source_id=source.id))}
        assert titles == {"First post", "Pushed news"}
        relaxed = tid.sources.get(source.id).next_fetch_at
        assert relaxed is not None and relaxed >= clock.now + timedelta(hours=5)
        assert hub.publish(web, ["Sha1 news"], method="sha1").status_code == 202
        assert hub.publish(web, ["Forged"], secret="not the secret").status_code == 403
        unsigned = web.post(hub.requests[-1]["hub.callback"], content=atom(
            hub.hub_url, hub.topic, ["Unsigned"]))
        assert unsigned.status_code == 403
        titles = {i.title for i in tid.items.query(ItemQuery(source_id=source.id))}
        assert "Forged" not in titles and "Unsigned" not in titles and "Sha1 news" in titles

        # renewal: well before the lease (one day) ends, the same secret is asked again
        asked = len(hub.requests)
        assert await tid.websub.maintain() == {}  # not due yet
        clock.advance(hours=13)
        assert await tid.websub.maintain() == {source.id: "requested"}
        assert len(hub.requests) == asked + 1
        assert hub.requests[-1]["hub.secret"] == sent["hub.secret"]
        assert hub.verify(web).status_code == 200

        # the hub fails: polling resumes now, and the subscription is tried again later
        hub.failing = True
        clock.advance(hours=13)
        done = await tid.websub.maintain()
        assert done[source.id].startswith("failed")
        assert tid.sources.get(source.id).next_fetch_at == clock.now
        assert "failed" in (tid.websub.status(tid.sources.get(source.id)) or "")
        assert await tid.websub.maintain() == {}  # not again at once
        hub.failing = False
        clock.advance(hours=2)
        assert await tid.websub.maintain() == {source.id: "requested"}
    finally:
        web.close()
        server.stop()
        await tid.aclose()


async def test_a_lapsed_lease_or_a_dead_hub_means_polling(settings: Settings, hub: Hub) -> None:
    settings = replace(settings, public_url="http://127.0.0.1:9")
    clock = Clock()
    tid = open_with(settings, clock)
    try:
        source = await tid.sources.create(hub.topic, title="Pub")
        await tid.collection.round([source.id], extract=False)
        await tid.websub.maintain()
        lease = tid.websub.lease(source.id)
        assert lease is not None
        await tid.websub.verify(source.id, {"hub.mode": "subscribe", "hub.topic": hub.topic,
                                            "hub.challenge": "ok", "hub.lease_seconds": "60"})
        hub.stop()  # the hub is gone for good
        clock.advance(minutes=5)
        done = await tid.websub.maintain()
        assert "unreachable" in done[source.id] or "lease ended" in done[source.id]
        assert tid.websub.lease(source.id).state == "failed"  # type: ignore[union-attr]
        assert tid.sources.get(source.id).next_fetch_at == clock.now
    finally:
        await tid.aclose()


async def test_without_public_url_nothing_subscribes_and_the_page_says_so(
        settings: Settings, hub: Hub) -> None:
    tid = open_with(settings, Clock())
    try:
        source = await tid.sources.create(hub.topic, title="Pub")
        await tid.collection.round([source.id], extract=False)
        assert await tid.websub.maintain() == {}
        assert hub.requests == []
        status = tid.websub.status(tid.sources.get(source.id)) or ""
        assert "public_url" in status and hub.hub_url in status
    finally:
        await tid.aclose()


def test_hub_and_self_are_found_in_links_and_headers() -> None:
    from tidings.readers.rss.websub import websub_links

    rss = (b"<rss xmlns:atom='http://www.w3.org/2005/Atom'><channel><title>x</title>"
           b"<atom:link rel=\"hub\" href=\"https://hub.example/?a=1&amp;b=2\"/>"
           b"<atom:link href='https://pub.example/rss' rel='self' type='application/rss+xml'/>"
           b"<item><title>t</title></item></channel></rss>")
    assert websub_links(rss, {}) == ("https://hub.example/?a=1&b=2", "https://pub.example/rss")
    header = {"link": '<https://h.example/>; rel="hub", <https://p.example/f>; rel="self"'}
    assert websub_links(b"<feed/>", header) == ("https://h.example/", "https://p.example/f")
    assert websub_links(b"<link rel='hub' href='javascript:x'/>", {}) == (None, None)
    assert websub_links(b"<feed><title>none</title></feed>", {}) == (None, None)
