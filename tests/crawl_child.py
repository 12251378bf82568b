"""Run (or resume) a crawl of the synthetic web in a process of its own, to be killed.

``python tests/crawl_child.py DATA_DIR PORT DEPTH``: the web is rebuilt from its
seed (the same every time), the crawl is the newest one in DATA_DIR or a new
one from the web's seeds. Used by tests/test_crawl_resume.py, which sends
SIGKILL at random moments.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from dataclasses import replace
from pathlib import Path

from crawlweb import WebResolver, build_web
from tidings.app import Tidings
from tidings.net import Fetcher
from tidings.pipeline.crawl import CrawlLimits, run_crawl, start_crawl
from tidings.settings import load_settings


async def main(data: Path, port: int, depth: int) -> None:
    web = build_web()
    web.port = port
    settings = load_settings(data, env={}, overrides={"allow_private_hosts": "127.0.0.1",
                                                      "per_host_delay": 0})
    tidings = Tidings.open(settings, create=True)
    fetcher = Fetcher(settings, resolver=WebResolver(web))
    env = replace(tidings.pipeline_env(), fetcher=fetcher)
    try:
        crawls = env.store.list_crawls(limit=1)
        if crawls:
            crawl_id = crawls[0].id
        else:
            seeds = [web.url(h) for h in web.seeds]
            crawl_id = await start_crawl(env, seeds, CrawlLimits(depth, 5000, 50_000))
        await run_crawl(env, crawl_id, workers=8)
    finally:
        await fetcher.aclose()
        await tidings.aclose()


if __name__ == "__main__":
    # a parent that ignores Ctrl-C (a test runner may) hands that on through exec;
    # this child stands for a crawl a person started, which Ctrl-C interrupts
    signal.signal(signal.SIGINT, signal.default_int_handler)
    asyncio.run(main(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])))
