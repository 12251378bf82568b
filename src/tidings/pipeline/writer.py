"""Where a round's storage work runs: inline, or on one thread of its own.

A collection round is one event loop doing Python work (HTTP, parsing,
sanitizing) for many sources at once. Storing a run (compressing the raw
response, looking up and writing the batch, saving the source) is mostly
SQLite and zstd, which release the GIL; on a thread of its own that work uses
a second core while the loop goes on with other sources. One thread, so runs
are stored one after another in the order they finish, exactly as they would
be inline: every decision sees the writes of the runs stored before it.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, Protocol, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class StoreWriter(Protocol):
    """Runs a synchronous storage step (arguments need not pickle)."""

    async def __call__(self, func: Callable[P, T], /, *args: P.args,
                       **kwargs: P.kwargs) -> T: ...


async def in_loop(func: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """The default :class:`StoreWriter`: call it on the event loop's thread."""
    return func(*args, **kwargs)


class WriterThread:
    """A :class:`StoreWriter` with one thread; close it when the round is over."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="tidings-writer")

    async def __call__(self, func: Callable[P, T], /, *args: P.args,
                       **kwargs: P.kwargs) -> T:
        # Cancelling the caller drops a step still queued and lets a running one
        # finish; each step is one transaction, so neither leaves anything half-done.
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(func, *args, **kwargs))

    def close(self) -> None:
        """Wait for the steps already queued, then stop the thread."""
        self._pool.shutdown(wait=True)
