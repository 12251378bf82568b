"""Webhook delivery (R-API-4) to real receivers on 127.0.0.1: retries, refusals, never blocking."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest
from aiohttp import web

from netservers import serve
from tidings.model import BodyState, Item
from tidings.net import Fetcher
from tidings.schedule.webhooks import WebhookEvent, WebhookSender, item_json
from tidings.settings import Settings

DELAYS = (1.0, 2.0, 4.0)


@dataclass
class Receiver:
    """Answers each path with its script of statuses (then 200), records every body."""

    scripts: dict[str, list[int]] = field(default_factory=dict)
    got: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    hang: float = 0.0
    release: asyncio.Event = field(default_factory=asyncio.Event)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/{name}", self.handle)
        return app

    async def handle(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        self.got.setdefault(name, []).append(await request.json())
        if self.hang:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.release.wait(), self.hang)
        script = self.scripts.get(name, [])
        status = script.pop(0) if script else 200
        headers = {}
        if status == 429:
            headers["Retry-After"] = "7"
        return web.Response(status=status, text="ok", headers=headers)


@pytest.fixture
async def fetcher(settings: Settings) -> AsyncIterator[Fetcher]:
    async with Fetcher(settings) as f:
        yield f


class Waits:
    """Records the delays the sender asks for and skips them (the delays are the subject)."""

    def __init__(self) -> None:
        self.asked: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)
        await asyncio.sleep(0)


def event(n: int) -> WebhookEvent:
    return WebhookEvent("items", {"items": [{"id": n}]})


async def settle(sender: WebhookSender) -> None:
    await sender.aclose(timeout=10)


async def test_every_url_gets_the_event_and_failures_are_retried(fetcher: Fetcher) -> None:
    rx = Receiver(scripts={"flaky": [500, 502]})
    waits = Waits()
    async with serve(rx.app()) as base:
        sender = WebhookSender(fetcher, [f"{base}/good", f"{base}/flaky", f"{base}/good"],
                               sleep=waits, delays=DELAYS)
        sender.start()
        sender.submit(event(1))
        await settle(sender)
    assert [b["items"] for b in rx.got["good"]] == [[{"id": 1}]]  # duplicates URLs collapse
    assert len(rx.got["flaky"]) == 3
    assert waits.asked == [1.0, 2.0]
    assert rx.got["good"][0]["type"] == "items"
    assert "sent_at" in rx.got["good"][0]
    assert (sender.stats.delivered, sender.stats.failed) == (2, 0)


async def test_refusals_are_not_retried_but_rate_limits_are(fetcher: Fetcher) -> None:
    rx = Receiver(scripts={"refuses": [400], "limited": [429]})
    waits = Waits()
    async with serve(rx.app()) as base:
        sender = WebhookSender(fetcher, [f"{base}/refuses", f"{base}/limited"],
                               sleep=waits, delays=DELAYS)
        sender.start()
        sender.submit(event(1))
        await settle(sender)
    assert len(rx.got["refuses"]) == 1
    assert len(rx.got["limited"]) == 2
    assert waits.asked == [pytest.approx(7.0, abs=1.0)]  # Retry-After beats the 1 s delay
    assert (sender.stats.delivered, sender.stats.failed) == (1, 1)


async def test_gives_up_after_the_last_retry(fetcher: Fetcher) -> None:
    rx = Receiver(scripts={"down": [500] * 10})
    waits = Waits()
    async with serve(rx.app()) as base:
        sender = WebhookSender(fetcher, [f"{base}/down"], sleep=waits, delays=DELAYS)
        sender.start()
        sender.submit(event(1))
        sender.submit(event(2))
        await settle(sender)
    assert [b["items"][0]["id"] for b in rx.got["down"]] == [1, 1, 1, 1, 2, 2, 2, 2]
    assert sender.stats.failed == 2
    assert waits.asked == list(DELAYS) * 2


async def test_submit_never_blocks_and_a_full_queue_drops_the_oldest(fetcher: Fetcher) -> None:
    rx = Receiver(hang=3.0)
    async with serve(rx.app()) as base:
        sender = WebhookSender(fetcher, [f"{base}/slow"], max_queue=2, delays=())
        t0 = time.perf_counter()
        for n in range(5):
            sender.submit(event(n))
        assert time.perf_counter() - t0 < 0.05
        assert sender.stats.dropped == 3
        rx.hang = 0.0
        sender.start()
        await settle(sender)
    assert [b["items"][0]["id"] for b in rx.got["slow"]] == [3, 4]


async def test_close_is_bounded_when_a_receiver_hangs(fetcher: Fetcher) -> None:
    rx = Receiver(hang=30.0)
    async with serve(rx.app()) as base:
        sender = WebhookSender(fetcher, [f"{base}/hangs"])
        sender.start()
        sender.submit(event(1))
        await asyncio.sleep(0.1)
        t0 = time.perf_counter()
        await sender.aclose(timeout=0.3)
        assert time.perf_counter() - t0 < 2.0
        rx.release.set()
    assert sender.stats.delivered == 0


def test_item_json_has_the_public_fields() -> None:
    at = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
    item = Item(id=7, key="https://a.example/p", source_id="a", title="T",
                url="https://a.example/p", summary="S", body="<p>secret body</p>",
                body_state=BodyState.OK, published_at=None, discovered_at=at, updated_at=at)
    data = item_json(item, "Source A")
    assert data["source_title"] == "Source A"
    assert data["published_at"] is None
    assert data["discovered_at"] == at.isoformat()
    assert "body" not in data
