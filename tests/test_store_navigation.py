"""Contract: the sidebar's counts and "mark a source read" (store.navigation), on
every backend: unread per source, unread of Today (since a time, no backfill),
starred per source, and marking read returns exactly the ids it changed."""

from __future__ import annotations

import pytest

from storage_contract import at, new, source
from tidings.store.base import Storage, UpsertBatch
from tidings.store.navigation import SourceCounts


@pytest.fixture
def ids(storage: Storage) -> dict[str, int]:
    """a: four items (one backfill, one old); b: two; c: none."""
    for sid in ("a", "b", "c"):
        storage.add_source(source(sid))
    return storage.apply_upserts(UpsertBatch(creates=[
        new("a0", "a", minutes=0, title="a0", published_at=at(0)),
        new("a1", "a", minutes=60, title="a1", published_at=at(60)),
        new("a2", "a", minutes=61, title="a2", published_at=at(61), backfill=True),
        new("a3", "a", minutes=62, title="a3", published_at=at(62)),
        new("b0", "b", minutes=5, title="b0", published_at=at(5)),
        new("b1", "b", minutes=70, title="b1", published_at=at(70)),
    ]))


def _counts(storage: Storage) -> dict[str, tuple[int, int, int]]:
    found = storage.source_counts(at(30))
    assert [c.source_id for c in found] == sorted(c.source_id for c in found)
    return {c.source_id: (c.unread, c.today, c.starred) for c in found}


def test_counts_per_source_in_one_answer(storage: Storage, ids: dict[str, int]) -> None:
    assert _counts(storage) == {"a": (4, 2, 0), "b": (2, 1, 0)}
    storage.set_read([ids["a1"], ids["b0"]], True)
    storage.set_starred([ids["a1"], ids["b1"]], True)
    assert _counts(storage) == {"a": (3, 1, 1), "b": (1, 1, 1)}
    storage.set_read([ids["b1"]], True)  # read but starred: still listed
    assert _counts(storage) == {"a": (3, 1, 1), "b": (0, 0, 1)}
    assert storage.source_counts(at(10_000)) == [SourceCounts("a", 3, 0, 1),
                                                 SourceCounts("b", 0, 0, 1)]


def test_marking_sources_read_returns_what_changed(storage: Storage,
                                                   ids: dict[str, int]) -> None:
    storage.set_read([ids["a0"]], True)
    changed = storage.read_sources(["a", "c"])
    assert changed == sorted([ids["a1"], ids["a2"], ids["a3"]])
    assert storage.read_sources(["a"]) == [] and storage.read_sources([]) == []
    many = [f"none{n}" for n in range(2000)]  # more than one statement's parameters
    assert storage.read_sources([*many, "b", *many]) == sorted([ids["b0"], ids["b1"]])
    assert storage.set_read([ids["b0"], ids["b1"]], False) == 2
    assert _counts(storage) == {"b": (2, 1, 0)}
    assert storage.set_read(changed, False) == 3  # the undo: a0 stays read
    assert _counts(storage) == {"a": (3, 2, 0), "b": (2, 1, 0)}
    assert storage.get_item(ids["a0"]).read
