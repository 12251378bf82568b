"""Silent-failure warnings, diversity, the reprint graph and the weekly report (R-OPS-1..3)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tidings.model import (
    BodyState,
    FetchRun,
    Health,
    RunCounts,
    RunOutcome,
    Source,
    SourceKind,
)
from tidings.schedule import ops
from tidings.store.base import Discovery, ItemFields, NewItem, UpsertBatch
from tidings.store.ops import RunTotals
from tidings.store.sqlite import SqliteStorage

NOW = datetime(2026, 3, 9, 9, 0, tzinfo=UTC)


def totals(found: int, filtered: int) -> RunTotals:
    return RunTotals("s", runs=5, failed=0, found=found, filtered=filtered, created=1)


def run(*warnings: str) -> FetchRun:
    return FetchRun(id=1, source_id="s", started_at=NOW, outcome=RunOutcome.OK,
                    warnings=warnings)


# ------------------------------------------------------------ pure warning rules


def test_a_drop_of_more_than_80_percent_day_over_day_warns() -> None:
    assert ops.source_warnings([0, 0, 0, 0, 0, 10, 1], None, None) == (
        "new items fell from 10 to 1 in the last 24 h",)
    assert ops.source_warnings([10, 2], None, None) == ()  # exactly 80%: not more
    assert ops.source_warnings([4, 0], None, None) == ()  # too few to mean anything
    assert ops.source_warnings([5, 0], None, None) != ()
    assert ops.source_warnings([3], None, None) == ()


def test_a_week_of_mostly_filtered_entries_warns() -> None:
    assert ops.source_warnings([], totals(100, 51), None) == (
        "51% of the entries seen this week were filtered out",)
    assert ops.source_warnings([], totals(100, 50), None) == ()
    assert ops.source_warnings([], totals(9, 9), None) == ()  # too few entries


def test_the_last_runs_own_warnings_are_carried() -> None:
    out = ops.source_warnings([], None, run("12 of 20 entries have no title or no link"))
    assert out == ("last run: 12 of 20 entries have no title or no link",)


# ----------------------------------------------------------- with real storage


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStorage]:
    with SqliteStorage(tmp_path / "ops.sqlite3") as s:
        yield s


def add(store: SqliteStorage, sid: str, **kw: object) -> None:
    store.add_source(Source(id=sid, kind=SourceKind("rss"), url=f"https://{sid}.example/feed",
                            title=sid.title(), created_at=NOW, **kw))  # type: ignore[arg-type]


def new_item(key: str, sid: str, hours_ago: float, fp: str) -> NewItem:
    at = NOW - timedelta(hours=hours_ago)
    fields = ItemFields(title=key, url=f"https://{sid}.example/{key}", summary="", body=None,
                        body_state=BodyState.PENDING, published_at=at, content_hash=key,
                        title_fp=fp)
    return NewItem(key=key, source_id=sid, fields=fields, discovered_at=at, backfill=False)


def record(store: SqliteStorage, sid: str, counts: RunCounts, hours_ago: float = 1) -> None:
    started = NOW - timedelta(hours=hours_ago)
    store.finish_run(store.start_run(sid, started), started + timedelta(seconds=2), counts)


@pytest.fixture
def world(store: SqliteStorage) -> SqliteStorage:
    """wire publishes; paper copies wire's stories; digest lists wire's items; broken fails;
    collapsed published 10 a day and then 1; gone answered 410; quiet publishes nothing."""
    add(store, "wire")
    add(store, "paper")
    add(store, "digest")
    add(store, "broken", health=Health.FAILING, fail_count=6, last_error="HTTP 500")
    add(store, "collapsed")
    add(store, "gone", muted_reason="410 Gone: the publisher removed this feed")
    add(store, "quiet")
    items = [new_item(f"w{i}", "wire", 10 + 4 * i, fp=f"story{i}") for i in range(12)]
    items += [new_item(f"p{i}", "paper", 9 + 4 * i, fp=f"story{i}") for i in range(8)]
    items += [new_item(f"p-dup{i}", "paper", 20 + i, fp="same headline") for i in range(4)]
    items += [new_item(f"c-old{i}", "collapsed", 30 + i, fp=f"c{i}") for i in range(10)]
    items += [new_item("c-new", "collapsed", 2, fp="cnew")]
    created = store.apply_upserts(UpsertBatch(creates=items))
    store.apply_upserts(UpsertBatch(discoveries=[
        Discovery("digest", NOW - timedelta(hours=5), item_id=created[f"w{i}"]) for i in range(6)
    ]))
    record(store, "wire", RunCounts(RunOutcome.OK, found=12, created=12))
    record(store, "paper", RunCounts(RunOutcome.OK, found=40, filtered=28, created=12,
                                     warnings=("28 of 40 entries were filtered out",)))
    record(store, "broken", RunCounts(RunOutcome.FAILED, error="https://broken.example/feed: "
                                      "HTTP 500 Internal Server Error", http_status=500))
    record(store, "gone", RunCounts(RunOutcome.FAILED, error="HTTP 410", http_status=410), 50)
    return store


def test_overview_has_every_field_the_sources_listing_needs(world: SqliteStorage) -> None:
    rows = {r.id: r for r in ops.overview(world, NOW)}
    assert set(rows) == {"wire", "paper", "digest", "broken", "collapsed", "gone", "quiet"}
    broken = rows["broken"].as_json()
    assert broken["health"] == "failing"
    assert broken["fail_count"] == 6
    assert broken["last_outcome"] == "failed"
    assert "HTTP 500" in broken["last_reason"]
    assert set(broken) >= {"interval_min", "next_fetch_at", "items_per_day", "warnings"}
    assert rows["wire"].items_per_day == (0, 0, 0, 0, 2, 6, 4)
    assert rows["paper"].items_per_day == (0, 0, 0, 0, 0, 4, 8)
    assert rows["collapsed"].warnings == ("new items fell from 10 to 1 in the last 24 h",)
    assert rows["paper"].warnings == (
        "last run: 28 of 40 entries were filtered out",
        "70% of the entries seen this week were filtered out")
    assert rows["gone"].as_json()["muted"].startswith("410")
    assert rows["quiet"].last_outcome is None
    json.dumps([r.as_json() for r in rows.values()])


def test_diversity_and_the_reprint_graph(world: SqliteStorage) -> None:
    report = ops.diversity_report(world, NOW)
    by_id = {d.source_id: d for d in report.sources}
    assert (by_id["paper"].items, by_id["paper"].distinct_titles) == (12, 9)
    assert by_id["wire"].diversity == 1.0
    assert by_id["paper"].repeated == 8
    assert by_id["paper"].second_hand  # 8 of its 12 stories wire had first
    assert not by_id["wire"].second_hand
    assert by_id["digest"].listings == 6
    assert by_id["digest"].second_hand_share == 1.0
    assert report.edges == (("wire", "paper", 8), ("wire", "digest", 6))


def test_weekly_report_text_and_json(world: SqliteStorage) -> None:
    report = ops.health_report(world, NOW)
    assert report.by_health == {"ok": 5, "degraded": 0, "failing": 1, "muted": 1}
    assert [r.id for r in report.failing] == ["broken"]
    assert [r.id for r in report.silent] == ["broken", "digest", "quiet"]
    assert report.runs == 4
    assert report.failed_runs == 2
    text = report.text()
    assert "tidings source health, week to 2026-03-09 09:00 UTC" in text
    assert "Failing (1):\n  - broken: 6 failures in a row, https://broken.example/feed: HTTP 500" \
        in text
    assert "Muted (1):\n  - gone: 410 Gone" in text
    assert "  - collapsed: new items fell from 10 to 1" in text
    assert "  - paper: 67% first seen elsewhere" in text
    assert "  - wire -> paper: 8" in text
    data = report.as_json()
    assert data["sources"]["failing"] == 1
    assert data["diversity"]["reprints"][0] == {"original": "wire", "repeater": "paper",
                                                "stories": 8}
    json.dumps(data)


def test_an_empty_archive_reports_cleanly(store: SqliteStorage) -> None:
    report = ops.health_report(store, NOW)
    assert report.runs == 0
    assert "runs: 0 (100.0% without failure), new items: 0" in report.text()
