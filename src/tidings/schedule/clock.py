"""Time for the runner: the wall clock, or a faster one for simulations.

The runner only reads time through ``now()`` and waits through ``sleep()``,
so hours of schedule can be replayed in seconds (the integration tests and
``benchmarks/schedule.py`` do) with the same code that runs in production.
Network time is not accelerated: a 20 ms response still takes 20 real ms,
which at 600x is 12 simulated seconds - harmless for minute-scale rules.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...
    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class AcceleratedClock:
    """Simulated time starting at ``start`` that runs ``speed`` times faster than real time."""

    def __init__(self, start: datetime, speed: float) -> None:
        if speed <= 0:
            raise ValueError("speed must be positive")
        self.start = start
        self.speed = speed
        self._t0 = time.monotonic()

    def now(self) -> datetime:
        return self.start + timedelta(seconds=(time.monotonic() - self._t0) * self.speed)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds) / self.speed)
