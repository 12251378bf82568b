"""Contract: the blogroll crawler's storage (R-DISC-3), on every backend.

The frontier hands sites out breadth first, pages are recorded as asked before
the request and counted against the page limit, finds come back by depth, and a
crawl stopped at any moment resumes from what is stored.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import pgserver
from storage_contract import T0, at
from tidings.errors import NotFoundError
from tidings.store.base import Storage
from tidings.store.crawl import (
    Crawl,
    CrawlCounts,
    CrawlFeed,
    CrawlFinding,
    NextSite,
    PageAsk,
    SiteOutcome,
    SiteState,
)
from tidings.store.postgres import PostgresStorage
from tidings.store.sqlite import SqliteStorage

SEEDS = [("a.example", "https://a.example/"), ("b.example", "https://b.example/")]


def found(*keys: str) -> list[NextSite]:
    return [NextSite(site=k, url=f"https://{k}/", link_text=f"{k} text") for k in keys]


def done(*keys: str, feed: str | None = None, title: str = "") -> SiteOutcome:
    return SiteOutcome(state=SiteState.DONE, title=title, abstract=f"about {title}",
                       feed=None if feed is None else CrawlFeed(feed, "rss", f"{feed} feed", 3),
                       found=found(*keys))


def claimed(storage: Storage, crawl_id: int) -> str | None:
    site = storage.claim_crawl_site(crawl_id)
    if site is None:
        return None
    assert site.state is SiteState.VISITING
    return site.site


def test_create_get_and_list_newest_first(storage: Storage) -> None:
    first = storage.create_crawl([*SEEDS, SEEDS[0]], 2, 100, 1000, T0)
    second = storage.create_crawl(SEEDS[:1], 0, 1, 5, at(1))
    assert storage.get_crawl(first) == Crawl(
        id=first, seeds=("https://a.example/", "https://b.example/", "https://a.example/"),
        max_depth=2, max_sites=100, max_pages=1000, state="running", pages=0, created_at=T0,
        finished_at=None)
    assert [c.id for c in storage.list_crawls()] == [second, first]
    assert [c.id for c in storage.list_crawls(limit=1)] == [second]
    sites = storage.crawl_sites(first)  # a seed named twice is queued once
    assert [(s.site, s.depth, s.state, s.found_from) for s in sites] == [
        ("a.example", 0, SiteState.QUEUED, ""), ("b.example", 0, SiteState.QUEUED, "")]
    with pytest.raises(NotFoundError):
        storage.get_crawl(second + 100)
    with pytest.raises(NotFoundError):
        storage.crawl_counts(second + 100)


def test_the_frontier_is_breadth_first_by_depth_then_order_found(storage: Storage) -> None:
    crawl = storage.create_crawl(SEEDS, 2, 100, 1000, T0)
    a = storage.claim_crawl_site(crawl)
    assert a is not None and (a.site, a.url, a.depth) == ("a.example", "https://a.example/", 0)
    assert claimed(storage, crawl) == "b.example"
    assert storage.finish_crawl_site(a.id, done("c.example", "d.example", "a.example")) == 2
    assert claimed(storage, crawl) is None  # b (depth 0) is still being visited
    b = storage.crawl_sites(crawl, [SiteState.VISITING])[0]
    assert storage.finish_crawl_site(b.id, done("e.example", "d.example")) == 1
    order = []
    while (site := storage.claim_crawl_site(crawl)) is not None:
        order.append((site.site, site.depth, site.found_from, site.link_text))
        storage.finish_crawl_site(site.id, done(f"deep-{site.site}"))
    # depth 1 in the order found, then depth 2; depth 2 is the limit: nothing deeper
    assert order == [("c.example", 1, "a.example", "c.example text"),
                     ("d.example", 1, "a.example", "d.example text"),
                     ("e.example", 1, "b.example", "e.example text"),
                     ("deep-c.example", 2, "c.example", "deep-c.example text"),
                     ("deep-d.example", 2, "d.example", "deep-d.example text"),
                     ("deep-e.example", 2, "e.example", "deep-e.example text")]
    assert storage.crawl_counts(crawl).done == 8


def test_queued_sites_are_counted_by_depth(storage: Storage) -> None:
    crawl = storage.create_crawl(SEEDS, 2, 100, 1000, T0)
    assert storage.crawl_queued(crawl) == {0: 2}
    a = storage.claim_crawl_site(crawl)
    assert a is not None and storage.crawl_queued(crawl) == {0: 1}
    storage.finish_crawl_site(a.id, done("c.example", "d.example"))
    assert storage.crawl_queued(crawl) == {0: 1, 1: 2}
    assert claimed(storage, crawl) == "b.example"
    assert storage.crawl_queued(crawl) == {1: 2}  # a depth with none left is left out
    assert storage.crawl_queued(storage.create_crawl(SEEDS[:1], 2, 100, 1000, T0)) == {0: 1}


def test_site_and_depth_limits(storage: Storage) -> None:
    crawl = storage.create_crawl(SEEDS, 1, 3, 1000, T0)
    site = storage.claim_crawl_site(crawl)
    assert site is not None
    assert storage.finish_crawl_site(site.id, done("b.example", "c.example", "d.example")) == 1
    assert [s.site for s in storage.crawl_sites(crawl)] == ["a.example", "b.example",
                                                            "c.example"]
    shallow = storage.create_crawl(SEEDS[:1], 0, 100, 1000, T0)
    seed = storage.claim_crawl_site(shallow)
    assert seed is not None
    assert storage.finish_crawl_site(seed.id, done("x.example")) == 0
    assert len(storage.crawl_sites(shallow)) == 1
    only = storage.create_crawl(SEEDS, 2, 1, 1000, T0)  # more seeds than sites allowed
    assert [s.site for s in storage.crawl_sites(only)] == ["a.example"]
    with pytest.raises(NotFoundError):
        storage.finish_crawl_site(10**9, done())


def test_pages_are_recorded_as_asked_before_the_request(storage: Storage) -> None:
    crawl = storage.create_crawl(SEEDS, 2, 100, 3, T0)
    site = storage.claim_crawl_site(crawl)
    assert site is not None
    assert storage.ask_crawl_page(crawl, site.id, "https://a.example/") == (PageAsk.NEW, None)
    assert storage.ask_crawl_page(crawl, site.id, "https://a.example/") == (PageAsk.ASKED, None)
    data = {"feeds": ["https://a.example/feed"], "title": "Ä blog — 中文", "links": []}
    storage.finish_crawl_page(crawl, "https://a.example/", data)
    assert storage.ask_crawl_page(crawl, site.id, "https://a.example/") == (PageAsk.DONE, data)
    assert storage.ask_crawl_page(crawl, site.id, "https://a.example/a")[0] is PageAsk.NEW
    assert storage.ask_crawl_page(crawl, site.id, "https://a.example/B")[0] is PageAsk.NEW
    # the limit: a new address is refused, one asked before is still answered
    assert storage.ask_crawl_page(crawl, site.id, "https://a.example/c") == (PageAsk.LIMIT, None)
    assert storage.ask_crawl_page(crawl, site.id, "https://a.example/")[0] is PageAsk.DONE
    assert storage.get_crawl(crawl).pages == storage.crawl_counts(crawl).pages == 3
    # byte order, as SQLite sorts: "B" before "a" (a linguistic collation says otherwise)
    assert storage.crawl_unanswered(crawl) == ["https://a.example/B", "https://a.example/a"]
    other = storage.create_crawl(SEEDS, 2, 100, 3, T0)  # pages belong to their crawl
    assert storage.ask_crawl_page(other, site.id, "https://a.example/")[0] is PageAsk.NEW


def test_counts_findings_and_troubles(storage: Storage) -> None:
    crawl = storage.create_crawl(SEEDS, 2, 100, 1000, T0)
    a, b = storage.claim_crawl_site(crawl), storage.claim_crawl_site(crawl)
    assert a is not None and b is not None
    storage.finish_crawl_site(b.id, done("c.example", "d.example", feed="https://b.example/rss",
                                         title="Bee"))
    storage.finish_crawl_site(a.id, SiteOutcome(SiteState.FAILED, reason="timed out " * 100))
    c = storage.claim_crawl_site(crawl)
    assert c is not None
    # the same feed named by a second site is one find
    storage.finish_crawl_site(c.id, done(feed="https://b.example/rss", title="Sea"))
    d = storage.claim_crawl_site(crawl)
    assert d is not None
    storage.finish_crawl_site(d.id, SiteOutcome(SiteState.SKIPPED, reason="robots.txt"))
    storage.create_crawl(SEEDS, 2, 100, 1000, T0)  # another crawl's rows are not counted
    storage.ask_crawl_page(crawl, a.id, "https://a.example/")
    assert storage.crawl_counts(crawl) == CrawlCounts(queued=0, visiting=0, done=2, failed=1,
                                                      skipped=1, feeds=1, pages=1)
    findings = storage.crawl_findings(crawl)
    assert findings == [CrawlFinding(
        id=findings[0].id, crawl_id=crawl, feed_url="https://b.example/rss", feed_type="rss",
        feed_title="https://b.example/rss feed", site_url="https://b.example/", site_title="Bee",
        abstract="about Bee", depth=0, found_from="", source_id=None)]
    troubles = storage.crawl_sites(crawl, [SiteState.FAILED, SiteState.SKIPPED])
    assert [(s.site, s.state, len(s.reason)) for s in troubles] == [
        ("a.example", SiteState.FAILED, 500), ("d.example", SiteState.SKIPPED, 10)]
    assert [s.site for s in storage.crawl_sites(crawl, limit=2)] == ["a.example", "b.example"]
    storage.mark_crawl_sources([findings[0].id], ["b-feed"])
    assert storage.crawl_findings(crawl)[0].source_id == "b-feed"


def test_findings_come_by_depth_then_order_found(storage: Storage) -> None:
    crawl = storage.create_crawl(SEEDS, 2, 100, 1000, T0)
    a, b = storage.claim_crawl_site(crawl), storage.claim_crawl_site(crawl)
    assert a is not None and b is not None
    storage.finish_crawl_site(b.id, done("c.example", feed="https://b.example/f"))
    c_site = storage.crawl_sites(crawl, [SiteState.QUEUED])[0]
    storage.finish_crawl_site(a.id, done(feed="https://a.example/f"))
    storage.claim_crawl_site(crawl)
    storage.finish_crawl_site(c_site.id, done(feed="https://c.example/f"))
    findings = storage.crawl_findings(crawl)
    assert [(f.feed_url, f.depth, f.found_from) for f in findings] == [
        ("https://a.example/f", 0, ""), ("https://b.example/f", 0, ""),
        ("https://c.example/f", 1, "b.example")]
    storage.mark_crawl_sources([findings[2].id, findings[0].id], ["c", "a"])
    assert [f.source_id for f in storage.crawl_findings(crawl)] == ["a", None, "c"]


def test_a_stopped_crawl_resumes_from_what_is_stored(storage: Storage) -> None:
    crawl = storage.create_crawl(SEEDS, 2, 100, 1000, T0)
    a = storage.claim_crawl_site(crawl)
    assert a is not None and claimed(storage, crawl) == "b.example"
    storage.ask_crawl_page(crawl, a.id, "https://a.example/")
    storage.finish_crawl(crawl, at(5))
    stopped = storage.get_crawl(crawl)
    assert (stopped.state, stopped.finished_at) == ("done", at(5))
    assert storage.requeue_crawl_visits(crawl) == 2
    resumed = storage.get_crawl(crawl)
    assert (resumed.state, resumed.finished_at) == ("running", None)
    assert storage.crawl_counts(crawl).queued == 2
    assert storage.crawl_unanswered(crawl) == ["https://a.example/"]
    assert claimed(storage, crawl) == "a.example"  # the same order as before
    assert storage.requeue_crawl_visits(crawl) == 1


def test_a_unit_claims_and_finishes_in_one_transaction(storage: Storage) -> None:
    crawl = storage.create_crawl(SEEDS, 2, 100, 1000, T0)
    with storage.write() as unit:
        site = unit.claim_crawl_site(crawl)
        assert site is not None
        assert unit.finish_crawl_site(site.id, done("c.example")) == 1
    with pytest.raises(RuntimeError), storage.write() as unit:
        unit.claim_crawl_site(crawl)
        raise RuntimeError("rolled back")
    assert storage.crawl_counts(crawl) == CrawlCounts(queued=2, visiting=0, done=1, failed=0,
                                                      skipped=0, feeds=0, pages=0)


@pytest.mark.postgres
def test_concurrent_claims_and_asks_keep_the_limits() -> None:
    """PostgreSQL lets calls run at once: no site is handed out twice, the page limit
    holds and an address is asked for once."""
    with PostgresStorage(pgserver.schema_url(), pool_size=8) as pg:
        seeds = [(f"s{n}.example", f"https://s{n}.example/") for n in range(40)]
        crawl = pg.create_crawl(seeds, 1, 100, 25, T0)
        start = threading.Barrier(6)
        sites: list[str] = []
        asks: list[PageAsk] = []

        def work() -> None:
            start.wait()
            while (site := pg.claim_crawl_site(crawl)) is not None:
                sites.append(site.site)
                asks.append(pg.ask_crawl_page(crawl, site.id, "https://shared.example/")[0])
                asks.append(pg.ask_crawl_page(crawl, site.id, site.url)[0])

        threads = [threading.Thread(target=work) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(sites) == sorted(s for s, _ in seeds)
        # the shared address: new once, then asked; 24 sites' own pages fit in the limit
        assert (asks.count(PageAsk.NEW), asks.count(PageAsk.ASKED),
                asks.count(PageAsk.LIMIT)) == (25, 39, 16)
        assert pg.get_crawl(crawl).pages == pg.crawl_counts(crawl).pages == 25


@pytest.mark.postgres
def test_migrate_carries_crawls_both_ways(tmp_path: Path) -> None:
    from tidings.store.postgres._transfer import migrate_archive

    first = tmp_path / "first.sqlite3"
    with SqliteStorage(first) as lite:
        crawl = lite.create_crawl(SEEDS, 2, 100, 1000, T0)
        site = lite.claim_crawl_site(crawl)
        assert site is not None
        lite.ask_crawl_page(crawl, site.id, "https://a.example/")
        lite.finish_crawl_page(crawl, "https://a.example/", {"title": "Ä"})
        lite.ask_crawl_page(crawl, site.id, "https://a.example/x")
        lite.finish_crawl_site(site.id, done("c.example", feed="https://a.example/f"))
        before = (lite.crawl_sites(crawl), lite.crawl_findings(crawl),
                  lite.crawl_counts(crawl), lite.crawl_unanswered(crawl))
    target = pgserver.schema_url()
    counts = migrate_archive(first, target)
    assert (counts["crawls"], counts["crawl_sites"], counts["crawl_pages"],
            counts["crawl_feeds"]) == (1, 3, 2, 1)
    with PostgresStorage(target, pool_size=2) as pg:
        assert (pg.crawl_sites(crawl), pg.crawl_findings(crawl), pg.crawl_counts(crawl),
                pg.crawl_unanswered(crawl)) == before
        assert pg.ask_crawl_page(crawl, site.id, "https://a.example/") == (
            PageAsk.DONE, {"title": "Ä"})
        assert pg.create_crawl(SEEDS, 2, 100, 1000, T0) == crawl + 1  # sequences moved on
    back = tmp_path / "back.sqlite3"
    migrate_archive(target, back)
    with SqliteStorage(back) as again:
        assert again.crawl_findings(crawl) == before[1]
        assert len(again.list_crawls()) == 2
