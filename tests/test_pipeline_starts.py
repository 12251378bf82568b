"""Runs that start together get their rows from one writer step (pipeline/starts.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tidings.errors import NotFoundError
from tidings.model import RunOutcome, Source, SourceKind
from tidings.pipeline.starts import RunStarts
from tidings.pipeline.writer import WriterThread
from tidings.settings import load_settings
from tidings.store import open_storage
from tidings.store.base import Storage

T0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Storage]:
    s = open_storage(load_settings(tmp_path, env={}))
    for n in range(5):
        s.add_source(Source(id=f"s{n}", kind=SourceKind.RSS, url=f"https://h{n}.example/feed"))
    yield s
    s.close()


class CountingWriter:
    """A real writer thread that also records which storage calls it was given."""

    def __init__(self, store: Storage) -> None:
        self.inner = WriterThread(store)
        self.calls: list[str] = []

    async def __call__(self, func: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        self.calls.append(func.__name__)
        return await self.inner(func, *args, **kwargs)


async def test_runs_asked_in_one_pass_are_started_by_one_step(store: Storage) -> None:
    writer = CountingWriter(store)
    starts = RunStarts(store, writer)
    try:
        ids = await asyncio.gather(*(starts(f"s{n}", T0 + timedelta(seconds=n))
                                     for n in range(5)))
        later = await starts("s0", T0 + timedelta(minutes=1))
    finally:
        writer.inner.close()
    assert writer.calls == ["start_runs", "start_runs"]
    runs = {r.id: r for r in store.list_runs(limit=10)}
    assert [(runs[i].source_id, runs[i].started_at) for i in ids] == [
        (f"s{n}", T0 + timedelta(seconds=n)) for n in range(5)]
    assert runs[later].outcome is RunOutcome.RUNNING and later > max(ids)


async def test_a_source_gone_since_the_claim_fails_only_its_own_start(store: Storage) -> None:
    store.delete_source("s3")
    writer = CountingWriter(store)
    starts = RunStarts(store, writer)
    try:
        got = await asyncio.gather(*(starts(f"s{n}", T0) for n in range(5)),
                                   return_exceptions=True)
    finally:
        writer.inner.close()
    assert isinstance(got[3], NotFoundError)
    assert all(isinstance(g, int) for n, g in enumerate(got) if n != 3)
    assert writer.calls == ["start_runs"] + ["start_run"] * 5
    assert len(store.list_runs(limit=10)) == 4


async def test_a_waiter_cancelled_before_the_answer_leaves_the_others_alone(
    store: Storage,
) -> None:
    writer = CountingWriter(store)
    starts = RunStarts(store, writer)
    try:
        first = asyncio.ensure_future(starts("s0", T0))
        second = asyncio.ensure_future(starts("s1", T0))
        await asyncio.sleep(0)
        first.cancel()
        assert isinstance(await second, int)
    finally:
        writer.inner.close()
    assert first.cancelled()
