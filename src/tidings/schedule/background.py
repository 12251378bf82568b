"""Work the runner keeps going behind collection, one run at a time.

Extraction of pending bodies and search indexing are both "catch up with what
collection left": each tick asks for another run, and a run still going when
the next tick comes is simply left to finish. A failed run is logged and the
next tick tries again; it never stops collection.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


class Repeating:
    """A job run whenever :meth:`kick` finds it idle."""

    def __init__(self, name: str, job: Callable[[], Awaitable[None]]) -> None:
        self.name = name
        self._job = job
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def kick(self) -> None:
        """Start a run unless one is going."""
        if not self.running:
            self._task = asyncio.create_task(self._guarded(), name=self.name)

    async def cancel(self) -> None:
        """Stop a run in progress (its work is atomic per step; the rest waits)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _guarded(self) -> None:
        try:
            await self._job()
        except Exception:  # the next tick tries again
            log.exception("%s failed", self.name)
