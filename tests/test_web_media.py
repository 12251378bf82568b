"""``/media``: localized images served (issue 16: every such image was a 404)."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from extract_site import GIF, PNG, Entry, Site, article_page
from farm import serve_app
from test_web_support import open_archive, serve_web, store_password
from tidings.app import ItemQuery, Tidings
from tidings.model import BodyState
from tidings.settings import Settings

CHROMIUM = Path("/usr/bin/chromium")


def _put(settings: Settings, data: bytes, ext: str) -> str:
    digest = hashlib.sha256(data).hexdigest()
    folder = settings.data_dir / "media" / digest[:2] / digest[2:4]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{digest}.{ext}").write_bytes(data)
    return f"/media/{digest[:2]}/{digest[2:4]}/{digest}.{ext}"


@pytest.fixture
def web(settings: Settings) -> Iterator[httpx.Client]:
    tid = open_archive(settings)
    server = serve_web(tid, settings)
    with httpx.Client(base_url=server.url) as client:
        yield client
    server.stop()
    tid.close()


def test_an_image_is_served_immutable_with_the_type_its_bytes_say(
    web: httpx.Client, settings: Settings,
) -> None:
    png = web.get(_put(settings, PNG, "png"))
    assert png.status_code == 200 and png.content == PNG
    assert png.headers["content-type"] == "image/png"
    assert png.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert png.headers["x-content-type-options"] == "nosniff"
    misnamed = web.get(_put(settings, GIF, "jpg"))  # the name says jpg, the bytes gif
    assert misnamed.status_code == 200 and misnamed.headers["content-type"] == "image/gif"


def test_only_stored_images_and_nothing_else(web: httpx.Client, settings: Settings) -> None:
    html = b"<html><script>alert('MARK-9137')</script></html>"
    not_image = _put(settings, html, "png")
    (settings.data_dir / "secret.txt").write_text("TOPSECRET-7731")
    good = _put(settings, PNG, "png")
    wrong_folder = "/media/00/00/" + good.rsplit("/", 1)[1]
    for path in [not_image, wrong_folder, "/media/", "/media/ab/", "/media/ab/cd/",
                 "/media/../secret.txt", "/media/%2e%2e/%2e%2e/secret.txt",
                 "/media/..%2f..%2fsecret.txt/x/y", good.replace(".png", ".svg"),
                 good.upper()]:
        response = web.get(path)
        assert response.status_code == 404, path
        assert b"TOPSECRET-7731" not in response.content
        assert b"MARK-9137" not in response.content


def test_media_needs_a_reader_in_private_mode(settings: Settings) -> None:
    tid = open_archive(settings)
    store_password(tid, "correct horse battery")
    server = serve_web(tid, settings)
    try:
        path = _put(settings, PNG, "png")
        response = httpx.get(server.url + path, follow_redirects=False)
        assert response.status_code in (302, 303) and "/login" in response.headers["location"]
    finally:
        server.stop()
        tid.close()


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="apt-get install chromium")
def test_an_extracted_articles_image_renders_in_chromium(settings: Settings) -> None:
    from playwright.sync_api import sync_playwright

    site = Site()
    with serve_app(site.app()) as base:
        site.base = base
        site.page("/a/1", article_page(1, title="Gates open", images=("/img/1.png",)))
        site.image("/img/1.png")
        site.feeds["/feed.xml"] = [Entry("Gates open", "/a/1")]

        async def collect() -> None:
            t = Tidings.open(settings, create=True)
            await t.sources.create(base + "/feed.xml", source_id="gazette")
            await t.collection.round()
            await t.aclose()

        asyncio.run(collect())
    tid = open_archive(settings)
    item = next(i for i in tid.items.query(ItemQuery()) if i.title == "Gates open")
    assert item.body_state is BodyState.OK and item.body and 'src="/media/' in item.body
    server = serve_web(tid, settings)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                        args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page()
            statuses: list[int] = []
            page.on("response", lambda r: statuses.append(r.status)
                    if "/media/" in r.url else None)
            page.goto(f"{server.url}/item/{item.id}")
            img = page.locator("article img[src^='/media/']").first
            img.wait_for()
            page.wait_for_function(
                "() => [...document.images].some(i => i.src.includes('/media/') && i.complete)")
            assert img.evaluate("i => i.naturalWidth") > 0
            assert statuses and all(s == 200 for s in statuses)
            browser.close()
    finally:
        server.stop()
        tid.close()
