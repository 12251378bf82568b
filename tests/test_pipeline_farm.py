"""Collection against a real feed farm on 127.0.0.1: exactness, 304s, failures."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from urllib.parse import urlsplit

import pytest

from farm import Farm, running_farm
from tidings.app import ItemQuery, SourceUpdate, Tidings
from tidings.errors import StorageError
from tidings.model import Health, RunOutcome
from tidings.settings import Settings
from tidings.store.base import UpsertBatch
from tidings.store.sqlite import SqliteUnit

pytestmark = pytest.mark.slow


@pytest.fixture
def farm() -> Iterator[Farm]:
    with running_farm(Farm(feeds=200)) as f:
        yield f


def all_items(t: Tidings) -> list:
    return t.items.query(ItemQuery(limit=100_000))


def paths(t: Tidings) -> list[str]:
    return [urlsplit(i.url).path for i in all_items(t)]


async def test_round_stores_exactly_the_unique_items_then_only_new_ones(
    settings: Settings, farm: Farm,
) -> None:
    t = Tidings.open(settings, create=True)
    added, _ = await t.transfer.import_opml(farm.opml())
    assert len(added) == 200

    report = await t.collection.round()
    stored = paths(t)
    assert len(stored) == len(set(stored)), "duplicates stored"
    assert set(stored) == farm.unique_paths()
    assert report.sources == 200
    assert report.failed == len(farm.specs) - len(farm.ok_feeds())

    new = farm.tick(every=5)
    before_304 = farm.statuses.get(304, 0)
    for source in t.sources.all():  # make every source due again
        await t.sources.update(source.id,
                               SourceUpdate(next_fetch_at=datetime(2000, 1, 1, tzinfo=UTC)))
    report2 = await t.collection.round()
    stored2 = paths(t)
    assert len(stored2) == len(set(stored2))
    assert set(stored2) - set(stored) == new
    assert report2.created == len(new)
    unchanged_feeds = len(farm.ok_feeds()) - len(new)
    assert farm.statuses.get(304, 0) - before_304 == unchanged_feeds
    assert report2.count(RunOutcome.NOT_MODIFIED) == unchanged_feeds
    await t.aclose()


async def test_failures_are_recorded_with_a_reason_and_backoff(
    settings: Settings, farm: Farm,
) -> None:
    t = Tidings.open(settings, create=True)
    await t.transfer.import_opml(farm.opml())
    await t.collection.round()
    by_url = {s.url.rsplit("/", 1)[1]: s for s in t.sources.all()}
    broken = {f"{s.index}.xml": s.kind for s in farm.specs if s.kind not in ("ok", "slow")}
    for name, kind in broken.items():
        source = by_url[name]
        assert source.fail_count == 1
        assert source.health is Health.DEGRADED
        assert source.last_error and "\n" not in source.last_error
        runs = t.sources.runs(source.id)
        assert runs[0].outcome is RunOutcome.FAILED
        if kind == "e404":
            assert runs[0].http_status == 404
        assert source.next_fetch_at is not None
        assert source.next_fetch_at > datetime.now(UTC)
    healthy = by_url["0.xml"]
    assert healthy.health is Health.OK
    assert healthy.cursor.get("etag")
    await t.aclose()


async def test_reprints_are_one_item_owned_by_the_first_lister(
    settings: Settings, farm: Farm,
) -> None:
    t = Tidings.open(settings, create=True)
    await t.transfer.import_opml(farm.opml())
    report = await t.collection.round()
    wire = [i for i in all_items(t) if "/wire/" in (i.url or "")]
    assert len(wire) == len({i.url for i in wire}) == 10
    assert all("?" not in (i.url or "") for i in wire), "tracking parameters kept"
    assert sum(c.rediscovered for c in report.results.values()) > 0
    await t.aclose()


async def test_a_run_whose_batch_cannot_be_stored_is_failed_whole(
    settings: Settings, farm: Farm, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Raw response, items, cursor and run row commit together: when the batch of one
    source cannot be written, nothing of that run but its raw response (kept for
    replay) and the failed run row remains, and the rest of the round is stored."""
    t = Tidings.open(settings, create=True)
    await t.transfer.import_opml(farm.opml())
    victim = next(s for s in t.sources.all() if s.url.endswith("/0.xml"))
    real_apply = SqliteUnit.apply_upserts

    def apply(unit: SqliteUnit, batch: UpsertBatch) -> dict[str, int]:
        if any(n.source_id == victim.id for n in batch.creates):
            raise StorageError("database write failed: disk I/O error")
        return real_apply(unit, batch)

    monkeypatch.setattr(SqliteUnit, "apply_upserts", apply)
    report = await t.collection.round()
    assert report.results[victim.id].outcome is RunOutcome.FAILED
    assert "disk I/O error" in (report.results[victim.id].error or "")
    source = t.sources.get(victim.id)
    assert source.fail_count == 1
    assert not source.cursor.get("etag"), "validators saved without their batch"
    assert [r.outcome for r in t.sources.runs(victim.id)] == [RunOutcome.FAILED]
    assert len(list(t.pipeline_env().store.iter_raw(source_id=victim.id))) == 1
    assert t.items.query(ItemQuery(source_id=victim.id, limit=1000)) == []
    others = [c for sid, c in report.results.items() if sid != victim.id]
    assert sum(c.created for c in others) > 0
    await t.aclose()


async def test_a_round_admits_a_bounded_number_of_one_hosts_sources(
    settings: Settings, farm: Farm,
) -> None:
    """A run's time limit counts from its admission: hundreds of sources of one host
    admitted at once would spend it waiting for the host's two request slots."""
    t = Tidings.open(settings, create=True)
    await t.transfer.import_opml(farm.opml())
    assert {urlsplit(s.url).hostname for s in t.sources.all()} == {"127.0.0.1"}
    await t.collection.round()
    runs = t.sources.runs(limit=1000)
    assert len(runs) == 200
    edges = sorted([(r.started_at, 1) for r in runs] +
                   [(r.finished_at or r.started_at, -1) for r in runs])
    running = peak = 0
    for _, step in edges:
        running += step
        peak = max(peak, running)
    assert settings.per_host_concurrency == 2
    assert 2 < peak <= 32  # 200 when every source of the host was admitted at once
    await t.aclose()
