"""Stories in the reader (R-DEDUP-12): one row per story with "+N sources", Trending by
heat, the article's other sources, why they are together, and the API's cluster and
heat; in real headless Chromium at 360 and 1280 px."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from lxml import etree

from test_web_support import (
    ServerThread,
    Spec,
    add_items,
    add_source,
    new_token,
    open_archive,
    run,
    serve_web,
)
from tidings.app import Tidings
from tidings.settings import load_settings
from tidings.web.feedwriter import TIDINGS_NS

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--no-first-run",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
SHOTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "screenshots"
COPIES = [
    ("wire", "Rust 1.85 released with the Rust 2024 edition",
     "The Rust team released Rust 1.85, which stabilizes the 2024 edition and async closures."),
    ("lab", "Rust 1.85 stabilizes the Rust 2024 edition and async closures",
     "Rust 1.85 is out today, stabilizing the Rust 2024 edition and async closures."),
    ("daily", "Announcing Rust 1.85.0 and Rust 2024",
     "The Rust team is happy to announce Rust 1.85.0, which stabilizes the 2024 edition and "
     "async closures."),
]


@dataclass
class Site:
    tid: Tidings
    server: ServerThread
    token: str
    story: list[int]
    alone: int


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    settings = load_settings(tmp_path_factory.mktemp("stories") / "data", env={})
    tid = open_archive(settings)
    for sid in ("wire", "lab", "daily"):
        add_source(tid, sid, sid.title())
    story = add_items(tid, [Spec(title, source_id=sid, summary=lead, body=None,
                                 age=timedelta(hours=3 - n))
                            for n, (sid, title, lead) in enumerate(COPIES)])
    (alone,) = add_items(tid, [Spec("Harbour fire closes the ferry terminal", source_id="lab",
                                    summary="Firefighters spent the night at the harbour.",
                                    age=timedelta(minutes=30))])
    assert run(tid.stories.cluster_pending) == 4
    token = new_token(tid, "stories")
    server = serve_web(tid, settings)
    yield Site(tid, server, token, story, alone)
    server.stop()
    tid.close()


def test_the_list_shows_one_row_per_story(site: Site) -> None:
    page = httpx.get(site.server.url + "/all").text
    assert page.count('class="title"') == 2
    assert "+2 sources" in page
    for item_id in site.story:
        assert f'href="/item/{item_id}"' in page


def test_trending_and_the_article_list_the_other_sources(site: Site) -> None:
    trending = httpx.get(site.server.url + "/trending").text
    assert "Trending" in trending and "+2 sources" in trending and "Harbour" not in trending
    article = httpx.get(f"{site.server.url}/item/{site.story[1]}").text
    assert "2 other sources of this story" in article
    assert f'href="/item/{site.story[0]}"' in article and f'href="/item/{site.story[2]}"' in article
    why = httpx.get(f"{site.server.url}/item/{site.story[1]}/story").text
    assert "similarity" in why and "rust" in why
    assert httpx.get(f"{site.server.url}/item/999999/story").status_code == 404


def test_the_api_carries_cluster_and_heat(site: Site) -> None:
    with httpx.Client(base_url=site.server.url + "/api/v1",
                      headers={"Authorization": f"Bearer {site.token}"}) as client:
        items = {i["id"]: i for i in client.get("/items", params={"view": "all"}).json()["items"]}
        assert {items[i]["cluster_id"] for i in site.story} == {site.story[0]}
        assert 2.0 < items[site.story[0]]["heat"] < 3.0
        assert items[site.alone]["cluster_id"] == site.alone
        assert items[site.alone]["heat"] == pytest.approx(1.0, abs=0.05)
        one = client.get(f"/items/{site.story[2]}").json()
        assert one["cluster_id"] == site.story[0] and one["heat"] > 2.0


def test_patch_answers_the_same_item_shape_as_get(site: Site) -> None:
    """A change of state answers the item with its story, as GET does (issue 32)."""
    with httpx.Client(base_url=site.server.url + "/api/v1",
                      headers={"Authorization": f"Bearer {site.token}"}) as client:
        got = client.get(f"/items/{site.story[1]}").json()
        patched = client.patch(f"/items/{site.story[1]}", json={"starred": True})
        assert patched.status_code == 200
        changed = patched.json()
        assert changed["starred"] is True and got["starred"] is False
        assert changed["cluster_id"] == got["cluster_id"] == site.story[0]
        assert changed["heat"] == pytest.approx(got["heat"], abs=0.01) and changed["heat"] > 2.0
        shared = set(changed) & set(got)
        assert shared == set(changed)
        assert {k: v for k, v in changed.items() if k not in {"starred", "heat"}} == \
            {k: got[k] for k in shared if k not in {"starred", "heat"}}
        client.patch(f"/items/{site.story[1]}", json={"starred": False})


def test_feeds_out_carry_cluster_and_heat(site: Site) -> None:
    """JSON Feed in its ``_tidings`` extension, Atom as ``<tidings:story>``."""
    auth = {"Authorization": f"Bearer {site.token}"}
    doc = httpx.get(site.server.url + "/feeds/all.json", headers=auth).json()
    ext = {int(i["id"]): i["_tidings"] for i in doc["items"]}
    assert {ext[i]["cluster_id"] for i in site.story} == {site.story[0]}
    assert 2.0 < ext[site.story[1]]["heat"] < 3.0
    assert ext[site.alone]["cluster_id"] == site.alone
    atom = etree.fromstring(httpx.get(site.server.url + "/feeds/all.atom", headers=auth).content)
    ns = {"a": "http://www.w3.org/2005/Atom", "t": TIDINGS_NS}
    stories = [e.find("t:story", ns) for e in atom.findall("a:entry", ns)]
    assert len(stories) == 4 and None not in stories
    assert {int(s.get("cluster")) for s in stories} == {site.story[0], site.alone}
    assert all(float(s.get("heat")) > 0.9 for s in stories)


@pytest.mark.browser
@pytest.mark.parametrize("width", [360, 1280])
def test_story_rows_in_a_browser(site: Site, tmp_path: Path, width: int) -> None:
    if not CHROMIUM.exists():
        pytest.skip("headless Chromium is missing: apt-get install chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        ctx: Any = p.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=str(CHROMIUM), args=ARGS, headless=True,
            viewport={"width": width, "height": 800})
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(site.server.url + "/all")
        more = page.locator("details.reprints summary", has_text="+2 sources")
        assert more.count() == 1
        more.click()
        links = page.locator("details.reprints[open] li a")
        assert links.count() == 2 and links.first.is_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.goto(site.server.url + "/trending")
        assert page.locator("#stories .story").count() == 1
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"trending-{width}.png"), full_page=True)
        page.goto(f"{site.server.url}/item/{site.story[0]}")
        assert page.locator("#story-sources li").count() == 2
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert not errors
        ctx.close()
