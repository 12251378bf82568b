"""Contract: sources, the scheduler's claim, fetch runs and the figures built on them."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from storage_contract import T0, at, new, source
from tidings.errors import ConfigError, NotFoundError
from tidings.model import Health, RunCounts, RunOutcome, Visibility
from tidings.store.base import SourceUpdate, Storage, UpsertBatch


def test_add_get_list_find(storage: Storage) -> None:
    added = storage.add_source(source("b", config={"n": 1}, created_at=T0))
    storage.add_source(source("a"))
    assert added.config == {"n": 1} and added.created_at == T0
    assert storage.get_source("b") == added
    assert [s.id for s in storage.list_sources()] == ["a", "b"]
    assert storage.find_source_by_url("https://b.example/feed") == added
    assert storage.find_source_by_url("https://nope.example/") is None
    assert storage.get_source("a").created_at is not None


def test_duplicate_id_or_url_is_a_config_error(storage: Storage) -> None:
    storage.add_source(source("a"))
    with pytest.raises(ConfigError, match="id"):
        storage.add_source(source("a"))
    with pytest.raises(ConfigError, match="URL"):
        storage.add_source(source("b", url="https://a.example/feed"))


def test_update_source(storage: Storage) -> None:
    storage.add_source(source("a"))
    storage.add_source(source("b"))
    updated = storage.update_source("a", SourceUpdate(
        cursor={"etag": "x"}, health=Health.FAILING, fail_count=5, next_fetch_at=at(30)))
    assert updated.cursor == {"etag": "x"} and updated.health is Health.FAILING
    assert storage.get_source("a").next_fetch_at == at(30)
    assert storage.update_source("a", SourceUpdate()) == updated  # nothing to change
    with pytest.raises(ConfigError, match="already used"):
        storage.update_source("a", SourceUpdate(url="https://b.example/feed"))
    with pytest.raises(ConfigError):
        storage.update_source("a", SourceUpdate(visibility="nonsense"))  # type: ignore[arg-type]
    with pytest.raises(NotFoundError):
        storage.update_source("zz", SourceUpdate(title="x"))
    assert storage.get_source("a").fail_count == 5
    cleared = storage.update_source("a", SourceUpdate(next_fetch_at=None, last_error=None))
    assert cleared.next_fetch_at is None and cleared.fail_count == 5


def test_change_source_writes_what_update_source_writes(storage: Storage) -> None:
    storage.add_source(source("a"))
    storage.add_source(source("b"))
    change = SourceUpdate(cursor={"since_id": "9"}, interval_min=120, next_fetch_at=at(120))
    storage.change_source("a", change)
    a, b = storage.get_source("a"), storage.update_source("b", change)
    assert (a.cursor, a.interval_min, a.next_fetch_at) == ({"since_id": "9"}, 120, at(120))
    assert (b.cursor, b.interval_min, b.next_fetch_at) == (a.cursor, 120, at(120))
    storage.change_source("a", SourceUpdate())  # nothing to change
    with pytest.raises(NotFoundError):
        storage.change_source("zz", SourceUpdate(title="x"))
    with pytest.raises(NotFoundError):
        storage.change_source("zz", SourceUpdate())
    with pytest.raises(ConfigError, match="already used"):
        storage.change_source("a", SourceUpdate(url=storage.get_source("b").url))


def test_folder_names_are_cleaned_the_same_way_by_every_call(storage: Storage) -> None:
    """"News " and "News" are one folder whether a source names it or the folder
    calls do, and a blank folder is no folder."""
    assert storage.add_source(source("a", folder="News ")).folder == "News"
    storage.add_source(source("b", folder="News"))
    storage.add_source(source("c", folder="  \u3000 "))
    assert storage.update_source("c", SourceUpdate(folder=" Tech \t blogs")).folder \
        == "Tech blogs"
    storage.add_folder("Tech  blogs ")
    assert storage.list_folders() == ["News", "Tech blogs"]
    assert storage.update_source("c", SourceUpdate(folder=" ")).folder is None
    assert storage.rename_folder("News", " Daily  news") == 2
    assert {s.id: s.folder for s in storage.list_sources()} == {
        "a": "Daily news", "b": "Daily news", "c": None}
    assert storage.list_folders() == ["Daily news", "Tech blogs"]


def test_folders(storage: Storage) -> None:
    storage.add_source(source("a", folder="AI labs"))
    storage.add_source(source("b"))
    storage.add_folder("Later")
    assert storage.list_folders() == ["AI labs", "Later"]
    storage.update_source("b", SourceUpdate(folder="News"))
    assert storage.rename_folder("AI labs", "Labs") == 1
    assert storage.get_source("a").folder == "Labs"
    assert storage.rename_folder("News", "Labs") == 2  # merged into the existing folder
    assert storage.list_folders() == ["Labs", "Later"]
    assert storage.delete_folder("Labs") == 2
    assert storage.get_source("b").folder is None and storage.list_folders() == ["Later"]
    with pytest.raises(NotFoundError):
        storage.rename_folder("nope", "x")
    with pytest.raises(ConfigError, match="name"):
        storage.add_folder("  ")


def test_delete_source_keeps_items_and_drops_runs(storage: Storage) -> None:
    storage.add_source(source("feed"))
    storage.start_run("feed", T0)
    storage.apply_upserts(UpsertBatch(creates=[new("k1")]))
    storage.delete_source("feed")
    with pytest.raises(NotFoundError):
        storage.get_source("feed")
    with pytest.raises(NotFoundError):
        storage.delete_source("feed")
    assert storage.list_runs() == []
    item = storage.get_item_by_key("k1")
    assert item.source_id == "feed" and item.source_title == ""


def test_claim_due_order_priority_muted_and_lease(storage: Storage) -> None:
    storage.add_source(source("late", next_fetch_at=at(-60)))
    storage.add_source(source("never"))
    storage.add_source(source("soon", next_fetch_at=at(-1)))
    storage.add_source(source("future", next_fetch_at=at(10)))
    storage.add_source(source("muted", next_fetch_at=at(-100), muted_reason="410 Gone"))
    storage.add_source(source("vip", next_fetch_at=at(-1), priority=5))
    claimed = storage.claim_due_sources(T0, 10, at(5))
    assert [s.id for s in claimed] == ["never", "late", "vip", "soon"]
    assert all(s.next_fetch_at == at(5) for s in claimed)
    assert storage.claim_due_sources(T0, 10, at(5)) == []
    assert storage.get_source("future").next_fetch_at == at(10)


def test_claim_prefers_priority_when_more_are_due_than_the_limit(storage: Storage) -> None:
    storage.add_source(source("old", next_fetch_at=at(-60)))
    storage.add_source(source("vip", next_fetch_at=at(-1), priority=1))
    assert [s.id for s in storage.claim_due_sources(T0, 1, at(5))] == ["vip"]


def test_claim_only_named_sources_due_or_not(storage: Storage) -> None:
    storage.add_source(source("a", next_fetch_at=at(60)))
    storage.add_source(source("b"))
    assert [s.id for s in storage.claim_due_sources(T0, 10, at(5), only=["a"])] == ["a"]
    assert storage.claim_due_sources(T0, 10, at(5), only=[]) == []
    assert storage.claim_due_sources(T0, 0, at(5)) == []


def test_claim_by_name_skips_a_source_running_elsewhere(storage: Storage) -> None:
    """`tidings collect SOURCE` while `serve` runs that source must not run it twice."""
    storage.add_source(source("a"))
    storage.add_source(source("b"))
    run = storage.start_run("a", T0)
    assert [s.id for s in storage.claim_due_sources(at(1), 10, at(11), only=["a", "b"])] == ["b"]
    storage.finish_run(run, at(2), RunCounts(RunOutcome.OK))
    assert [s.id for s in storage.claim_due_sources(at(3), 10, at(13), only=["a"])] == ["a"]
    storage.start_run("b", T0)  # left running by a process that died long ago
    assert [s.id for s in storage.claim_due_sources(at(30), 10, at(40), only=["b"])] == ["b"]


def test_two_threads_never_claim_one_source_twice(storage: Storage) -> None:
    for n in range(200):
        storage.add_source(source(f"s{n:03d}", next_fetch_at=at(-n)))
    got: list[list[str]] = [[], []]
    barrier = threading.Barrier(2)

    def claim(slot: int) -> None:
        barrier.wait()
        while batch := storage.claim_due_sources(T0, 7, at(30)):
            got[slot].extend(s.id for s in batch)

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not set(got[0]) & set(got[1])
    assert len(got[0]) + len(got[1]) == 200


def test_runs_start_finish_list_abandon(storage: Storage) -> None:
    storage.add_source(source("a"))
    first = storage.start_run("a", T0)
    second = storage.start_run("a", at(1))
    counts = RunCounts(outcome=RunOutcome.OK, found=9, created=3, revised=1, rediscovered=2,
                       filtered=1, pages=2, backlog=4, reused=1, http_status=200, bytes=123,
                       warnings=("slow",))
    storage.finish_run(first, at(2), counts)
    runs = storage.list_runs("a")
    assert [r.id for r in runs] == [second, first]
    done = runs[1]
    assert (done.outcome, done.created, done.warnings, done.finished_at) == (
        RunOutcome.OK, 3, ("slow",), at(2))
    assert storage.release_sources(["a"], at(3)) == 1
    assert storage.list_runs(limit=1)[0].outcome is RunOutcome.ABANDONED
    with pytest.raises(NotFoundError):
        storage.start_run("zz", T0)
    with pytest.raises(NotFoundError):
        storage.finish_run(999, T0, counts)


def test_runs_started_together_get_ids_in_order(storage: Storage) -> None:
    for sid in ("a", "b"):
        storage.add_source(source(sid))
    before = storage.start_run("a", T0)
    ids = storage.start_runs([("b", at(1)), ("a", at(2)), ("b", at(3))])
    assert len(set(ids)) == 3 and min(ids) > before
    runs = {r.id: r for r in storage.list_runs(limit=10)}
    assert [(runs[i].source_id, runs[i].started_at, runs[i].outcome) for i in ids] == [
        ("b", at(1), RunOutcome.RUNNING), ("a", at(2), RunOutcome.RUNNING),
        ("b", at(3), RunOutcome.RUNNING)]
    assert storage.start_runs([]) == []
    with pytest.raises(NotFoundError, match="'zz'"):
        storage.start_runs([("a", at(4)), ("zz", at(4))])
    assert len(storage.list_runs(limit=10)) == 4  # the failed call started nothing
    assert storage.start_run("a", at(5)) > max(ids)


def test_source_stats(storage: Storage) -> None:
    storage.add_source(source("a"))
    storage.apply_upserts(UpsertBatch(creates=[
        new("k1", "a", 0), new("k2", "a", -60 * 24 - 5), new("k3", "a", -60 * 24 * 8)]))
    run = storage.start_run("a", T0)
    stats = storage.source_stats("a", at(1))
    assert stats.items_total == 3
    assert stats.items_per_day == (0, 0, 0, 0, 0, 1, 1)
    assert stats.last_run is not None and stats.last_run.id == run
    with pytest.raises(NotFoundError):
        storage.source_stats("zz", T0)


def test_archive_stats_last_round(storage: Storage) -> None:
    empty = storage.archive_stats()
    assert empty.items == 0 and empty.last_round_started is None
    for sid in ("a", "b", "c"):
        storage.add_source(source(sid, last_success_at=at(-5)))
    storage.update_source("c", SourceUpdate(health=Health.FAILING, last_success_at=at(-500),
                                            visibility=Visibility.ISOLATED))
    old = storage.start_run("a", at(-60))  # an earlier round
    storage.finish_run(old, at(-59), RunCounts(outcome=RunOutcome.OK, created=50))
    for sid, start, outcome, created in (("a", -8, RunOutcome.OK, 2), ("b", -1, RunOutcome.FAILED,
                                         0), ("c", 0, RunOutcome.NOT_MODIFIED, 0)):
        run = storage.start_run(sid, at(start))
        storage.finish_run(run, at(start + 1), RunCounts(outcome=outcome, created=created))
    storage.apply_upserts(UpsertBatch(creates=[new("k1"), new("k2", backfill=True)]))
    storage.set_read([storage.get_item_by_key("k1").id], True)
    stats = storage.archive_stats()
    assert stats.sources_by_health == {"ok": 2, "failing": 1}
    assert (stats.items, stats.items_backfill, stats.items_unread) == (2, 1, 1)
    assert stats.last_round_started == at(-8)
    assert (stats.last_round_sources, stats.last_round_ok, stats.last_round_new_items) == (3, 2, 2)
    assert stats.oldest_success_at == at(-500)
    assert T0 - stats.last_round_started < timedelta(minutes=10)
