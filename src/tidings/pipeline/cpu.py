"""A process pool for the CPU-bound steps of a large round (parsing, sanitizing).

One Python process parses with one core; on a machine with several cores a big
round would leave the others idle while the event loop waits on parsing. The
pool runs only pure functions (``parse_feed``, ``upsert.prepare``): storage
and the network stay in the main process, so the single-writer rule and the
shared politeness limits are untouched. Small rounds skip it: starting worker
processes costs more than it saves.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

#: rounds with fewer sources than this parse in the main process
MIN_SOURCES = 50
#: how often a worker checks that the process that owns it still exists
OWNER_CHECK_SECONDS = 1.0


def _start_worker(owner: int) -> None:
    """Import the heavy modules once per worker, and leave when the owner is gone.

    A worker blocks on its task queue, whose write end it holds itself, so it
    would never notice its owner being killed (``kill -9``, the OOM killer) and
    would linger forever; a small watcher thread ends it instead.
    """
    import tidings.pipeline.upsert
    import tidings.readers.rss  # noqa: F401

    threading.Thread(target=_exit_with, args=(owner,), daemon=True).start()


def _exit_with(owner: int) -> None:
    while True:
        time.sleep(OWNER_CHECK_SECONDS)
        try:
            os.kill(owner, 0)
        except ProcessLookupError:
            os._exit(0)
        except PermissionError:  # alive, owned by someone else (pid reused): keep going
            continue


class CpuPool:
    """An :class:`tidings.readers.base.Offload` backed by worker processes."""

    def __init__(self, workers: int) -> None:
        context = multiprocessing.get_context("forkserver")
        self._pool = ProcessPoolExecutor(workers, mp_context=context,
                                         initializer=_start_worker, initargs=(os.getpid(),))

    async def __call__(self, func: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, partial(func, *args, **kwargs))

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def pool_size(setting: int, sources: int) -> int:
    """Workers for a round: the setting, or one per core beyond the main process's."""
    if sources < MIN_SOURCES or setting < 0:
        return 0
    if setting > 0:
        return setting
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return cores if cores and cores > 1 else 0
