"""``reparse`` redoes parsing and extraction from the raw archive, sending no request."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from extract_site import GIF, SHORT_PAGE, Entry, Site, article_page
from farm import serve_app
from tidings.app import ItemQuery, SourceUpdate, Tidings
from tidings.errors import NotFoundError
from tidings.model import BodyState, Item, RawResponse
from tidings.settings import Settings

NOTE = "EDITOR-NOTE this story was updated after the council meeting on Wednesday evening."


def recent(hours: int) -> str:
    return format_datetime(datetime.now(UTC) - timedelta(hours=hours), usegmt=True)


@dataclass
class Archive:
    settings: Settings
    site: Site
    source_url: str

    def open(self) -> Tidings:
        """A fresh facade on the archive: it has never built a fetcher."""
        return Tidings.open(self.settings)

    def item(self, t: Tidings, path: str) -> Item:
        return next(i for i in t.items.query(ItemQuery(limit=100))
                    if i.url == self.site.base + path)


@pytest.fixture
async def archive(settings: Settings) -> AsyncIterator[Archive]:
    site = Site()
    with serve_app(site.app()) as url:
        site.base = url
        site.page("/a/1", article_page(1, title="Gates open", note=NOTE,
                                       images=("/img/1.png", "/img/2.gif")))
        site.image("/img/1.png")
        site.image("/img/2.gif", GIF, "image/gif")
        site.page("/a/2", article_page(2, title="Second story"))
        site.page("/a/3", SHORT_PAGE)
        site.feeds["/feed.xml"] = [Entry("Gates open", "/a/1", recent(1)),
                                   Entry("Second story", "/a/2", recent(2)),
                                   Entry("Short story", "/a/3", recent(3))]
        t = Tidings.open(settings, create=True)
        await t.sources.create(url + "/feed.xml", source_id="gazette")
        report = await t.collection.round()
        assert report.extraction is not None and report.extraction.ok == 2
        await t.aclose()
        yield Archive(settings, site, url + "/feed.xml")



async def archive_raw(t: Tidings, raw: RawResponse) -> None:
    """A response in the raw archive as if it had been fetched."""
    await t.write(lambda unit: unit.put_raw(raw))

async def test_reparse_sends_no_request_and_applies_new_extract_settings(archive: Archive) -> None:
    t = archive.open()
    try:
        before = archive.item(t, "/a/1")
        assert before.body and NOTE in before.body
        requests = archive.site.total
        unchanged = await t.collection.reparse()
        assert (unchanged.feeds, unchanged.pages, unchanged.revised) == (1, 3, 0)
        assert unchanged.errors == []

        await t.sources.update("gazette", SourceUpdate(config={"extract": {"remove_selectors":
                                                           [".editor-note"]}}))
        report = await t.collection.reparse(source_id="gazette")
        assert archive.site.total == requests, "reparse sent a request"
        assert report.revised == 1 and report.pages == 3
        after = archive.item(t, "/a/1")
        assert after.body and NOTE not in after.body and "Report number 1" in after.body
        assert after.revisions == before.revisions + 1
        assert after.body.count('src="/media/') == 2, "local copies reused, none fetched"
        assert archive.item(t, "/a/2").revisions == 1, "other bodies untouched"
        assert archive.item(t, "/a/3").body_state is BodyState.UNCONFIRMED
    finally:
        t.close()


async def test_an_archived_listing_is_parsed_again_without_creating_items(archive: Archive) -> None:
    t = archive.open()
    try:
        first = archive.item(t, "/a/2")
        feed = archive.site.feed_xml("/feed.xml").replace(
            b"<title>Second story</title>", b"<title>Second story, corrected</title>"
        ).replace(b"</channel>", b"<item><title>Never stored</title><link>"
                  + archive.site.base.encode() + b"/a/9</link></item></channel>")
        await archive_raw(t, RawResponse(
            url=archive.source_url, final_url=archive.source_url,
            fetched_at=datetime.now(UTC), status=200,
            headers={"content-type": "application/rss+xml"}, body=feed, source_id="gazette"))
        count = len(t.items.query(ItemQuery(limit=100)))
        report = await t.collection.reparse()
        assert report.feeds == 2 and report.revised == 1
        assert len(t.items.query(ItemQuery(limit=100))) == count, "reparse created an item"
        second = archive.item(t, "/a/2")
        assert second.title == "Second story, corrected"
        assert second.body == first.body and second.body_state is BodyState.OK
    finally:
        t.close()


async def test_since_and_source_narrow_the_work(archive: Archive) -> None:
    t = archive.open()
    try:
        later = await t.collection.reparse(since=datetime.now(UTC) + timedelta(hours=1))
        assert (later.feeds, later.pages, later.revised) == (0, 0, 0)
        with pytest.raises(NotFoundError):
            await t.collection.reparse(source_id="nope")
    finally:
        t.close()


async def test_an_unreadable_archive_entry_is_counted_not_fatal(archive: Archive) -> None:
    t = archive.open()
    try:
        await archive_raw(t, RawResponse(
            url=archive.source_url, final_url=archive.source_url,
            fetched_at=datetime.now(UTC), status=200, headers={}, body=b"\x00garbage<<",
            source_id="gazette"))
        report = await t.collection.reparse()
        assert report.error_count == 1 and len(report.errors) == 1
        assert "\n" not in report.errors[0]
        assert report.pages == 3
    finally:
        t.close()


async def test_a_page_that_no_longer_yields_an_article_keeps_the_body(archive: Archive) -> None:
    t = archive.open()
    try:
        body = archive.item(t, "/a/1").body
        await t.sources.update("gazette", SourceUpdate(
            config={"extract": {"remove_selectors": ["p"]}}))
        report = await t.collection.reparse()
        assert report.revised == 0
        assert archive.item(t, "/a/1").body == body
    finally:
        t.close()


async def test_reparse_with_no_reachable_network(archive: Archive) -> None:
    """Even with the guard refusing every address, reparse does its whole job."""
    offline = replace(archive.settings, allow_private_hosts=())
    t = Tidings.open(offline)
    try:
        await t.sources.update("gazette", SourceUpdate(
            config={"extract": {"body_selector": "article"}}))
        report = await t.collection.reparse()
        assert report.pages == 3 and report.errors == []
        assert archive.item(t, "/a/1").raw["extract"]["method"] == "selector"
    finally:
        t.close()
