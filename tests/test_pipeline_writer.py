"""The writer thread: runs stored in order, queued runs committed together."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator

import pytest

from storage_contract import new, source
from tidings.errors import NotFoundError, StorageError
from tidings.pipeline.writer import WriterThread
from tidings.store.base import Storage, UpsertBatch


def _create(storage: Storage, key: str) -> int:
    return storage.apply_upserts(UpsertBatch(creates=[new(key)]))[key]


def _create_then_fail(storage: Storage, key: str) -> int:
    _create(storage, key)
    storage.update_source("missing", {"fail_count": 1})  # raises NotFoundError
    return 0


class _Hold:
    """Keeps the writer thread inside a first step until released, so that the
    steps asked for meanwhile queue up and are stored as one group."""

    def __init__(self, writer: WriterThread) -> None:
        self.gate = threading.Event()
        self.step = asyncio.ensure_future(writer(self.gate.wait, 5))

    async def release(self) -> None:
        await asyncio.sleep(0.05)  # let the queued steps reach the thread's queue
        self.gate.set()
        assert await self.step is True


@pytest.fixture
async def writer(storage: Storage) -> AsyncIterator[WriterThread]:
    storage.add_source(source())
    thread = WriterThread(storage)
    try:
        yield thread
    finally:
        thread.close()


def _committed(storage: Storage, keys: list[str]) -> set[str]:
    """What another thread (another connection) sees: only committed rows."""
    seen: set[str] = set()
    reader = threading.Thread(target=lambda: seen.update(storage.lookup_items(keys)))
    reader.start()
    reader.join()
    return seen


async def test_queued_steps_share_a_commit_yet_fail_alone(
    storage: Storage, writer: WriterThread
) -> None:
    keys = [f"k{n}" for n in range(10)]
    hold = _Hold(writer)
    await asyncio.sleep(0.05)  # the thread is inside the first step: the rest queue up

    async def step(key: str) -> int:
        if key == "k4":  # fails after its create: only that step is undone
            return await writer(_create_then_fail, storage, key)
        return await writer(_create, storage, key)

    waiting = [asyncio.ensure_future(step(k)) for k in keys]
    await asyncio.sleep(0.05)
    assert _committed(storage, keys) == set()  # nothing ran yet
    await hold.release()
    done = await asyncio.gather(*waiting, return_exceptions=True)
    # every result arrives after its group committed: another connection sees it
    assert _committed(storage, keys) == set(keys) - {"k4"}
    assert isinstance(done[4], NotFoundError)
    ids = [d for d in done if isinstance(d, int)]
    assert ids == sorted(ids) and len(ids) == 9  # stored in the order they were asked


async def test_a_later_step_sees_the_uncommitted_writes_of_an_earlier_one(
    storage: Storage, writer: WriterThread
) -> None:
    hold = _Hold(writer)
    first = asyncio.ensure_future(writer(_create, storage, "same"))
    second = asyncio.ensure_future(writer(storage.lookup_items, ["same"]))
    await hold.release()
    assert (await second)["same"].id == await first


async def test_a_cancelled_step_still_queued_is_dropped(
    storage: Storage, writer: WriterThread
) -> None:
    hold = _Hold(writer)
    dropped = asyncio.ensure_future(writer(_create, storage, "dropped"))
    await asyncio.sleep(0.01)
    dropped.cancel()
    kept = asyncio.ensure_future(writer(_create, storage, "kept"))
    await hold.release()
    await kept
    with pytest.raises(asyncio.CancelledError):
        await dropped
    assert set(storage.lookup_items(["dropped", "kept"])) == {"kept"}


async def test_steps_fail_instead_of_hanging_when_storage_is_gone(
    storage: Storage, writer: WriterThread
) -> None:
    hold = _Hold(writer)
    queued = asyncio.ensure_future(writer(_create, storage, "late"))
    storage.close()  # the held step's commit and the next group's transaction both fail
    hold.gate.set()
    for step in (hold.step, queued):
        with pytest.raises(StorageError):
            await asyncio.wait_for(step, 5)


async def test_pending_counts_unanswered_steps_and_each_answer_is_reported(
    writer: WriterThread, storage: Storage,
) -> None:
    seen: list[int] = []
    writer.on_done = lambda: seen.append(writer.pending)
    gate = threading.Event()
    first = asyncio.ensure_future(writer(gate.wait))
    second = asyncio.ensure_future(writer(_create, storage, "k-pending"))
    await asyncio.sleep(0.05)
    assert writer.pending == 2 and seen == []
    gate.set()
    await asyncio.gather(first, second)
    assert writer.pending == 0 and sorted(seen) == [0, 1]
