"""Webhooks (R-API-4): new items and the weekly health report, POSTed as JSON.

Delivery never blocks collection: ``submit`` only appends to a bounded
in-memory queue per URL, and one background task per URL sends in order,
retrying with growing delays (and at least what a Retry-After asks). A dead
receiver therefore delays only its own queue; when that queue is full the
oldest events are dropped and counted, never the collector's time. Requests go
through the guarded fetcher like any other outbound request (R-HTTP), so a
webhook on a private address needs ``allow_private_hosts``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tidings.errors import FetchError, HTTPStatusError
from tidings.model import Item
from tidings.net import Fetcher

log = logging.getLogger(__name__)

#: seconds to wait before each retry; one first try plus these
RETRY_DELAYS: tuple[float, ...] = (10.0, 30.0, 120.0, 600.0, 1800.0)
MAX_QUEUE = 1000
REQUEST_TIMEOUT = 10.0
#: statuses that say "try again later"; other 4xx mean the request itself is refused
_RETRYABLE_4XX = frozenset({408, 409, 425, 429})


@dataclass(frozen=True, slots=True)
class WebhookEvent:
    type: str  # "items" or "health_report"
    payload: Mapping[str, Any]

    def body(self, now: datetime) -> dict[str, Any]:
        return {"type": self.type, "sent_at": now.isoformat(), **self.payload}


def item_json(item: Item, source_title: str = "") -> dict[str, Any]:
    """The public fields of a new item, as receivers get them."""
    return {
        "id": item.id, "key": item.key, "source_id": item.source_id,
        "source_title": source_title or item.source_title, "title": item.title,
        "url": item.url, "summary": item.summary, "author": item.author,
        "categories": list(item.categories), "images": list(item.images),
        "published_at": item.published_at.isoformat() if item.published_at else None,
        "discovered_at": item.discovered_at.isoformat(),
    }


@dataclass(slots=True)
class DeliveryStats:
    delivered: int = 0
    failed: int = 0  # gave up after the last retry, or refused outright
    dropped: int = 0  # pushed out of a full queue
    attempts: int = 0


@dataclass(slots=True)
class _Target:
    url: str
    queue: deque[WebhookEvent]
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    busy: bool = False


class WebhookSender:
    """Background delivery to every configured URL; see the module docstring."""

    def __init__(
        self, fetcher: Fetcher, urls: Sequence[str], *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        delays: Sequence[float] = RETRY_DELAYS, max_queue: int = MAX_QUEUE,
    ) -> None:
        self._fetcher = fetcher
        self._clock = clock
        self._sleep = sleep
        self._delays = tuple(delays)
        self._targets = [_Target(u, deque(maxlen=max_queue)) for u in dict.fromkeys(urls)]
        self._tasks: list[asyncio.Task[None]] = []
        self._idle = asyncio.Event()
        self._idle.set()
        self.stats = DeliveryStats()

    @property
    def enabled(self) -> bool:
        return bool(self._targets)

    def submit(self, event: WebhookEvent) -> None:
        """Queue ``event`` for every URL; returns at once."""
        for target in self._targets:
            if len(target.queue) == target.queue.maxlen:
                self.stats.dropped += 1
                log.warning("webhook %s: queue full, dropping the oldest event", target.url)
            target.queue.append(event)
            target.wake.set()
            self._idle.clear()

    def start(self) -> None:
        if not self._tasks:
            self._tasks = [asyncio.create_task(self._serve(t), name=f"webhook {t.url}")
                           for t in self._targets]

    def pending(self) -> int:
        return sum(len(t.queue) + t.busy for t in self._targets)

    async def aclose(self, timeout: float = 5.0) -> None:  # noqa: ASYNC109
        """Give queued events up to ``timeout`` real seconds, then stop."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._idle.wait()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []

    async def _serve(self, target: _Target) -> None:
        while True:
            while target.queue:
                event = target.queue.popleft()
                target.busy = True
                try:
                    await self._deliver(target.url, event)
                finally:
                    target.busy = False
            target.wake.clear()
            if not self.pending():
                self._idle.set()
            await target.wake.wait()

    async def _deliver(self, url: str, event: WebhookEvent) -> None:
        wait = 0.0
        for attempt in range(len(self._delays) + 1):
            if wait > 0:
                await self._sleep(wait)
            self.stats.attempts += 1
            try:
                await self._fetcher.fetch(url, method="POST", json=event.body(self._clock()),
                                          timeout=REQUEST_TIMEOUT)
            except FetchError as exc:
                if not _retryable(exc) or attempt == len(self._delays):
                    self.stats.failed += 1
                    log.warning("webhook %s: giving up on a %s event: %s", url, event.type, exc)
                    return
                wait = self._delays[attempt]
                if isinstance(exc, HTTPStatusError) and exc.retry_after is not None:
                    asked = (exc.retry_after - self._clock()).total_seconds()
                    wait = max(wait, asked)
                log.info("webhook %s: %s; retrying in %.0f s", url, exc, wait)
            else:
                self.stats.delivered += 1
                return


def _retryable(exc: FetchError) -> bool:
    if isinstance(exc, HTTPStatusError):
        return exc.status >= 500 or exc.status in _RETRYABLE_4XX
    return exc.kind not in ("blocked", "too_large")
