"""The extraction job against a real site on 127.0.0.1 and a real SQLite archive."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any
from urllib.parse import urlsplit

import pytest

from extract_site import GIF, SHORT_PAGE, Entry, MapResolver, Site, article_page
from farm import serve_app
from tidings.app import SourceUpdate, Tidings
from tidings.errors import ConfigError
from tidings.model import BodyState, Item, ItemData
from tidings.net import Fetcher
from tidings.pipeline import extraction
from tidings.pipeline.env import PipelineEnv
from tidings.pipeline.extraction import extract_item, extract_pending
from tidings.pipeline.round import run_round
from tidings.pipeline.upsert import upsert_items
from tidings.settings import Settings
from tidings.store.base import ItemQuery

NOTE = "EDITOR-NOTE this story was updated after the council meeting on Wednesday evening."


def recent(hours: int = 1) -> str:
    return format_datetime(datetime.now(UTC) - timedelta(hours=hours), usegmt=True)


@pytest.fixture
def site() -> Iterator[Site]:
    s = Site()
    with serve_app(s.app()) as url:
        s.base = url
        port = urlsplit(url).port
        s.page("/a/1", article_page(1, title="Gates open", note=NOTE,
                                    images=("/img/1.png", "/img/2.gif", "/img/gone.png")))
        s.image("/img/1.png")
        s.image("/img/2.gif", GIF, "image/gif")
        s.page("/a/2", "<html><body>Not here</body></html>", status=404)
        s.page("/a/3", SHORT_PAGE)
        s.page("/a/4", article_page(4, title="Undated story", author="Ann Lee",
                                    published="2026-01-29T10:00:00Z"))
        s.page("/b/1", article_page(7, title="Summary only"))
        s.feeds["/feed.xml"] = [
            Entry("Gates open", "/a/1", recent(1)),
            Entry("Missing story", "/a/2", recent(2)),
            Entry("Short story", "/a/3", recent(3)),
            Entry("Undated story", "/a/4", None),
            Entry("A tweet", f"http://x.com:{port}/status/1", recent(4)),
            Entry("A sub tweet", f"http://mobile.twitter.com:{port}/s/2", recent(5)),
            Entry("A WeChat post", f"http://mp.weixin.qq.com:{port}/s/3", recent(6)),
            Entry("Blocked", f"http://blocked.test:{port}/b", recent(7)),
        ]
        s.feeds["/summary.xml"] = [Entry("Summary only", "/b/1", recent(1))]
        yield s


@dataclass
class World:
    tidings: Tidings
    env: PipelineEnv
    site: Site

    def item(self, path_or_url: str) -> Item:
        url = path_or_url if "://" in path_or_url else self.site.base + path_or_url
        return next(i for i in self.tidings.items.query(ItemQuery(limit=1000)) if i.url == url)

    async def make_due(self) -> None:
        for source in self.tidings.sources.all():
            await self.tidings.sources.update(
                source.id, SourceUpdate(next_fetch_at=datetime(2000, 1, 1, tzinfo=UTC)))


@pytest.fixture
async def world(settings: Settings, site: Site) -> AsyncIterator[World]:
    t = Tidings.open(settings, create=True)
    await t.sources.create(site.base + "/feed.xml", source_id="gazette")
    await t.sources.create(site.base + "/summary.xml", source_id="brief",
                           config={"summary_only": True})
    # x.com & co resolve to our server, so a request to them would be seen and counted
    fetcher = Fetcher(settings, resolver=MapResolver({"blocked.test": "10.1.2.3"}))
    env = replace(t.pipeline_env(), fetcher=fetcher)
    yield World(t, env, site)
    await fetcher.aclose()
    await t.aclose()


async def test_a_round_extracts_pending_bodies_as_new_versions(world: World,
                                                               settings: Settings) -> None:
    report = await run_round(world.env)
    ex = report.extraction
    assert ex is not None
    assert (ex.tried, ex.ok, ex.unconfirmed, ex.failed, ex.skipped) == (5, 2, 1, 2, 3)

    item = world.item("/a/1")
    assert item.body_state is BodyState.OK and item.body
    assert item.revisions == 1, "the extracted body is a new version of the item"
    assert NOTE in item.body and "Copyright" not in item.body
    assert item.summary.startswith("Gates open"), "the feed's summary is kept"
    assert item.raw["extract"]["method"] and item.raw["extract"]["images"] == 2
    assert item.raw["extract"]["images_failed"] == 1
    assert item.body.count('src="/media/') == 2 and 'src=""' in item.body
    assert f'data-original-src="{world.site.base}/img/1.png"' in item.body
    media = (settings.data_dir / "media").rglob("*.*")
    assert sorted(p.suffix for p in media) == [".gif", ".png"]
    assert world.site.requests["/a/1"] == 1 and world.site.requests["/img/1.png"] == 1
    pages = world.tidings.review.raw_pages(item.id)
    assert len(pages) == 1 and pages[0].status == 200 and b"Gates open" in pages[0].body
    assert pages[0].item_key == item.key and pages[0].source_id == "gazette"


async def test_metadata_fills_only_what_the_item_lacks(world: World) -> None:
    await run_round(world.env)
    undated = world.item("/a/4")
    assert undated.body_state is BodyState.OK
    assert undated.published_at == datetime(2026, 1, 29, 10, tzinfo=UTC)
    assert undated.author == "Ann Lee"
    assert undated.title == "Undated story", "the feed's title wins over the page's"
    dated = world.item("/a/1")
    assert dated.published_at is not None
    assert dated.published_at > datetime.now(UTC) - timedelta(hours=2), "feed date kept"


async def test_failures_become_unconfirmed_with_their_reason(world: World) -> None:
    await run_round(world.env)
    missing, short, blocked = (world.item(p) for p in (
        "/a/2", "/a/3", f"http://blocked.test:{urlsplit(world.site.base).port}/b"))
    for item in (missing, short, blocked):
        assert item.body_state is BodyState.UNCONFIRMED and item.body is None
        assert item.summary, "the summary is not lost"
        assert item.revisions == 0, "a failure is no new version"
    assert missing.raw["extract_error"] == "HTTP 404"
    assert "no article found" in short.raw["extract_error"]
    assert "10.1.2.3" in blocked.raw["extract_error"] or "blocked" in \
        blocked.raw["extract_error"].lower()
    page = world.tidings.review.raw_page(missing.id)
    assert page is not None and page.status == 404, "the error page is archived too"
    assert world.tidings.review.raw_page(blocked.id) is None, "nothing came back to archive"
    assert world.site.hosts["blocked.test"] == 0


async def test_api_hosts_are_never_fetched_and_stay_pending(world: World) -> None:
    await run_round(world.env)
    await extract_pending(world.env, limit=50)
    port = urlsplit(world.site.base).port
    for url in (f"http://x.com:{port}/status/1", f"http://mobile.twitter.com:{port}/s/2",
                f"http://mp.weixin.qq.com:{port}/s/3"):
        item = world.item(url)
        assert item.body_state is BodyState.PENDING
        assert world.tidings.review.raw_page(item.id) is None
    assert world.site.hosts["x.com"] == 0
    assert world.site.hosts["mobile.twitter.com"] == 0
    assert world.site.hosts["mp.weixin.qq.com"] == 0


async def test_summary_only_sources_are_not_fetched_nor_reviewed(world: World) -> None:
    await run_round(world.env)
    item = world.item("/b/1")
    assert item.body_state is BodyState.UNCONFIRMED and item.raw.get("summary_only")
    assert item.body is None and item.summary
    assert world.site.requests["/b/1"] == 0
    reviewed = {i.url for i in world.tidings.review.items()}
    base = world.site.base
    port = urlsplit(base).port
    assert reviewed == {base + "/a/2", base + "/a/3", f"http://blocked.test:{port}/b"}


async def test_pending_items_of_a_source_made_summary_only_later(world: World) -> None:
    await run_round(world.env, extract=False)
    assert world.item("/a/1").body_state is BodyState.PENDING
    await world.tidings.sources.update("gazette", SourceUpdate(config={"summary_only": True}))
    sources = {s.id: s for s in world.tidings.sources.all()}
    assert sources["gazette"].config["summary_only"] is True
    report = await extract_pending(world.env)
    assert report.tried == 0 and world.site.requests["/a/1"] == 0
    item = world.item("/a/1")
    assert item.body_state is BodyState.UNCONFIRMED and item.raw["summary_only"] is True
    assert world.item("/a/2") not in world.tidings.review.items()


async def test_a_relisted_teaser_keeps_the_extracted_body(world: World) -> None:
    await run_round(world.env)
    before = world.item("/a/1")
    unconfirmed = world.item("/a/2")
    await world.make_due()
    report = await run_round(world.env)
    assert report.created == 0 and report.revised == 0
    assert report.extraction is not None and report.extraction.tried == 0
    after = world.item("/a/1")
    assert after.body == before.body and after.body_state is BodyState.OK
    assert after.revisions == 1 and after.content_hash == before.content_hash
    assert world.item("/a/2").body_state is BodyState.UNCONFIRMED, "not back to pending"
    assert world.item("/a/2").raw == unconfirmed.raw
    assert world.site.requests["/a/1"] == 1 and world.site.requests["/a/2"] == 1
    assert world.site.requests["/feed.xml"] == 2


async def test_a_changed_teaser_revises_but_keeps_the_body(world: World) -> None:
    await run_round(world.env)
    body = world.item("/a/1").body
    world.site.feeds["/feed.xml"][0] = Entry("Gates open at last", "/a/1", recent(1))
    await world.make_due()
    report = await run_round(world.env)
    assert report.revised == 1
    item = world.item("/a/1")
    assert item.title == "Gates open at last" and item.body == body
    assert item.body_state is BodyState.OK and item.revisions == 2


async def test_extraction_is_bounded_per_round(world: World, settings: Settings) -> None:
    env = replace(world.env, settings=replace(settings, extract_per_round=2))
    report = await run_round(env)
    assert report.extraction is not None and report.extraction.tried == 2
    pending = world.tidings.items.query(ItemQuery(body_state=BodyState.PENDING, limit=100))
    assert len(pending) == 3 + 3, "three more to try, three API hosts left alone"
    follow = await extract_pending(env)
    assert follow.tried == 2
    off = await run_round(replace(env, settings=replace(settings, extract_per_round=0)))
    assert off.extraction is not None and off.extraction.tried == 0


async def test_without_extract_the_round_fetches_feeds_only(world: World) -> None:
    report = await run_round(world.env, extract=False)
    assert report.extraction is None and report.created == 9
    assert set(world.site.requests) == {"/feed.xml", "/summary.xml"}


async def test_retry_from_the_review_list(world: World) -> None:
    await run_round(world.env)
    missing = world.item("/a/2")
    world.site.page("/a/2", article_page(2, title="Missing story"))
    item = await world.tidings.review.retry(missing.id)
    assert item.body_state is BodyState.OK and "Report number 2" in (item.body or "")
    assert "extract_error" not in item.raw
    assert missing.id not in {i.id for i in world.tidings.review.items()}
    assert [p.status for p in world.tidings.review.raw_pages(missing.id)] == [200, 404]


async def test_a_source_selector_is_used(world: World) -> None:
    await world.tidings.sources.update("gazette", SourceUpdate(config={
        "extract": {"body_selector": "article", "remove_selectors": [".editor-note"]}}))
    await run_round(world.env)
    item = world.item("/a/1")
    assert item.raw["extract"]["method"] == "selector"
    assert item.body and "Report number 1" in item.body and "EDITOR-NOTE" not in item.body


@pytest.mark.parametrize("extract", [
    "article", {"body_selector": "div[["}, {"remove_selectors": ".ad"},
    {"remove_selectors": ["p::nonsense("]}, {"selector": "article"}, {"body_selector": ""},
])
async def test_bad_extract_config_is_refused_in_one_line(settings: Settings,
                                                        extract: object) -> None:
    t = Tidings.open(settings, create=True)
    try:
        with pytest.raises(ConfigError) as info:
            await t.sources.create("http://127.0.0.1:9/feed.xml", config={"extract": extract})
        assert "\n" not in str(info.value) and "extract" in str(info.value)
        assert t.sources.all() == []
    finally:
        t.close()


async def test_prune_keeps_the_page_of_the_current_body(settings: Settings, site: Site,
                                                        world: World) -> None:
    await run_round(world.env)
    item = world.item("/a/1")
    later = Tidings.open(settings, clock=lambda: datetime.now(UTC) + timedelta(days=91))
    try:
        removed = await later.collection.prune_raw()
        assert removed == 2, "the two feed responses went"
        assert later.reports.stats().raw_responses == 4, "the pages of /a/1 ... /a/4 stay"
        assert [p.status for p in later.review.raw_pages(item.id)] == [200]
    finally:
        later.close()
    keep_all = Tidings.open(replace(settings, raw_retention_days=0),
                            clock=lambda: datetime.now(UTC) + timedelta(days=91))
    try:
        assert await keep_all.collection.prune_raw() == 0
    finally:
        keep_all.close()


async def test_an_entry_that_is_one_part_of_a_shared_page_is_not_given_the_page(
    world: World,
) -> None:
    """Its URL keeps a fragment because entries share the page (identity): the whole
    page would be the wrong body, so it is recorded unconfirmed without a fetch."""
    source = world.tidings.sources.get("gazette")
    url = world.site.base + "/a/1#part-2"
    await world.tidings.write(lambda unit: upsert_items(unit, source, [
        ItemData(key=f"url:{url}", title="Part two", url=url, summary="a teaser")],
        datetime.now(UTC)))
    report = await extract_pending(world.env)
    item = world.item(url)
    assert item.body_state is BodyState.UNCONFIRMED
    assert "several entries share" in item.raw["extract_error"]
    assert world.site.requests["/a/1"] == 0 and report.tried == 0


async def test_each_item_validates_its_source_config_once(
    world: World, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Validation compiles every CSS selector of the config: once per item is enough."""
    await world.tidings.sources.update("gazette", SourceUpdate(config={
        "extract": {"body_selector": "article", "remove_selectors": [".editor-note"]}}))
    await run_round(world.env, extract=False)
    validated: list[object] = []
    real = extraction.parse_config

    def counting(*args: Any) -> Any:
        validated.append(args)
        return real(*args)

    monkeypatch.setattr(extraction, "parse_config", counting)
    report = await extract_item(world.env, world.item("/a/1"), world.tidings.sources.get("gazette"))
    assert report.ok == 1 and len(validated) == 1


async def test_a_stored_config_that_no_longer_validates_fails_the_item_unfetched(
    world: World,
) -> None:
    await run_round(world.env, extract=False)
    await world.tidings.write(lambda unit: unit.update_source(
        "gazette", SourceUpdate(config={"selector": "article"})))
    report = await extract_item(world.env, world.item("/a/1"), world.tidings.sources.get("gazette"))
    item = world.item("/a/1")
    assert (report.tried, report.failed) == (1, 1)
    assert item.body_state is BodyState.UNCONFIRMED
    assert "unknown config key 'selector'" in item.raw["extract_error"]
    assert world.site.requests["/a/1"] == 0
