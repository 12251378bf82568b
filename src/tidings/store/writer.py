"""The one write path of a process: every write step runs on one thread, in a unit of work.

Asynchronous code (collection, extraction, the scheduler's jobs, the web
reader) must never wait for the database's writer on its event loop: a
collection round commits constantly, and a web page served behind one of its
transactions would stall every other request. So nothing writes on a loop.
Write steps are handed to :class:`Writer`, which runs them one after another on
a thread of its own; the loop awaits the answer and goes on serving meanwhile.
Synchronous code (a CLI command, a re-parse) hands its steps to the same thread
and blocks until they are done, so every write of a process goes the same way
and sees the same order.

A step is a function of a :class:`~tidings.store.base.Unit` (an explicit unit of
work) and its arguments; it is atomic, and its result or error comes back to
the caller. Steps that queue up while the thread is busy are stored in one
transaction, each in a nested part of it (a savepoint): a commit costs more
than a typical step (every page a step touched goes to the WAL again), and a
collection round is many small steps. Each step is still undone alone
when it fails, reads inside a step see the steps before it, and no step is
reported done before its group committed. SQLite and zstd release the GIL, so
the thread also puts a second core to work while the loop goes on.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Concatenate, ParamSpec, TypeVar

from tidings.errors import StorageError, TransactionLostError
from tidings.store.base import Storage, Unit

P = ParamSpec("P")
T = TypeVar("T")

#: steps stored in one transaction at most: no step's answer waits for the commit
#: of more than this many steps
GROUP = 32


@dataclass
class _Step:
    call: Callable[[Unit], Any]
    future: Future[Any]


class Writer:
    """Runs write steps on one thread; ``close`` it when the process is done writing.

    ``await writer(step, *args)`` from a coroutine, ``writer.call(step, *args)``
    from plain code (never from a coroutine: that would block its loop).
    """

    def __init__(self, store: Storage) -> None:
        self._store = store
        self._queue: queue.SimpleQueue[_Step | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._pending = 0
        self._closed = False

    @property
    def pending(self) -> int:
        """Steps submitted and not answered yet."""
        return self._pending

    async def __call__(self, step: Callable[Concatenate[Unit, P], T], /, *args: P.args,
                       **kwargs: P.kwargs) -> T:
        # Cancelling the caller drops a step still queued and lets a running one
        # finish; each step is atomic, so neither leaves anything half-done.
        future = self._submit(lambda unit: step(unit, *args, **kwargs))
        return await asyncio.wrap_future(future)

    def call(self, step: Callable[Concatenate[Unit, P], T], /, *args: P.args,
             **kwargs: P.kwargs) -> T:
        """Run ``step`` and wait for it; for code that has no event loop."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise RuntimeError("Writer.call blocks; await the writer inside a coroutine")
        result: T = self._submit(lambda unit: step(unit, *args, **kwargs)).result()
        return result

    def close(self) -> None:
        """Wait for the steps already queued, then stop the thread."""
        with self._lock:
            self._closed = True
            thread = self._thread
        if thread is not None:
            self._queue.put(None)
            thread.join()

    def _submit(self, call: Callable[[Unit], T]) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise StorageError("the writer is closed")
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="tidings-writer",
                                                daemon=True)
                self._thread.start()
            self._pending += 1
        future.add_done_callback(self._answered)
        self._queue.put(_Step(call, future))
        return future

    def _answered(self, _: Future[Any]) -> None:
        with self._lock:
            self._pending -= 1

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
        while len(steps) < GROUP:
            try:
                step = self._queue.get_nowait()
            except queue.Empty:
                break
            if step is None:
                return steps, True
            steps.append(step)
        return steps, False

    def _store_group(self, steps: list[_Step]) -> None:
        """Run ``steps`` in one transaction and answer each once it is committed.

        A step that fails is undone alone, unless the database rolled back the
        whole transaction (TransactionLostError): then the steps before it are
        undone too, and the steps after it must not run, since their writes would
        land outside any transaction. The whole group fails with that error.
        """
        ran: list[tuple[_Step, Any, BaseException | None]] = []
        started: set[int] = set()
        try:
            with self._store.write() as unit:
                for step in steps:
                    if not step.future.set_running_or_notify_cancel():
                        continue  # cancelled while it waited: dropped
                    started.add(id(step))
                    try:
                        with unit.nested() as part:
                            value = step.call(part)
                    except TransactionLostError:
                        raise
                    except Exception as exc:
                        ran.append((step, None, exc))
                        continue
                    ran.append((step, value, None))
        except Exception as exc:  # no transaction or no commit: none of the group was stored
            for step in steps:
                if id(step) in started or step.future.set_running_or_notify_cancel():
                    step.future.set_exception(exc)
            return
        for step, value, error in ran:
            if error is None:
                step.future.set_result(value)
            else:
                step.future.set_exception(error)
