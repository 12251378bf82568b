"""``tidings doctor`` (R-OPS-5): every stage shown, nothing stored."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from netservers import serve
from schedfeeds import SchedFeeds
from tidings.app import Tidings
from tidings.model import SourceKind
from tidings.pipeline.doctor import doctor
from tidings.settings import Settings


@pytest.fixture
async def world(settings: Settings) -> AsyncIterator[tuple[Tidings, str]]:
    feeds = SchedFeeds(lambda: datetime.now(UTC))
    async with serve(feeds.app()) as base:
        t = Tidings.open(settings, create=True)
        yield t, base
        await t.aclose()


async def test_doctor_shows_each_stage_and_each_entrys_fate(world: tuple[Tidings, str]) -> None:
    t, base = world
    await t.sources.create(f"{base}/healthy.xml", kind=SourceKind("rss"), source_id="healthy",
                    config={"filters": {"block": [{"field": "title", "pattern": "post 1$"}]}})
    source = t.sources.get("healthy")
    report = await doctor(t.pipeline_env(), source)
    stages = dict(report.stages)
    assert stages["request"].endswith("(unconditional)")
    assert stages["response"].startswith("HTTP 200 from")
    assert stages["parse"].startswith("3 entries")
    assert stages["filters"] == "2 kept, 1 filtered out"
    assert [(e.title, e.verdict) for e in report.entries] == [
        ("healthy post 0", "create"), ("healthy post 1", "filtered"),
        ("healthy post 2", "create")]
    assert report.headers["etag"] == '"healthy-v1"'
    assert t.sources.runs("healthy") == []  # nothing recorded ...
    assert t.items.query() == []  # ... nothing stored
    assert t.sources.get("healthy") == source

    await t.collection.round(["healthy"])
    again = await doctor(t.pipeline_env(), t.sources.get("healthy"))
    assert [e.verdict for e in again.entries] == ["unchanged", "filtered", "unchanged"]
    conditional = await doctor(t.pipeline_env(), t.sources.get("healthy"), conditional=True)
    assert dict(conditional.stages)["parse"] == "304 Not Modified: nothing to parse"
    text = again.text()
    assert "filtered" in text
    assert "healthy post 0" in text
    assert again.as_json()["entries"][0]["verdict"] == "unchanged"


async def test_doctor_reports_a_failing_fetch_in_one_line(world: tuple[Tidings, str]) -> None:
    t, base = world
    await t.sources.create(f"{base}/failing.xml", kind=SourceKind("rss"), source_id="failing")
    report = await doctor(t.pipeline_env(), t.sources.get("failing"))
    assert report.error is not None
    assert "HTTP 500" in report.error
    assert report.entries == []
    assert "FAILED" in report.text()
    assert t.sources.get("failing").fail_count == 0
