"""The blogroll crawl with its archive on PostgreSQL: the same finds as the walk the
spec describes, no page asked twice, robots.txt obeyed (R-DISC-3, R-STORE-2)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import pgserver
from crawlweb import WebResolver, build_web, web_app
from netservers import serve
from tidings.app import Tidings
from tidings.net import Fetcher
from tidings.pipeline.crawl import CrawlLimits, run_crawl, start_crawl
from tidings.settings import load_settings
from tidings.store.postgres import PostgresStorage

pytestmark = pytest.mark.postgres

DEPTH = 2


async def test_a_crawl_on_postgresql_finds_what_the_walk_names(tmp_path: Path) -> None:
    web = build_web()
    async with serve(web_app(web)) as base:
        web.port = int(base.rsplit(":", 1)[1])
        settings = load_settings(tmp_path, env={}, overrides={
            "allow_private_hosts": "127.0.0.1", "per_host_delay": 0,
            "database_url": pgserver.schema_url()})
        tidings = Tidings.open(settings, create=True)
        fetcher = Fetcher(settings, resolver=WebResolver(web))
        env = replace(tidings.pipeline_env(), fetcher=fetcher)
        assert isinstance(env.store, PostgresStorage)
        try:
            crawl_id = await start_crawl(env, [web.url(h) for h in web.seeds],
                                         CrawlLimits(DEPTH, 5000, 50_000))
            await run_crawl(env, crawl_id, workers=8)
            found = {f.feed_url: f.depth for f in env.store.crawl_findings(crawl_id)}
            assert env.store.crawl_unanswered(crawl_id) == []
            assert env.store.get_crawl(crawl_id).state == "done"
        finally:
            await fetcher.aclose()
            await tidings.aclose()
    assert found == web.expected(DEPTH)
    assert not {key: n for key, n in web.requests.items() if n > 1}
    assert not web.disallowed() & set(web.requests)
