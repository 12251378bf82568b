"""Story placement outside the writer (issue 28): a batch is read and placed without
writing anything, and stored by one write step only while nothing moved under it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from storage_contract import T0, at, new, source
from tidings.pipeline.stories import EDITS_MARK, STORY_MARK, Clusterer
from tidings.store.base import Storage, UpsertBatch

WIRE = ("Rust 1.85 released with the Rust 2024 edition and async closures",
        "Rust 1.85 stabilizes the Rust 2024 edition and async closures today")


@pytest.fixture
def archive(storage: Storage) -> Iterator[Storage]:
    for sid in ("a", "b", "c"):
        storage.add_source(source(sid))
    storage.apply_upserts(UpsertBatch(creates=[
        new("a1", "a", minutes=1, title=WIRE[0], body=f"<p>{WIRE[0]}.</p>", published_at=at(1)),
        new("b1", "b", minutes=2, title=WIRE[1], body=f"<p>{WIRE[1]}.</p>", published_at=at(2)),
        new("c1", "c", minutes=3, title="Harbour fire closes the ferry terminal overnight",
            body="<p>The district office said the ferry stops.</p>", published_at=at(3))]))
    yield storage


def _clusters(store: Storage) -> dict[str, int]:
    ids = {k: store.get_item_by_key(k).id for k in ("a1", "b1", "c1")}
    found = store.story_clusters(list(ids.values()))
    return {k: found[i] for k, i in ids.items() if i in found}


def test_a_batch_is_placed_without_a_write_and_stored_by_one(archive: Storage) -> None:
    clusterer = Clusterer()
    batch = clusterer.prepare(archive, T0)
    assert batch is not None and len(batch.members) == 3
    assert archive.get_mark(STORY_MARK) is None and _clusters(archive) == {}
    assert clusterer.index is None  # lent to the batch until it is stored
    with archive.write() as unit:
        assert clusterer.commit(unit, batch) == 3
    placed = _clusters(archive)
    assert placed["a1"] == placed["b1"] != placed["c1"]
    assert clusterer.index is batch.index and clusterer.prepare(archive, T0) is None


def test_a_batch_another_process_stored_first_is_dropped(archive: Storage) -> None:
    mine, theirs = Clusterer(), Clusterer()
    batch = mine.prepare(archive, T0)
    assert batch is not None
    with archive.write() as unit:
        assert theirs.step(unit, T0) == 3
        assert mine.commit(unit, batch) == 0  # the bookmark moved: not stored twice
    assert mine.index is None  # placed against what is not there: warms again
    assert len(archive.story_members([archive.get_item_by_key("a1").id])) == 1


def test_a_hand_edit_between_placing_and_storing_drops_the_batch(archive: Storage) -> None:
    clusterer = Clusterer()
    batch = clusterer.prepare(archive, T0)
    assert batch is not None
    with archive.write() as unit:  # a split or merge in the reader meanwhile
        unit.swap_mark(EDITS_MARK, None, "1")
        assert clusterer.commit(unit, batch) == 0
    assert _clusters(archive) == {}
    with archive.write() as unit:
        assert clusterer.step(unit, T0) == 3  # warmed again, then placed
    assert archive.get_mark(EDITS_MARK) == "1" and len(_clusters(archive)) == 3
