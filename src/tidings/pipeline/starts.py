"""Run rows started together: the sources of a round that begin in one pass of the
event loop get their ``running`` rows from one storage step.

A round admits up to a thousand sources at once, and each used to queue its own
start step for the writer thread: half of a conditional round's writer steps,
each a savepoint, a statement and a hand-over of the GIL between the thread and
a busy event loop. The row still exists before the source's first request (it
marks the source as running for other processes, R-SCHED-8), and a run still
starts at its own time.
"""

from __future__ import annotations

import asyncio
from datetime import datetime

from tidings.pipeline.writer import StoreWriter
from tidings.store.base import Storage


class RunStarts:
    """``await starts(source_id, now)`` gives the run id, as ``store.start_run`` would."""

    def __init__(self, store: Storage, writer: StoreWriter) -> None:
        self._store = store
        self._writer = writer
        self._asked: list[tuple[str, datetime, asyncio.Future[int]]] = []

    async def __call__(self, source_id: str, started_at: datetime) -> int:
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[int] = loop.create_future()
        if not self._asked:
            loop.call_soon(self._send)  # after every source starting in this pass asked
        self._asked.append((source_id, started_at, answer))
        return await answer

    def _send(self) -> None:
        asked, self._asked = self._asked, []
        task = asyncio.ensure_future(self._start(asked))
        task.add_done_callback(_retrieve)

    async def _start(self, asked: list[tuple[str, datetime, asyncio.Future[int]]]) -> None:
        try:
            ids = await self._writer(self._store.start_runs, [(s, at) for s, at, _ in asked])
        except Exception:  # e.g. one source deleted since the claim: retry one by one
            await self._one_by_one(asked)
            return
        for (_, _, answer), run_id in zip(asked, ids, strict=True):
            if not answer.done():
                answer.set_result(run_id)

    async def _one_by_one(self, asked: list[tuple[str, datetime, asyncio.Future[int]]]) -> None:
        """After a failed batch, each start alone: only the faulty source sees its error."""
        for source_id, started_at, answer in asked:
            try:
                run_id = await self._writer(self._store.start_run, source_id, started_at)
            except Exception as exc:  # handed to the source's own run
                if not answer.done():
                    answer.set_exception(exc)
                continue
            if not answer.done():
                answer.set_result(run_id)


def _retrieve(task: asyncio.Task[None]) -> None:
    if not task.cancelled():
        task.exception()  # every error went to a waiting run; nothing else to report
