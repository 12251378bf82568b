"""The writer thread: runs stored in order, queued runs committed together."""

from __future__ import annotations

import asyncio
import threading

import pytest

from storage_contract import new, source
from tidings.errors import NotFoundError
from tidings.pipeline.writer import WriterThread
from tidings.store.base import Storage, UpsertBatch


def _create(storage: Storage, key: str) -> int:
    return storage.apply_upserts(UpsertBatch(creates=[new(key)]))[key]


def _create_then_fail(storage: Storage, key: str) -> int:
    _create(storage, key)
    storage.update_source("missing", {"fail_count": 1})  # raises NotFoundError
    return 0


def _committed(storage: Storage, keys: list[str]) -> set[str]:
    """What another thread (another connection) sees: only committed rows."""
    seen: set[str] = set()
    reader = threading.Thread(target=lambda: seen.update(storage.lookup_items(keys)))
    reader.start()
    reader.join()
    return seen


async def test_queued_steps_share_a_commit_yet_fail_alone(storage: Storage) -> None:
    storage.add_source(source())
    writer = WriterThread(storage)
    gate = threading.Event()
    keys = [f"k{n}" for n in range(10)]
    try:
        held = asyncio.ensure_future(writer(gate.wait, 5))
        await asyncio.sleep(0.05)  # the thread is inside the first step: the rest queue up

        async def step(key: str) -> int:
            if key == "k4":  # fails after its create: only that step is undone
                return await writer(_create_then_fail, storage, key)
            return await writer(_create, storage, key)

        waiting = [asyncio.ensure_future(step(k)) for k in keys]
        await asyncio.sleep(0.05)
        assert _committed(storage, keys) == set()  # nothing ran yet
        gate.set()
        assert await held is True
        done = await asyncio.gather(*waiting, return_exceptions=True)
        # every result arrives after its group committed: another connection sees it
        assert _committed(storage, keys) == set(keys) - {"k4"}
    finally:
        writer.close()
    assert isinstance(done[4], NotFoundError)
    ids = [d for d in done if isinstance(d, int)]
    assert ids == sorted(ids) and len(ids) == 9  # stored in the order they were asked


async def test_a_later_step_sees_the_uncommitted_writes_of_an_earlier_one(
    storage: Storage,
) -> None:
    storage.add_source(source())
    writer = WriterThread(storage)
    gate = threading.Event()
    try:
        held = asyncio.ensure_future(writer(gate.wait, 5))
        await asyncio.sleep(0.05)
        first = asyncio.ensure_future(writer(_create, storage, "same"))
        second = asyncio.ensure_future(writer(storage.lookup_items, ["same"]))
        await asyncio.sleep(0.05)
        gate.set()
        await held
        item_id = await first
        assert (await second)["same"].id == item_id
    finally:
        writer.close()


async def test_a_cancelled_step_still_queued_is_dropped(storage: Storage) -> None:
    storage.add_source(source())
    writer = WriterThread(storage)
    gate = threading.Event()
    try:
        held = asyncio.ensure_future(writer(gate.wait, 5))
        await asyncio.sleep(0.05)
        dropped = asyncio.ensure_future(writer(_create, storage, "dropped"))
        await asyncio.sleep(0.01)
        dropped.cancel()
        kept = asyncio.ensure_future(writer(_create, storage, "kept"))
        await asyncio.sleep(0.01)
        gate.set()
        await held
        await kept
        with pytest.raises(asyncio.CancelledError):
            await dropped
    finally:
        writer.close()
    assert set(storage.lookup_items(["dropped", "kept"])) == {"kept"}
