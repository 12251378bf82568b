"""CPU steps of a round taken one at a time, so the network never waits on them.

A round's event loop does two kinds of work: network (cheap steps, each waiting
on a socket) and CPU (parsing and preparing a feed, ~10 ms each). Left alone,
one pass of the loop runs every CPU step that became ready, and with a few
dozen feeds waiting to be parsed the sockets are looked at a fraction of a
second apart: requests crawl, a server that will never answer is only asked
late in the round, and the round ends its whole timeout after that.

:class:`FairCpu` wraps a round's offload: steps run one at a time, the next
step is handed over through the loop (so sockets are served between any two
steps), and a source that already had a step goes before sources that have had
none, so a feed is finished (and its parsed items freed) before another is started.
Many runs at once also hold the turns while too many finished runs wait for
the writer thread: each holds its parsed feed, so parsing ahead of the writer
only piles them up in memory.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import weakref
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from tidings.readers.base import Offload

if TYPE_CHECKING:
    from tidings.pipeline.env import PipelineEnv

P = ParamSpec("P")
T = TypeVar("T")

#: steps waiting for the writer beyond which no more feeds are parsed: each waiting
#: run holds its parsed feed, and a loop that parses faster than the writer stores
#: (as in a conditional round, where cleaning is mostly skipped) only piles them up
WRITER_BACKLOG = 64
#: how soon a held turn looks at the backlog again
HOLD_RETRY_S = 0.005


def taking_turns(env: PipelineEnv) -> PipelineEnv:
    """``env`` for many runs at once (a round, the scheduler): CPU steps take turns
    through the loop, and wait while the writer is behind."""
    writer = env.writer
    return replace(env, offload=FairCpu(env.offload,
                                        hold=lambda: writer.pending > WRITER_BACKLOG))


class FairCpu:
    """An :class:`~tidings.readers.base.Offload` that takes turns (see the module).

    Turns are handed out by a callback the loop runs on its next pass, never
    straight from one step to the next: the pass in between serves the sockets,
    and a source that asks for its next step right after the last one (prepare
    after parse) is already waiting when the turn is given, so it goes first.
    """

    def __init__(self, offload: Offload, hold: Callable[[], bool] | None = None) -> None:
        self._offload = offload
        self._free = 1  # the loop's own thread runs the steps: one at a time
        #: while it says so, no turn is given (a backlog elsewhere); looked at again soon
        self._hold = hold
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self._started: weakref.WeakSet[asyncio.Task[object]] = weakref.WeakSet()
        self._granting = False

    async def __call__(self, func: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        task = asyncio.current_task()
        await self._turn(0 if task in self._started else 1)
        try:
            if task is not None:
                self._started.add(task)
            return await self._offload(func, *args, **kwargs)
        finally:
            self._free += 1
            self._grant_soon()

    async def _turn(self, rank: int) -> None:
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (rank, next(self._order), turn))
        self._grant_soon()
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():  # given the turn, then cancelled
                self._free += 1
                self._grant_soon()
            raise

    def _grant_soon(self, delay: float = 0.0) -> None:
        if not self._granting:
            self._granting = True
            loop = asyncio.get_running_loop()
            if delay:
                loop.call_later(delay, self._grant)
            else:
                loop.call_soon(self._grant)

    def _grant(self) -> None:
        self._granting = False
        if self._hold is not None and self._waiting and self._hold():
            self._grant_soon(HOLD_RETRY_S)  # the backlog is another thread's to shrink
            return
        while self._free and self._waiting:
            _, _, turn = heapq.heappop(self._waiting)
            if not turn.done():  # skip waits given up
                self._free -= 1
                turn.set_result(None)
