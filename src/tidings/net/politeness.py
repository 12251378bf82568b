"""Being a polite client (R-HTTP-8): per-host concurrency, spacing, Retry-After.

The limiter lives in the :class:`~tidings.net.client.Fetcher`, so everything
that shares a Fetcher shares the limits; one Fetcher per process is the rule.
Hosts do not wait for each other: every host has its own gate.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from types import TracebackType

#: spacing is stretched by a random 0..JITTER share so requests do not fall in lockstep
JITTER = 0.5
_MAX_IDLE_GATES = 4096
#: longer waits are not honoured: a source pushed a year ahead by one header is a
#: source lost (``Retry-After: 99999999999999999999``); a day later we ask again
_MAX_RETRY_AFTER = 24 * 3600


@dataclass(slots=True)
class _Gate:
    slots: asyncio.Semaphore
    next_start: float = 0.0
    users: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class _Slot:
    """One use of a host's gate; a class, not a generator-based context manager, because
    every request of the process enters one and that costs a third as much."""

    __slots__ = ("_gate", "_limiter")

    def __init__(self, limiter: HostLimiter, gate: _Gate) -> None:
        self._limiter = limiter
        self._gate = gate

    async def __aenter__(self) -> None:
        gate = self._gate
        gate.users += 1
        try:
            await gate.slots.acquire()
        except BaseException:
            gate.users -= 1
            raise
        if self._limiter.delay > 0:
            try:
                await self._limiter._space(gate)
            except BaseException:
                self._release()
                raise

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        self._release()

    def _release(self) -> None:
        self._gate.slots.release()
        self._gate.users -= 1


class HostLimiter:
    """At most ``concurrency`` requests per host, starts spaced ``delay`` s apart (+ jitter)."""

    def __init__(self, concurrency: int, delay: float, *, jitter: float = JITTER) -> None:
        self.concurrency = max(1, concurrency)
        self.delay = max(0.0, delay)
        self.jitter = jitter
        self._gates: dict[str, _Gate] = {}

    def slot(self, host: str) -> _Slot:
        """Hold one of ``host``'s slots for the duration of an ``async with`` block."""
        return _Slot(self, self._gate(host.lower()))

    async def _space(self, gate: _Gate) -> None:
        async with gate.lock:
            now = time.monotonic()
            start = max(now, gate.next_start)
            gate.next_start = start + self.delay * (1 + random.uniform(0, self.jitter))
        if start > now:
            await asyncio.sleep(start - now)

    def _gate(self, host: str) -> _Gate:
        gate = self._gates.get(host)
        if gate is None:
            if len(self._gates) >= _MAX_IDLE_GATES:
                self._prune()
            gate = self._gates[host] = _Gate(asyncio.Semaphore(self.concurrency))
        return gate

    def _prune(self) -> None:
        now = time.monotonic()
        for host, gate in list(self._gates.items()):
            if gate.users == 0 and gate.next_start <= now:
                del self._gates[host]


def parse_retry_after(value: str, now: datetime) -> datetime | None:
    """The instant a ``Retry-After`` header asks us to wait for (UTC), or None.

    Both forms are accepted: delta seconds and an HTTP date. A date in the past
    means "now"; garbage means the header is ignored; both forms are capped at 24
    hours. ``now`` is UTC-aware.
    """
    text = value.strip()
    if not text:
        return None
    latest = now + timedelta(seconds=_MAX_RETRY_AFTER)
    if text.isascii() and text.isdigit():
        seconds = int(text) if len(text) <= 12 else _MAX_RETRY_AFTER  # int() of 5,000 digits raises
        return now + timedelta(seconds=min(seconds, _MAX_RETRY_AFTER))
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return min(max(when.astimezone(UTC), now), latest)
