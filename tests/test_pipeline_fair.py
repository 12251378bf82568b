"""FairCpu: a round's CPU steps take turns through the event loop."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from tidings.pipeline.fair import FairCpu
from tidings.readers.base import inline

P = ParamSpec("P")
T = TypeVar("T")


async def _loop_gaps(until: asyncio.Future[Any]) -> float:
    """The longest the loop went without serving this task (a stand-in for sockets)."""
    worst, last = 0.0, time.monotonic()
    while not until.done():
        await asyncio.sleep(0)
        now = time.monotonic()
        worst, last = max(worst, now - last), now
    return worst


async def _gap_while_parsing(offload: Callable[..., Any]) -> float:
    steps = asyncio.gather(*(offload(time.sleep, 0.02) for _ in range(10)))
    gap = await _loop_gaps(steps)
    await steps
    return gap


async def test_the_loop_is_served_between_any_two_steps() -> None:
    unfair = await _gap_while_parsing(inline)
    assert unfair > 0.15  # all ten 20 ms steps ran in one pass of the loop
    # about one step between two turns of the loop; a ratio, not a time, so that a
    # loaded machine (late wake-ups from sleep) does not decide the outcome
    assert await _gap_while_parsing(FairCpu(inline)) < unfair / 3


async def test_a_started_source_finishes_before_another_starts() -> None:
    cpu = FairCpu(inline)
    order: list[str] = []

    def step(label: str) -> None:
        order.append(label)
        time.sleep(0.005)

    async def source(name: str) -> None:
        for part in "ab":  # parse, then prepare
            await cpu(step, name + part)

    await asyncio.gather(*(source(str(n)) for n in range(1, 5)))
    # first come, first served would be 1a 2a 3a 4a 1b ...: every feed parsed (and
    # held in memory) before the first is prepared
    assert order == ["1a", "1b", "2a", "2b", "3a", "3b", "4a", "4b"]


async def test_one_step_at_a_time_and_a_cancelled_wait_frees_nothing() -> None:
    running, peak = 0, 0

    async def pool(func: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        nonlocal running, peak  # an offload that awaits: the next turn waits for it
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.05)
        running -= 1
        return func(*args, **kwargs)

    cpu = FairCpu(pool)
    waiting = [asyncio.ensure_future(cpu(abs, -n)) for n in range(5)]
    await asyncio.sleep(0.01)
    waiting[3].cancel()  # gave up while queued: must neither run nor leak a slot
    results = await asyncio.gather(*waiting, return_exceptions=True)
    assert peak == 1
    assert results[:3] == [0, 1, 2] and results[4] == 4
    assert isinstance(results[3], asyncio.CancelledError)
    assert list(await asyncio.wait_for(asyncio.gather(cpu(abs, -5), cpu(abs, -6)), 1)) == [5, 6]


async def test_turns_wait_while_held_and_resume_by_themselves() -> None:
    backlog = {"n": 3}
    cpu = FairCpu(inline, hold=lambda: backlog["n"] > 2)
    done: list[int] = []
    steps = [asyncio.ensure_future(cpu(done.append, n)) for n in range(3)]
    for _ in range(5):
        await asyncio.sleep(0)
    assert done == []  # held: nothing parsed while the writer is behind
    backlog["n"] = 2  # the writer caught up: the held turns look again within milliseconds
    await asyncio.wait_for(asyncio.gather(*steps), 1)
    assert done == [0, 1, 2]
