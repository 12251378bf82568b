"""Where a round's storage work runs: inline, or on one thread of its own.

A collection round is one event loop doing Python work (HTTP, parsing,
sanitizing) for many sources at once. Storing a run (compressing the raw
response, looking up and writing the batch, saving the source) is mostly
SQLite and zstd, which release the GIL; on a thread of its own that work uses
a second core while the loop goes on with other sources. One thread, so runs
are stored one after another in the order they finish, exactly as they would
be inline: every decision sees the writes of the runs stored before it.

Steps that queue up while the thread is busy are stored in one transaction
(at most ``GROUP`` of them): a commit costs more than a typical step (every
page a step touched goes to the WAL again), and a conditional round is a
thousand tiny steps. Each step is still atomic by itself (storage calls nest
as savepoints), reads inside the transaction see the steps before, and no
step is reported stored before its group committed.
"""

from __future__ import annotations

import asyncio
import functools
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, ParamSpec, Protocol, TypeVar

from tidings.store.base import Storage

P = ParamSpec("P")
T = TypeVar("T")

#: steps stored in one transaction at most (a group holds the writer ~1 ms a step)
GROUP = 32
#: steps waiting beyond which a round parses no more feeds: each waiting run holds
#: its parsed feed, and a loop that parses faster than the writer stores (as in a
#: conditional round, where cleaning is mostly skipped) only piles them up
WRITER_BACKLOG = 64


class StoreWriter(Protocol):
    """Runs a synchronous storage step (arguments need not pickle)."""

    async def __call__(self, func: Callable[P, T], /, *args: P.args,
                       **kwargs: P.kwargs) -> T: ...


async def in_loop(func: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """The default :class:`StoreWriter`: call it on the event loop's thread."""
    return func(*args, **kwargs)


@dataclass
class _Step:
    call: Callable[[], Any]
    future: Future[Any]


class WriterThread:
    """A :class:`StoreWriter` with one thread; close it when the round is over."""

    def __init__(self, store: Storage, group: int = GROUP) -> None:
        self._store = store
        self._group = max(1, group)
        #: steps submitted and not yet answered (the event loop's count)
        self.pending = 0
        #: called on the loop after each step is answered (a round pokes its CPU turns)
        self.on_done: Callable[[], None] | None = None
        self._queue: queue.SimpleQueue[_Step | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="tidings-writer", daemon=True)
        self._thread.start()

    async def __call__(self, func: Callable[P, T], /, *args: P.args,
                       **kwargs: P.kwargs) -> T:
        # Cancelling the caller drops a step still queued and lets a running one
        # finish; each step is atomic, so neither leaves anything half-done.
        future: Future[T] = Future()
        self._queue.put(_Step(functools.partial(func, *args, **kwargs), future))
        self.pending += 1
        try:
            return await asyncio.wrap_future(future)
        finally:
            self.pending -= 1
            if self.on_done is not None:
                self.on_done()

    def close(self) -> None:
        """Wait for the steps already queued, then stop the thread."""
        self._queue.put(None)
        self._thread.join()

    def _run(self) -> None:
        while True:
            steps, stop = self._next_group()
            if steps:
                self._store_group(steps)
            if stop:
                return

    def _next_group(self) -> tuple[list[_Step], bool]:
        """The next step (waiting for it) and whatever else is queued, up to a group."""
        first = self._queue.get()
        if first is None:
            return [], True
        steps = [first]
        while len(steps) < self._group:
            try:
                step = self._queue.get_nowait()
            except queue.Empty:
                break
            if step is None:
                return steps, True
            steps.append(step)
        return steps, False

    def _store_group(self, steps: list[_Step]) -> None:
        ran: list[tuple[_Step, Any, Exception | None]] = []
        try:
            with self._store.transaction():
                for step in steps:
                    if not step.future.set_running_or_notify_cancel():
                        continue  # cancelled while it waited: dropped
                    try:
                        with self._store.transaction():  # a savepoint: undone alone
                            value = step.call()
                    except Exception as exc:
                        ran.append((step, None, exc))
                        continue
                    ran.append((step, value, None))
        except Exception as exc:  # no transaction or no commit: none of the group was stored
            started = {id(step) for step, _, _ in ran}
            for step in steps:
                if id(step) in started or step.future.set_running_or_notify_cancel():
                    step.future.set_exception(exc)
            return
        for step, value, error in ran:
            if error is None:
                step.future.set_result(value)
            else:
                step.future.set_exception(error)
