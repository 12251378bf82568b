"""Contract: story clustering's storage (R-DEDUP-12) on every backend, and the clustering
job on a PostgreSQL archive giving the stories it gives on SQLite."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

import pgserver
from storage_contract import T0, at, new, source
from test_story_clusters import NOW, seed
from tidings.app import Tidings
from tidings.settings import load_settings
from tidings.store.base import Discovery, Storage, UpsertBatch
from tidings.store.stories import StoredMeaning, StoryLink, StoryMember

BIG = 2**32 - 1  # shingle hashes are unsigned 32-bit: the largest must survive the trip


@pytest.fixture
def items(storage: Storage) -> tuple[Storage, dict[str, int]]:
    """Four items of three sources whose times are not in id order; one a backfill."""
    for sid in ("a", "b", "c"):
        storage.add_source(source(sid, site_url=f"https://{sid}.example/"))
    ids = storage.apply_upserts(UpsertBatch(creates=[
        new("k1", "a", title="First", published_at=at(30)),
        new("k2", "b", title="Second", published_at=at(10), body="x" * 5000),
        new("k3", "c", title="Third", published_at=None, minutes=20),
        new("k4", "a", title="Fourth", published_at=at(40), backfill=True)]))
    return storage, ids


def member(item_id: int, cluster_id: int, minutes: float, **kw: object) -> StoryMember:
    values: dict[str, object] = {"source_id": "", "at": at(minutes)}
    values.update(kw)
    return StoryMember(item_id, cluster_id, **values)  # type: ignore[arg-type]


def test_inputs_by_id_and_by_time(items: tuple[Storage, dict[str, int]]) -> None:
    store, ids = items
    by_id = store.story_inputs(0, 10)
    assert [x.item_id for x in by_id] == sorted(ids.values())
    assert [x.item_id for x in store.story_inputs(ids["k2"], 1)] == [ids["k3"]]
    second = next(x for x in by_id if x.item_id == ids["k2"])
    assert second.body == "x" * 4000 and second.source_id == "b" and second.title == "Second"
    third = next(x for x in by_id if x.item_id == ids["k3"])
    assert third.published_at is None and third.at == third.discovered_at == at(20)
    assert [x.backfill for x in by_id] == [False, False, False, True]
    order = ["k2", "k3", "k1", "k4"]
    assert [x.item_id for x in store.story_inputs_by_time(None, 10)] == [ids[k] for k in order]
    after = store.story_inputs_by_time((at(20), ids["k3"]), 1)
    assert [x.item_id for x in after] == [ids["k1"]]


def test_members_round_trip_with_their_shingles(items: tuple[Storage, dict[str, int]]) -> None:
    store, ids = items
    one, two, three = ids["k1"], ids["k2"], ids["k3"]
    full = member(two, one, 10, similarity=0.75, matched=one, hashes=frozenset({0, 7, BIG}),
                  title=frozenset({3}), exact=4_000_000_000, latin=frozenset({BIG - 1}))
    store.put_story_members([member(one, one, 30), full, member(three, three, 20),
                             member(999_999, 999_999, 5)])  # no such item: ignored
    listed = store.story_members([three, 999_999, one, two, three])
    assert [m.item_id for m in listed] == [one, two, three]  # by id, each once
    got = {m.item_id: m for m in listed}
    assert set(got) == {one, two, three}
    # the member's link is its item's (read back for the exact-page look-up)
    assert got[two].url == store.get_item(two).url
    assert replace(got[two], url=None) == StoryMember(
        two, one, "b", at(10), 0.75, one, frozenset({0, 7, BIG}), frozenset({3}),
        4_000_000_000, frozenset({BIG - 1}))
    assert got[one].matched is None and got[one].hashes == frozenset()
    assert store.story_clusters([one, two, three, 424242]) == {one: one, two: one, three: three}
    assert [m.item_id for m in store.story_window(at(15))] == [three, one]
    assert [m.item_id for m in store.story_window(at(0))] == [two, three, one]
    store.put_story_members([member(three, one, 20, similarity=0.5)])  # replaces
    assert store.story_clusters([three]) == {three: one}
    assert store.story_members([three])[0].similarity == 0.5
    assert store.story_members([]) == [] and store.story_clusters([]) == {}


def test_rows_and_briefs_earliest_first(items: tuple[Storage, dict[str, int]]) -> None:
    store, ids = items
    one, two, three, four = ids["k1"], ids["k2"], ids["k3"], ids["k4"]
    store.put_story_members([member(one, one, 30), member(two, one, 10),
                             member(four, one, 40), member(three, three, 20)])
    rows = store.story_rows([one, three])
    assert [r.item_id for r in rows] == [two, three, one, four]
    second = rows[0]
    assert (second.cluster_id, second.source_id, second.source_title, second.site_url,
            second.title, second.at, second.backfill) == (
        one, "b", "Title of b", "https://b.example/", "Second", at(10), False)
    assert rows[-1].backfill and rows[1].published_at is None
    briefs = store.story_briefs([three, one, one])
    assert list(briefs) == [one]  # a story of one item is no fold
    assert [b.id for b in briefs[one]] == [two, one, four]
    assert store.story_rows([]) == [] and store.story_briefs([]) == {}


def test_briefs_of_a_long_page_list_each_story_once(storage: Storage) -> None:
    """More ids than SQLite takes in one statement: a story whose members fall in two
    parts of the list is still listed once, whole."""
    storage.add_source(source("a"))
    made = storage.apply_upserts(UpsertBatch(creates=[
        new(f"k{n}", "a", title=f"T{n}", published_at=at(n)) for n in range(1000)]))
    first, last = made["k0"], made["k999"]
    storage.put_story_members([member(first, first, 0), member(last, first, 999)])
    assert storage.story_briefs(list(made.values())) == {
        first: [storage.get_item(first).brief(), storage.get_item(last).brief()]}


def test_move_clear_and_links(items: tuple[Storage, dict[str, int]]) -> None:
    store, ids = items
    one, two, three = ids["k1"], ids["k2"], ids["k3"]
    store.put_story_members([member(one, one, 30), member(two, one, 10),
                             member(three, three, 20)])
    assert store.move_story_members([two, three, 424242], three) == 2
    assert store.story_clusters([one, two, three]) == {one: one, two: three, three: three}
    store.add_story_link(StoryLink(three, one, True, at(1)))  # stored as (one, three)
    store.add_story_link(StoryLink(two, one, False, at(0)))
    assert store.story_links() == [StoryLink(one, two, False, at(0)),
                                   StoryLink(one, three, True, at(1))]
    store.add_story_link(StoryLink(one, three, False, at(2)))  # the later edit wins
    assert store.story_links()[-1] == StoryLink(one, three, False, at(2))
    assert store.clear_story_members() == 3
    assert store.story_clusters([one, two, three]) == {}
    assert len(store.story_links()) == 2  # hand edits outlive a rebuild


def test_deleting_an_item_forgets_its_placement(items: tuple[Storage, dict[str, int]]) -> None:
    store, ids = items
    store.put_story_members([member(ids["k1"], ids["k1"], 30)])
    store.delete_item(ids["k1"], at(99))
    assert store.story_members([ids["k1"]]) == []
    store.put_story_members([member(ids["k1"], ids["k1"], 30)])  # ignored, no error
    assert store.story_window(T0 - timedelta(days=1)) == []


def test_meanings_round_trip_and_outlive_a_rebuild(
        items: tuple[Storage, dict[str, int]]) -> None:
    """An item's meaning is written beside its placement, read back with every input
    and placement (so neither a restart nor a rebuild embeds it again), replaced by a
    later one, kept when placements are cleared, and forgotten with its item."""
    store, ids = items
    one, two, three = ids["k1"], ids["k2"], ids["k3"]
    vector = bytes(range(256)) * 4  # 512 float16, every byte value
    first = StoredMeaning("model-a", vector, "f:gpt-5 n:openai c:1")
    store.put_story_members([member(one, one, 30, meaning=first), member(two, one, 10)])
    got = {m.item_id: m.meaning for m in store.story_members([one, two])}
    assert got == {one: first, two: None}
    assert [m.meaning for m in store.story_window(at(0))] == [None, first]
    inputs = {x.item_id: x.meaning for x in store.story_inputs(0, 10)}
    assert inputs[one] == first and inputs[two] is None and inputs[three] is None
    by_time = {x.item_id: x.meaning for x in store.story_inputs_by_time(None, 10)}
    assert by_time == inputs
    second = StoredMeaning("model-b", vector[::-1], "")
    store.put_story_members([member(one, one, 30, meaning=second),
                             member(424242, 424242, 1, meaning=first)])  # no such item
    assert store.story_members([one])[0].meaning == second
    store.put_story_members([member(one, three, 30)])  # a move without one keeps it
    assert store.story_members([one])[0].meaning == second
    store.clear_story_members()
    assert {x.item_id: x.meaning for x in store.story_inputs(0, 10)}[one] == second
    store.delete_item(one, at(99))
    store.put_story_members([member(two, two, 10)])
    assert all(x.meaning is None for x in store.story_inputs(0, 10))


def test_hot_stories_count_live_sources(items: tuple[Storage, dict[str, int]]) -> None:
    store, ids = items
    extra = store.apply_upserts(UpsertBatch(creates=[
        new("k5", "b", title="Fifth", published_at=at(50)),
        new("k6", "c", title="Sixth", published_at=at(60)),
        new("k7", "b", title="Seventh", published_at=at(45))]))
    one, two, three, four = ids["k1"], ids["k2"], ids["k3"], ids["k4"]
    store.put_story_members([
        member(one, one, 30), member(two, one, 10), member(three, one, 20),  # a, b, c
        member(four, four, 40), member(extra["k7"], four, 45),  # a (backfill) + b: one live
        member(extra["k5"], extra["k5"], 50), member(extra["k6"], extra["k5"], 60)])  # b, c
    assert store.hot_stories(at(0), 10) == [one, extra["k5"]]
    assert store.hot_stories(at(0), 1) == [one]
    assert store.hot_stories(at(15), 10) == [extra["k5"], one]  # two sources each; latest first
    assert store.hot_stories(at(55), 10) == []


def test_reprint_pairs_from_discoveries(items: tuple[Storage, dict[str, int]]) -> None:
    store, ids = items
    store.apply_upserts(UpsertBatch(discoveries=[
        Discovery("b", at(1), item_id=ids["k1"]), Discovery("c", at(1), item_id=ids["k1"]),
        Discovery("a", at(2), item_id=ids["k2"])]))
    assert store.reprint_pairs(["a", "b", "c", "a"]) == {("b", "a"), ("c", "a"), ("a", "b")}
    assert store.reprint_pairs(["a", "b"]) == {("b", "a"), ("a", "b")}
    assert store.reprint_pairs(["b", "c"]) == set()
    assert store.reprint_pairs(["a"]) == set()


@pytest.mark.postgres
def test_migrate_carries_the_stories_both_ways(tmp_path: Path) -> None:
    """``tidings migrate`` copies placements (shingles and meanings) and hand edits."""
    from tidings.store.postgres import PostgresStorage
    from tidings.store.postgres._transfer import migrate_archive
    from tidings.store.sqlite import SqliteStorage

    first = tmp_path / "first.sqlite3"
    with SqliteStorage(first) as lite:
        lite.add_source(source("a"))
        made = lite.apply_upserts(UpsertBatch(creates=[new(f"k{n}", "a", title=f"T{n}")
                                                       for n in range(3)]))
        one, two, three = (made[f"k{n}"] for n in range(3))
        lite.put_story_members([member(one, one, 1, hashes=frozenset({1, BIG}),
                                       meaning=StoredMeaning("m", b"\x00\xff" * 512, "f:1")),
                                member(two, one, 2, similarity=0.5, matched=one, exact=9),
                                member(three, three, 3, latin=frozenset({5}))])
        lite.add_story_link(StoryLink(one, three, True, at(4)))
        expected = (lite.story_members([one, two, three]), lite.story_links())
    target = pgserver.schema_url()
    counts = migrate_archive(first, target)
    assert (counts["story_members"], counts["story_links"]) == (3, 1)
    with PostgresStorage(target, pool_size=2) as pg:
        assert (pg.story_members([one, two, three]), pg.story_links()) == expected
    back = tmp_path / "back.sqlite3"
    migrate_archive(target, back)
    with SqliteStorage(back) as again:
        assert (again.story_members([one, two, three]), again.story_links()) == expected


def _open(path: Path, backend: str) -> Tidings:
    env = {"TIDINGS_DATABASE_URL": pgserver.schema_url()} if backend == "postgresql" else {}
    return Tidings.open(load_settings(path, env=env), create=True, clock=lambda: NOW)


def _stories_of(tid: Tidings, ids: dict[str, int]) -> dict[str, object]:
    """What the reader sees, by source name (item ids may differ between backends)."""
    name = {v: k for k, v in ids.items()}
    clusters, briefs = tid.stories.folds(list(ids.values()))
    assert tid.stories.of_items(list(ids.values())) == clusters
    return {"clusters": {name[i]: name[c] for i, c in clusters.items()},
            "folds": {name[c]: [name[b.id] for b in bs] for c, bs in briefs.items()},
            "trending": [(name[s.cluster_id], s.sources, round(s.heat, 6))
                         for s in tid.stories.trending()]}


def _cluster_run(path: Path, backend: str) -> list[dict[str, object]]:
    tid = _open(path, backend)
    try:
        ids = seed(tid)
        assert asyncio.run(tid.stories.cluster_pending()) == 4
        seen = [_stories_of(tid, ids)]
        assert asyncio.run(tid.stories.split(ids["c"])) == 2
        assert asyncio.run(tid.stories.merge(ids["a"], ids["d"])) == 1
        assert asyncio.run(tid.stories.rebuild()) == 4
        seen.append(_stories_of(tid, ids))
        return seen
    finally:
        tid.close()


@pytest.mark.postgres
def test_the_clustering_job_finds_the_same_stories_on_postgresql(tmp_path: Path) -> None:
    on_sqlite = _cluster_run(tmp_path / "lite", "sqlite")
    assert on_sqlite[0]["clusters"] == {"a": "a", "b": "a", "c": "a", "d": "d"}
    assert on_sqlite[1]["clusters"] == {"a": "a", "b": "a", "c": "c", "d": "a"}
    assert _cluster_run(tmp_path / "pg", "postgresql") == on_sqlite
