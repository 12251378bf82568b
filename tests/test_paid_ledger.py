"""The spend ledger holds a call against the budget until it is recorded (R-SCHED-3)."""

from __future__ import annotations

import asyncio
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tidings.errors import BudgetExhaustedError
from tidings.pipeline.spend import Ledger
from tidings.readers.options import Provider
from tidings.store.sqlite import SqliteStorage
from tidings.store.writer import Writer

NOON = datetime(2026, 3, 4, 12, tzinfo=UTC)


async def test_a_call_being_recorded_still_counts_against_the_budget(tmp_path: Path) -> None:
    """Two calls fit the day's money; a third, checked while the second waits for the
    writer to record it, must not be made (it was, and a tight day went over)."""
    store = SqliteStorage(tmp_path / "ledger.sqlite3")
    writer = Writer(store)
    provider = Provider("dajiala", "http://127.0.0.1:9", "key-0001", daily_cost=0.28,
                        cost_per_call=0.14)
    ledger = Ledger({"dajiala": provider}, store, writer, lambda: NOON, UTC)
    async with ledger.call("dajiala", "list", ["wechat-a"]):
        pass
    gate = threading.Event()  # holds the writer busy, so the second call's record waits

    def busy(unit: Any) -> None:
        gate.wait(10)

    blocker = asyncio.ensure_future(writer(busy))
    outcome: list[str] = []

    async def second() -> None:
        async with ledger.call("dajiala", "list", ["wechat-b"]):
            pass

    async def third_while_the_second_waits() -> None:
        while writer.pending < 2:  # the blocker and the second call's record
            await asyncio.sleep(0.001)
        try:
            async with ledger.call("dajiala", "list", ["wechat-c"]):
                outcome.append("made")
        except BudgetExhaustedError:
            outcome.append("refused")
        finally:
            gate.set()

    await asyncio.wait_for(asyncio.gather(second(), third_while_the_second_waits(), blocker),
                           timeout=20)
    assert outcome == ["refused"]
    spent = ledger.today()["dajiala"]
    assert (spent.calls, round(spent.cost, 2)) == (2, 0.28)
    with pytest.raises(BudgetExhaustedError):
        async with ledger.call("dajiala", "list", ["wechat-d"]):
            pass
    writer.close()
    store.close()
