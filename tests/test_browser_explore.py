"""The Explore page in headless Chromium (R-DISC-3): crawl, watch, tick, add; 360 and 1280 px.

The four blogs live on 127.0.0.2-5 (see test_crawl_cli.py); the browser only
ever talks to the reader on 127.0.0.1, the crawl runs inside the reader.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from playwright.sync_api import Page, sync_playwright

from farm import serve_app
from test_browser_reader import ARGS, CHROMIUM, SHOTS  # skips this module without Chromium
from test_crawl_cli import HOSTS, blog
from test_web_support import free_port, open_archive
from tidings.app import Tidings
from tidings.settings import load_settings
from tidings.web import create_app

pytestmark = pytest.mark.browser


@pytest.fixture
def blogs() -> Iterator[dict[str, str]]:
    bases: dict[str, str] = {}
    requests: Counter[str] = Counter()
    with ExitStack() as stack:
        for name, host in zip("abcd", HOSTS, strict=True):
            bases[name] = stack.enter_context(serve_app(blog(name, bases, requests), host))
        yield bases


@contextmanager
def reader(tid: Tidings, settings: Any) -> Iterator[str]:
    """The reader on a loop of our own, so the crawl's fetcher is closed on the loop that
    opened it when the test ends (as ``tidings serve`` does)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(tid, settings, page_ttl=0),
                                           host="127.0.0.1", port=port, log_level="warning",
                                           lifespan="off"))
    serving = asyncio.run_coroutine_threadsafe(server.serve(), loop)
    while not server.started:
        assert not serving.done(), "uvicorn did not start"
        threading.Event().wait(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        serving.result(10)
        asyncio.run_coroutine_threadsafe(tid.fetcher.aclose(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def no_sideways_scroll(page: Page) -> None:
    width = page.evaluate("document.documentElement.clientWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def test_explore_crawls_and_adds_the_ticked_feeds(tmp_path: Path, blogs: dict[str, str]) -> None:
    settings = load_settings(tmp_path / "data", env={}, overrides={
        "allow_private_hosts": "127.0.0.0/8", "per_host_delay": 0})
    tid = open_archive(settings)
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        with reader(tid, settings) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            wide = browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[Any] = []

            def record(error: Any) -> None:
                errors.append(error)

            wide.on("pageerror", record)
            wide.goto(url + "/explore")
            wide.fill("textarea[name=seeds]", blogs["a"] + "/")
            wide.select_option("select[name=depth]", "1")
            wide.click("text=Start crawl")
            wide.wait_for_url("**/explore?crawl=*")
            wide.wait_for_selector("text=feeds 3", timeout=30_000)
            wide.wait_for_selector("h2 .tag.ok", timeout=30_000)  # "done", reloads stop
            finds = wide.locator(".find")
            assert finds.count() == 3
            assert "Blog B writes about tea" in wide.locator(".find-abstract").nth(1).inner_text()
            assert "1 sites failed or were skipped" in wide.content()
            no_sideways_scroll(wide)
            wide.screenshot(path=str(SHOTS / "explore-1280.png"), full_page=True)

            wide.locator(".find input[type=checkbox]").nth(0).check()
            wide.locator(".find input[type=checkbox]").nth(2).check()
            wide.click("text=Add ticked feeds")
            wide.wait_for_selector("text=Added 2 sources")
            assert sorted(s.url for s in tid.sources.all()) == sorted(
                [blogs["a"] + "/feed.xml", blogs["d"] + "/feed.xml"])
            assert wide.locator(".find .tag.ok").count() == 2

            phone = browser.new_page(viewport={"width": 360, "height": 780},
                                     color_scheme="dark")
            phone.on("pageerror", record)
            phone.goto(wide.url)
            assert phone.locator(".find").count() == 3
            no_sideways_scroll(phone)
            box = phone.locator(".finds-form button").bounding_box()
            assert box is not None and box["x"] + box["width"] <= 360
            phone.screenshot(path=str(SHOTS / "explore-360-dark.png"), full_page=True)
            assert errors == []
            browser.close()
    finally:
        tid.close()
