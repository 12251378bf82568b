"""The bulk queries behind scheduling and operations (tidings.store.ops), on real SQLite."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tidings.model import BodyState, RunCounts, RunOutcome, Source, SourceKind
from tidings.schedule import plan
from tidings.store.base import Discovery, ItemFields, NewItem, UpsertBatch
from tidings.store.ops import ReprintEdge
from tidings.store.sqlite import SqliteStorage

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStorage]:
    with SqliteStorage(tmp_path / "t.sqlite3") as s:
        yield s


def add(store: SqliteStorage, sid: str, **kw: object) -> Source:
    return store.add_source(Source(id=sid, kind=SourceKind("rss"), url=f"https://{sid}.example/f",
                                   created_at=NOW, **kw))  # type: ignore[arg-type]


def item(key: str, sid: str, at: datetime, *, fp: str = "", backfill: bool = False,
         published: datetime | None = None) -> NewItem:
    fields = ItemFields(title=key, url=f"https://x.example/{key}", summary="", body=None,
                        body_state=BodyState.PENDING, published_at=published,
                        content_hash=f"h-{key}", title_fp=fp or f"fp-{key}")
    return NewItem(key=key, source_id=sid, fields=fields, discovered_at=at, backfill=backfill)


def test_new_item_counts_buckets_days_oldest_first(store: SqliteStorage) -> None:
    add(store, "a")
    add(store, "b")
    store.apply_upserts(UpsertBatch(creates=[
        item("a1", "a", NOW - timedelta(hours=1)),
        item("a2", "a", NOW - timedelta(hours=23, minutes=59)),
        item("a3", "a", NOW - timedelta(days=1, minutes=1)),
        item("a4", "a", NOW - timedelta(days=6, hours=23)),
        item("a5", "a", NOW - timedelta(days=8)),  # outside the window
        item("a6", "a", NOW - timedelta(hours=2), backfill=True),  # history, not output
        item("b1", "b", NOW - timedelta(days=3, hours=1)),
        item("b2", "b", NOW),  # the window ends before now
    ]))
    counts = store.new_item_counts(NOW, 7)
    assert counts == {"a": (1, 0, 0, 0, 0, 1, 2), "b": (0, 0, 0, 1, 0, 0, 0)}


def test_run_totals_and_last_runs(store: SqliteStorage) -> None:
    add(store, "a")
    add(store, "b")
    add(store, "idle")
    for minutes, counts in [
        (50, RunCounts(RunOutcome.OK, found=10, filtered=2, created=3)),
        (40, RunCounts(RunOutcome.FAILED, error="HTTP 500")),
        (30, RunCounts(RunOutcome.OK, found=10, filtered=8, created=1)),
    ]:
        run = store.start_run("a", NOW - timedelta(minutes=minutes))
        store.finish_run(run, NOW - timedelta(minutes=minutes - 1), counts)
    old = store.start_run("a", NOW - timedelta(days=9))
    store.finish_run(old, NOW - timedelta(days=9), RunCounts(RunOutcome.OK, found=99))
    store.start_run("b", NOW - timedelta(minutes=5))  # still running
    totals = store.run_totals(NOW - timedelta(days=7))
    assert set(totals) == {"a"}
    a = totals["a"]
    assert (a.runs, a.failed, a.found, a.filtered, a.created) == (3, 1, 20, 10, 4)
    last = store.last_runs()
    assert set(last) == {"a", "b"}
    assert last["a"].filtered == 8
    assert last["b"].outcome is RunOutcome.RUNNING


def test_diversity_counts_distinct_title_prints(store: SqliteStorage) -> None:
    add(store, "a")
    store.apply_upserts(UpsertBatch(creates=[
        item("a1", "a", NOW, fp="same"), item("a2", "a", NOW, fp="same"),
        item("a3", "a", NOW, fp="other"), item("a4", "a", NOW - timedelta(days=40)),
    ]))
    d = store.diversity(NOW - timedelta(days=30))["a"]
    assert (d.items, d.distinct_titles) == (3, 2)


def test_reprint_edges_by_title_and_by_listing(store: SqliteStorage) -> None:
    for sid in ("wire", "paper", "blog"):
        add(store, sid)
    t = NOW - timedelta(days=2)
    created = store.apply_upserts(UpsertBatch(creates=[
        item("w1", "wire", t, fp="story1", published=t),
        item("w2", "wire", t, fp="story2", published=t),
        item("p1", "paper", t + timedelta(hours=1), fp="story1", published=t + timedelta(hours=1)),
        item("p2", "paper", t + timedelta(hours=1), fp="story2"),
        item("b1", "blog", t, fp="own", published=t),
    ]))
    store.apply_upserts(UpsertBatch(discoveries=[
        Discovery("blog", t + timedelta(hours=2), item_id=created["w1"]),
        Discovery("wire", t + timedelta(hours=3), item_id=created["w2"]),  # the owner itself
    ]))
    edges = store.reprint_edges(NOW - timedelta(days=30))
    assert edges == [ReprintEdge("wire", "paper", "title", 2),
                     ReprintEdge("wire", "blog", "listing", 1)]
    assert store.reprint_edges(NOW) == []


def test_new_item_ids_skip_backfill(store: SqliteStorage) -> None:
    add(store, "a")
    assert store.max_item_id() == 0
    ids = store.apply_upserts(UpsertBatch(creates=[
        item("n1", "a", NOW), item("old", "a", NOW, backfill=True), item("n2", "a", NOW)]))
    assert store.new_item_ids(0, 10) == [ids["n1"], ids["n2"]]
    assert store.new_item_ids(ids["n1"], 10) == [ids["n2"]]
    assert store.new_item_ids(0, 1) == [ids["n1"]]
    assert store.max_item_id() == max(ids.values())


def test_marks_swap_only_from_the_expected_value(store: SqliteStorage) -> None:
    assert store.get_mark("weekly") is None
    assert store.swap_mark("weekly", None, "2026-W10")
    assert not store.swap_mark("weekly", None, "2026-W10")  # the second runner loses
    assert not store.swap_mark("weekly", "2026-W09", "2026-W11")
    assert store.swap_mark("weekly", "2026-W10", "2026-W11")
    assert store.get_mark("weekly") == "2026-W11"


def test_set_intervals_in_one_call(store: SqliteStorage) -> None:
    add(store, "a")
    add(store, "b")
    assert store.set_intervals({"a": 15, "b": 60, "gone": 30}) == 2
    assert store.get_source("a").interval_min == 15
    assert store.get_source("b").interval_min == 60


def test_release_sources_abandons_runs_and_lifts_the_lease(store: SqliteStorage) -> None:
    add(store, "a", next_fetch_at=NOW - timedelta(minutes=1))
    add(store, "b", next_fetch_at=NOW - timedelta(minutes=1))
    claimed = store.claim_due_sources(NOW, 10, NOW + timedelta(minutes=10))
    assert [s.id for s in claimed] == ["a", "b"]
    run_a = store.start_run("a", NOW)
    store.start_run("b", NOW)
    later = NOW + timedelta(seconds=30)
    assert store.release_sources(["a"], later) == 1
    assert store.get_source("a").next_fetch_at == later
    assert store.get_source("b").next_fetch_at == NOW + timedelta(minutes=10)
    runs = {r.id: r for r in store.list_runs(limit=10)}
    assert runs[run_a].outcome is RunOutcome.ABANDONED
    assert store.claim_due_sources(later, 10, later + timedelta(minutes=10))[0].id == "a"
    retry = later + timedelta(minutes=10)
    assert store.release_sources(["b"], later, due_at=retry) == 1
    assert store.get_source("b").next_fetch_at == retry
    assert {r.finished_at for r in store.list_runs(limit=10)} == {later}


def test_abandon_stale_runs_leaves_live_ones(store: SqliteStorage) -> None:
    add(store, "a")
    stale = store.start_run("a", NOW - timedelta(minutes=30))
    live = store.start_run("a", NOW - timedelta(minutes=1))
    assert store.abandon_stale_runs(NOW - timedelta(minutes=10), NOW) == 1
    runs = {r.id: r.outcome for r in store.list_runs("a")}
    assert runs == {stale: RunOutcome.ABANDONED, live: RunOutcome.RUNNING}


def test_claim_agrees_with_the_pure_pick(store: SqliteStorage) -> None:
    """The SQL pick takes exactly the sources plan.pick_due names (the 40 cap, priority)."""
    sources = []
    for i in range(60):
        due = NOW - timedelta(minutes=(i * 7) % 50) + timedelta(minutes=5 if i % 9 == 0 else 0)
        sources.append(add(store, f"s{i:02d}", next_fetch_at=due, priority=1 if i % 11 == 0 else 0,
                           muted_reason="410 Gone" if i == 13 else None))
    sources.append(add(store, "new"))  # never fetched: the most overdue
    expected = plan.pick_due(sources, NOW)
    claimed = store.claim_due_sources(NOW, plan.MAX_PER_TICK, NOW + timedelta(minutes=10))
    assert [s.id for s in claimed] == [s.id for s in expected]
    assert len(claimed) == 40
    assert "s13" not in {s.id for s in claimed}
