"""The writer: one thread for every write, queued steps committed together, loops never wait."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from storage_contract import new, source
from tidings.errors import NotFoundError, StorageError, TransactionLostError
from tidings.store.base import SourceUpdate, Storage, Unit, UpsertBatch
from tidings.store.sqlite import SqliteStorage
from tidings.store.writer import Writer


def _create(unit: Unit, key: str) -> int:
    return unit.apply_upserts(UpsertBatch(creates=[new(key)]))[key]


def _create_then_fail(unit: Unit, key: str) -> int:
    _create(unit, key)
    unit.update_source("missing", SourceUpdate(fail_count=1))  # raises NotFoundError
    return 0


def _wait(unit: Unit, gate: threading.Event, seconds: float) -> bool:
    return gate.wait(seconds)


class _Hold:
    """Keeps the writer thread inside a first step until released, so that the
    steps asked for meanwhile queue up and are stored as one group."""

    def __init__(self, writer: Writer) -> None:
        self.gate = threading.Event()
        self.step = asyncio.ensure_future(writer(_wait, self.gate, 5))

    async def release(self) -> None:
        await asyncio.sleep(0.05)  # let the queued steps reach the thread's queue
        self.gate.set()
        assert await self.step is True


@pytest.fixture
async def writer(storage: Storage) -> AsyncIterator[Writer]:
    storage.add_source(source())
    w = Writer(storage)
    try:
        yield w
    finally:
        w.close()


def _committed(storage: Storage, keys: list[str]) -> set[str]:
    """What another thread (another connection) sees: only committed rows."""
    seen: set[str] = set()
    reader = threading.Thread(target=lambda: seen.update(storage.lookup_items(keys)))
    reader.start()
    reader.join()
    return seen


async def test_queued_steps_share_a_commit_yet_fail_alone(
    storage: Storage, writer: Writer
) -> None:
    keys = [f"k{n}" for n in range(10)]
    hold = _Hold(writer)
    await asyncio.sleep(0.05)  # the thread is inside the first step: the rest queue up

    async def step(key: str) -> int:
        if key == "k4":  # fails after its create: only that step is undone
            return await writer(_create_then_fail, key)
        return await writer(_create, key)

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
    storage: Storage, writer: Writer
) -> None:
    hold = _Hold(writer)
    first = asyncio.ensure_future(writer(_create, "same"))
    second = asyncio.ensure_future(writer(lambda unit: unit.lookup_items(["same"])))
    await hold.release()
    assert (await second)["same"].id == await first


async def test_a_cancelled_step_still_queued_is_dropped(
    storage: Storage, writer: Writer
) -> None:
    hold = _Hold(writer)
    dropped = asyncio.ensure_future(writer(_create, "dropped"))
    await asyncio.sleep(0.01)
    dropped.cancel()
    kept = asyncio.ensure_future(writer(_create, "kept"))
    await hold.release()
    await kept
    with pytest.raises(asyncio.CancelledError):
        await dropped
    assert set(storage.lookup_items(["dropped", "kept"])) == {"kept"}


async def test_steps_fail_instead_of_hanging_when_storage_is_gone(
    storage: Storage, writer: Writer
) -> None:
    hold = _Hold(writer)
    queued = asyncio.ensure_future(writer(_create, "late"))
    storage.close()  # the held step's commit and the next group's transaction both fail
    hold.gate.set()
    for step in (hold.step, queued):
        with pytest.raises(StorageError):
            await asyncio.wait_for(step, 5)


async def test_pending_counts_unanswered_steps(writer: Writer) -> None:
    gate = threading.Event()
    first = asyncio.ensure_future(writer(_wait, gate, 5))
    second = asyncio.ensure_future(writer(_create, "k-pending"))
    await asyncio.sleep(0.05)
    assert writer.pending == 2
    gate.set()
    await asyncio.gather(first, second)
    assert writer.pending == 0


async def test_the_loop_keeps_running_while_a_step_holds_the_writer(writer: Writer) -> None:
    """A write that takes a second never stalls the event loop that asked for it."""
    gate = threading.Event()
    held = asyncio.ensure_future(writer(_wait, gate, 5))
    ticks = 0
    started = time.perf_counter()
    while time.perf_counter() - started < 0.3:
        await asyncio.sleep(0.01)
        ticks += 1
    assert ticks >= 15  # the loop turned ~every 10 ms while the writer was busy
    gate.set()
    assert await held is True


def test_plain_code_waits_for_its_step_but_a_coroutine_may_not(
    storage: Storage, writer: Writer
) -> None:
    assert writer.call(_create, "sync") > 0
    assert set(storage.lookup_items(["sync"])) == {"sync"}

    async def misuse() -> None:
        writer.call(_create, "from-a-loop")

    with pytest.raises(RuntimeError, match="await the writer"):
        asyncio.run(misuse())


async def test_a_closed_writer_refuses_new_steps(writer: Writer) -> None:
    writer.close()
    with pytest.raises(StorageError, match="closed"):
        await writer(_create, "late")


def _no_room_to_grow(storage: SqliteStorage) -> None:
    """The database file may not grow (as on a full disk): a write that needs a new
    page fails with SQLITE_FULL, and SQLite rolls back the whole transaction."""
    conn = storage._db._writer
    (pages,) = conn.execute("PRAGMA page_count").fetchone()
    conn.execute(f"PRAGMA max_page_count = {pages}")


def _create_large(unit: Unit, key: str) -> int:
    return unit.apply_upserts(UpsertBatch(creates=[new(key, body="x" * 500_000)]))[key]


async def test_a_transaction_rolled_back_whole_fails_its_group_and_runs_no_more_steps(
    tmp_path: Path
) -> None:
    storage = SqliteStorage(tmp_path / "full.sqlite3")
    storage.add_source(source())
    _no_room_to_grow(storage)
    writer = Writer(storage)
    ran: list[str] = []

    def create(unit: Unit, key: str) -> int:
        ran.append(key)
        return _create(unit, key)

    try:
        hold = _Hold(writer)
        await asyncio.sleep(0.05)
        before = asyncio.ensure_future(writer(create, "before"))
        full = asyncio.ensure_future(writer(_create_large, "large"))
        after = asyncio.ensure_future(writer(create, "after"))
        await hold.release()
        done = await asyncio.gather(before, full, after, return_exceptions=True)
    finally:
        writer.close()
    try:
        # nothing of the group is stored, and no step of it is reported done
        assert _committed(storage, ["before", "large", "after"]) == set()
        assert all(isinstance(d, TransactionLostError) for d in done), done
        assert ran == ["before"]  # the step after the loss never ran
    finally:
        storage.close()


def test_a_unit_refuses_writes_after_its_transaction_was_rolled_back(tmp_path: Path) -> None:
    storage = SqliteStorage(tmp_path / "full.sqlite3")
    storage.add_source(source())
    _no_room_to_grow(storage)
    try:
        with pytest.raises(TransactionLostError), storage.write() as unit:
            _create(unit, "before")
            with pytest.raises(TransactionLostError, match="disk is full"):
                _create_large(unit, "large")
            # without the guard this would begin a transaction of its own and commit it
            unit.add_source(source("other"))
        assert storage.list_sources() == [storage.get_source("feed")]
        assert storage.lookup_items(["before", "large"]) == {}
    finally:
        storage.close()


async def test_a_step_writing_through_the_storage_fails_instead_of_hanging(
    storage: Storage, writer: Writer
) -> None:
    def wrong(unit: Unit) -> None:
        storage.update_source("feed", SourceUpdate(priority=3))  # not the unit's

    with pytest.raises(StorageError, match="a write inside a write"):
        await asyncio.wait_for(writer(wrong), 5)
    # the writer thread is free: the next step runs, and the refused write left nothing
    assert await asyncio.wait_for(writer(lambda unit: unit.get_source("feed").priority), 5) == 0


def test_a_unit_refuses_a_write_through_its_storage(storage: Storage) -> None:
    storage.add_source(source())
    with pytest.raises(StorageError, match="a write inside a write"), storage.write() as unit:
        unit.update_source("feed", SourceUpdate(priority=1))
        storage.update_source("feed", SourceUpdate(priority=2))
    assert storage.get_source("feed").priority == 0  # the unit was rolled back
    storage.update_source("feed", SourceUpdate(priority=4))  # and the lock is free again
    assert storage.get_source("feed").priority == 4
