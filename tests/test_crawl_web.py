"""The crawler on a synthetic web of ~300 blogs (R-DISC-3): the expected feeds, once each.

See tests/crawlweb.py for the web: one loopback server answering for every
``*.test`` host, counting requests, with a known graph of blogrolls.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, replace

import pytest

from crawlweb import BAD, Web, build_web, web_app
from crawlweb import WebResolver as Resolver
from netservers import RecordingDialer, serve
from tidings.app import Tidings
from tidings.net import Fetcher
from tidings.pipeline.crawl import CrawlLimits, run_crawl, start_crawl
from tidings.pipeline.env import PipelineEnv
from tidings.settings import Settings
from tidings.store.crawl import SiteState

pytestmark = pytest.mark.slow


@dataclass
class World:
    web: Web
    tidings: Tidings
    env: PipelineEnv
    dialer: RecordingDialer


@pytest.fixture
async def world(settings: Settings) -> AsyncIterator[World]:
    web = build_web()
    async with serve(web_app(web)) as base:
        web.port = int(base.rsplit(":", 1)[1])
        t = Tidings.open(settings, create=True)
        dialer = RecordingDialer()
        fetcher = Fetcher(settings, resolver=Resolver(web), dial_hook=dialer)
        env = replace(t.pipeline_env(), fetcher=fetcher)
        try:
            yield World(web, t, env, dialer)
        finally:
            await fetcher.aclose()
            await t.aclose()


async def crawl(world: World, depth: int, **limits: int) -> int:
    seeds = [world.web.url(h) for h in world.web.seeds]
    crawl_id = await start_crawl(world.env, seeds, CrawlLimits(max_depth=depth, **limits))
    await run_crawl(world.env, crawl_id)
    return crawl_id


async def test_three_seeds_find_exactly_the_expected_feeds(world: World) -> None:
    crawl_id = await crawl(world, 3, max_sites=5000, max_pages=50_000)
    found = {f.feed_url: f.depth for f in world.env.store.crawl_findings(crawl_id)}
    expected = world.web.expected(3)
    assert len(expected) > 50
    assert found == expected
    # nothing asked twice, robots.txt disallows never asked, only loopback dialed
    twice = {key: n for key, n in world.web.requests.items() if n > 1}
    assert twice == {}
    assert not world.web.disallowed() & set(world.web.requests)
    assert {address for address, _ in world.dialer.dialed} == {"127.0.0.1"}


async def test_bad_sites_end_with_a_reason_and_the_crawl_goes_on(world: World) -> None:
    crawl_id = await crawl(world, 3, max_sites=5000, max_pages=50_000)
    rows = {s.site.split(":")[0]: s for s in world.env.store.crawl_sites(crawl_id, limit=10_000)}
    assert not any(s.state in (SiteState.QUEUED, SiteState.VISITING) for s in rows.values())
    words = {"loop": "redirect", "endless": "larger", "png": "not an HTML page",
             "huge-robots": "robots.txt is larger", "down": "robots.txt unreachable",
             "farm": "link farm", "echo200": "answer with an HTML page"}
    seen = set()
    for host, site in world.web.sites.items():
        row = rows.get(host)
        if row is None or site.kind not in words or (site.kind == "farm" and row.depth == 3):
            continue  # (a farm at the last level is not followed, so not a farm to us)
        seen.add(site.kind)
        assert words[site.kind] in row.reason, (site.kind, row.reason)
    farm_hosts = [h for h, s in world.web.sites.items() if s.kind == "farm"]
    for farm in farm_hosts:
        if farm in rows and rows[farm].depth < 3:
            assert sum(1 for r in rows.values() if r.found_from == farm) <= 100
    assert len(seen) >= 4  # the seeds reach most kinds of trouble
    assert set(BAD) >= seen


async def test_limits_are_never_exceeded(world: World) -> None:
    crawl_id = await crawl(world, 5, max_sites=40, max_pages=120)
    counts = world.env.store.crawl_counts(crawl_id)
    sites = world.env.store.crawl_sites(crawl_id, limit=10_000)
    assert len(sites) <= 40
    assert counts.pages <= 120
    assert sum(world.web.requests.values()) <= 120
    skipped = [s for s in sites if s.state is SiteState.SKIPPED]
    assert skipped and all(s.reason for s in skipped)


async def test_depth_zero_visits_the_seeds_only(world: World) -> None:
    crawl_id = await crawl(world, 0)
    sites = world.env.store.crawl_sites(crawl_id)
    assert sorted(s.site for s in sites) == sorted(world.web.seeds)
    found = {f.feed_url for f in world.env.store.crawl_findings(crawl_id)}
    assert found == set(world.web.expected(0))

