"""The reader in real headless Chromium: keyboard reading, search, themes, offline, XSS.

Needs the Debian package ``chromium`` (/usr/bin/chromium); driven by Playwright.
Screenshots of the main pages in both themes are written to
test-artifacts/screenshots/.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from test_web_support import (
    ServerThread,
    Spec,
    add_items,
    add_source,
    free_port,
    open_archive,
    serve_web,
)
from tidings.app import Tidings
from tidings.settings import Settings, load_settings

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run",
        # no name is ever resolved: hostile items point at made-up hosts
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
SHOTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "screenshots"

if not CHROMIUM.exists():
    pytest.skip("headless Chromium is missing: apt-get install chromium",
                allow_module_level=True)

from playwright.sync_api import BrowserContext, Page, sync_playwright  # noqa: E402

LONG_BODY = (
    "<p>人工智能 (AI) systems are now part of everyday software. This article looks at "
    "what changed this year and what did not.</p>"
    "<h2>Benchmarks</h2><table><thead><tr>"
    + "".join(f"<th>Column number {i}</th>" for i in range(12))
    + "</tr></thead><tbody><tr>"
    + "".join(f"<td>value {i} with some width</td>" for i in range(12))
    + "</tr></tbody></table>"
    "<pre><code>def a_very_long_function_name(argument_one, argument_two, argument_three,"
    " argument_four, argument_five): return argument_one + argument_two</code></pre>"
    '<p><img src="{base}/static/icon-512.png" alt="icon" width="512" height="512"></p>'
    + "<p>Paragraph of text that goes on for a while about models and data. </p>" * 8
)

XSS = [
    "<script>alert('s')</script>",
    "<img src=x onerror=alert('img')>",
    "<svg onload=alert('svg')><script>alert('svg2')</script></svg>",
    "<a href=\"javascript:alert('js')\">js link</a>",
    "<a href=\"data:text/html,<script>alert('data')</script>\">data link</a>",
    "<a href=\"&#106;avascript:alert('ent')\">entity link</a>",
    "<a href=\"jav&#x09;ascript:alert('tab')\">tab link</a>",
    "<iframe src=\"javascript:alert('if')\"></iframe>",
    "<body onload=alert('body')>",
    "<div style=\"background:url(javascript:alert('css'))\">css url</div>",
    "<p style=\"width: expression(alert('expr'))\">css expression</p>",
    "\"><script>alert('attr')</script>",
    "'><img src=x onerror=alert('attr2')>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert('mxss')>",
    "<noscript><p title=\"</noscript><img src=x onerror=alert('ns')>\">",
    "<form><button formaction=javascript:alert('form')>x</button></form>",
    "<object data=\"javascript:alert('obj')\"></object><embed src=\"javascript:alert('e')\">",
    "<details open ontoggle=alert('toggle')>d</details>",
    "<input autofocus onfocus=alert('focus')>",
    "<base href=\"javascript:/\">",
    "<meta http-equiv=\"refresh\" content=\"0;url=javascript:alert(1)\">",
    "<style>@import 'javascript:alert(1)'; body{background:red}</style>",
    "<<script>alert('nest')//<</script>", "<scr<script>ipt>alert('split')</script>",
    "<img src=\"x` `<script>alert('bt')</script>\"` `>", "<x onclick=alert('x')>click</x>",
    "<svg><a xlink:href=\"javascript:alert('xl')\"><text y=20>svg link</text></a></svg>",
    "<p>broken <b><i>markup</p></b> <table><td>cell",
]
HOSTILE_URLS = ["javascript:alert('url')", "data:text/html,<script>alert(1)</script>",
                " JaVaScRiPt:alert(1)", "vbscript:msgbox(1)"]


@dataclass
class Site:
    tid: Tidings
    server: ServerThread
    ids: dict[str, int] = field(default_factory=dict)


def _populate(tid: Tidings, base: str) -> dict[str, int]:
    add_source(tid, "wire", "The Wire")
    add_source(tid, "lab", "Lab Notes")
    add_source(tid, "daily", "每日新闻")
    add_source(tid, "evil", "<img src=x onerror=alert('source')>Evil")
    ids: dict[str, int] = {}
    news = [Spec(f"Morning story number {i}", source_id=("wire", "lab")[i % 2],
                 age=timedelta(minutes=10 + i)) for i in range(12)]
    for n, i in enumerate(add_items(tid, news)):
        ids[f"news{n}"] = i
    (ids["long"], ids["cjk"], ids["reprint"], ids["reprint2"]) = add_items(tid, [
        Spec("A long read about AI systems", source_id="lab",
             body=LONG_BODY.replace("{base}", base),
             age=timedelta(minutes=5), author="Ada Lovelace"),
        Spec("今天的人工智能新闻汇总", source_id="daily", age=timedelta(minutes=40),
             body="<p>关于人工智能和大语言模型的最新进展。</p>"),
        Spec("Big model launch", source_id="wire", age=timedelta(hours=3)),
        Spec("Big Model Launch!", source_id="daily", age=timedelta(hours=2)),
    ])
    hostile = [Spec(payload, source_id="evil", body=payload, summary=payload, author=payload,
                    url=HOSTILE_URLS[n % len(HOSTILE_URLS)], age=timedelta(days=2, minutes=n))
               for n, payload in enumerate(XSS)]
    for n, i in enumerate(add_items(tid, hostile)):
        ids[f"xss{n}"] = i
    return ids


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    settings = load_settings(tmp_path_factory.mktemp("site") / "data", env={})
    tid = open_archive(settings)
    port = free_port()
    ids = _populate(tid, f"http://127.0.0.1:{port}")
    server = serve_web(tid, settings, port)
    yield Site(tid, server, ids)
    server.stop()
    tid.close()


@pytest.fixture(scope="module")
def playwright_() -> Iterator[Any]:
    with sync_playwright() as p:
        yield p


def _context(playwright_: Any, tmp: Path, **kw: Any) -> BrowserContext:
    ctx: BrowserContext = playwright_.chromium.launch_persistent_context(
        str(tmp), executable_path=str(CHROMIUM), args=ARGS, headless=True, **kw)
    return ctx


@pytest.fixture
def browser(playwright_: Any, tmp_path: Path) -> Iterator[BrowserContext]:
    ctx = _context(playwright_, tmp_path / "profile", viewport={"width": 1100, "height": 800})
    yield ctx
    ctx.close()


@dataclass
class Watch:
    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def watched(page: Page) -> Watch:
    """Every dialog (alert/confirm) and console error of the page, recorded."""
    seen = Watch()

    def on_dialog(dialog: Any) -> None:
        seen.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("console", lambda m: seen.errors.append(m.text)
            if m.type == "error" and not m.text.startswith("Failed to load resource") else None)
    page.on("pageerror", lambda e: seen.errors.append(str(e)))
    return seen


def wait_for(check: Callable[[], bool], timeout: float = 8.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.05)


def test_read_through_a_list_with_the_keyboard(site: Site, browser: BrowserContext) -> None:
    page = browser.new_page()
    watch = watched(page)
    page.goto(site.server.url + "/")
    rows = page.locator("#items .row[data-id]")
    assert rows.count() >= 10
    page.keyboard.press("j")
    assert "cursor" in (rows.nth(0).get_attribute("class") or "")
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("k")
    assert "cursor" in (rows.nth(1).get_attribute("class") or "")
    second = int(rows.nth(1).get_attribute("data-id") or 0)
    page.keyboard.press("m")  # mark read without opening
    wait_for(lambda: site.tid.items.get(second).read)
    assert "unread" not in (rows.nth(1).get_attribute("class") or "")
    page.keyboard.press("j")
    third = int(rows.nth(2).get_attribute("data-id") or 0)
    page.keyboard.press("o")
    page.wait_for_url(f"**/item/{third}")
    wait_for(lambda: site.tid.items.get(third).read)  # mark-as-read on open
    page.keyboard.press("s")
    wait_for(lambda: site.tid.items.get(third).starred)
    assert page.locator("#btn-star").get_attribute("aria-pressed") == "true"
    page.keyboard.press("u")
    page.wait_for_url(site.server.url + "/")
    assert "cursor" in (page.locator("#items .row[data-id]").nth(2).get_attribute("class") or "")
    page.keyboard.press("A")  # everything above the cursor, and it, is read
    first = int(rows.nth(0).get_attribute("data-id") or 0)
    wait_for(lambda: site.tid.items.get(first).read)
    page.keyboard.press("?")
    assert page.locator("#help").is_visible()
    page.keyboard.press("Escape")
    assert not page.locator("#help").is_visible()
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "q"
    page.keyboard.press("Escape")
    page.keyboard.press("g")
    page.keyboard.press("s")
    page.wait_for_url("**/starred")
    assert page.locator(f'#items .row[data-id="{third}"]').count() == 1
    assert not watch.dialogs and not watch.errors, watch


def test_search_in_chinese_highlights_the_terms(site: Site, browser: BrowserContext) -> None:
    page = browser.new_page()
    watch = watched(page)
    page.goto(site.server.url + "/")
    page.keyboard.press("/")
    page.keyboard.type("人工智能")
    page.keyboard.press("Enter")
    page.wait_for_url("**/search?q=*")
    marks = page.locator("#items mark")
    assert marks.count() >= 1
    assert set(marks.all_inner_texts()) == {"人工智能"}
    page.locator("#items a.title").first.click()
    page.wait_for_url(re.compile(r".*/item/\d+\?q=.*"))
    body_marks = page.locator(".article mark").all_inner_texts()
    assert "人工智能" in body_marks
    assert not watch.dialogs and not watch.errors, watch


def _background(page: Page) -> str:
    return str(page.evaluate("getComputedStyle(document.body).backgroundColor"))


def test_dark_mode_follows_the_system_and_toggles(site: Site, browser: BrowserContext) -> None:
    page = browser.new_page()
    page.emulate_media(color_scheme="light")
    page.goto(site.server.url + f"/item/{site.ids['long']}")
    light = _background(page)
    page.emulate_media(color_scheme="dark")
    system_dark = _background(page)
    assert system_dark != light
    page.emulate_media(color_scheme="light")
    page.locator("#theme-toggle").click()  # system -> dark
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    assert _background(page) == system_dark
    page.reload()
    assert _background(page) == system_dark  # the choice is remembered
    page.keyboard.press("t")  # dark -> light
    page.emulate_media(color_scheme="dark")
    assert _background(page) == light  # an explicit light beats a dark system
    page.keyboard.press("t")  # light -> follow the system again
    assert _background(page) == system_dark


def test_article_view_is_built_for_reading(site: Site, browser: BrowserContext) -> None:
    page = browser.new_page()
    page.goto(site.server.url + f"/item/{site.ids['long']}")
    img = page.locator(".body img").first
    assert img.get_attribute("loading") == "lazy" and img.get_attribute("decoding") == "async"
    wrap = page.locator(".body .table-wrap").first
    assert wrap.evaluate("e => getComputedStyle(e).overflowX") == "auto"
    pre = page.locator(".body pre").first
    assert pre.evaluate("e => [getComputedStyle(e).whiteSpace, getComputedStyle(e).overflowX,"
                        " getComputedStyle(e).fontSize]") == ["pre", "auto", "13px"]
    assert "The Wire" in page.locator(".byline").inner_text() or \
        "Lab Notes" in page.locator(".byline").inner_text()
    page.mouse.wheel(0, 2500)
    assert page.locator(".byline").is_visible()  # source and time stay in view
    assert page.locator(".byline time").is_visible()


PAGES_360 = ["/", "/all", "/unread", "/starred", "/search?q=人工智能", "/sources",
             "/sources/lab", "/add", "/settings", "/review", "/offline", "/source/daily"]


def test_every_page_fits_a_360px_screen(site: Site, playwright_: Any, tmp_path: Path) -> None:
    ctx = _context(playwright_, tmp_path / "p360", viewport={"width": 360, "height": 740},
                   device_scale_factor=2, is_mobile=True, has_touch=True)
    try:
        page = ctx.new_page()
        paths = [*PAGES_360, f"/item/{site.ids['long']}", f"/item/{site.ids['xss0']}"]
        for path in paths:
            page.goto(site.server.url + path)
            overflow = page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth")
            assert overflow <= 0, f"{path} scrolls sideways by {overflow}px at 360px"
        SHOTS.mkdir(parents=True, exist_ok=True)
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            page.goto(site.server.url + "/")
            page.screenshot(path=str(SHOTS / f"mobile-today-{scheme}.png"))
            page.goto(site.server.url + f"/item/{site.ids['long']}")
            page.screenshot(path=str(SHOTS / f"mobile-article-{scheme}.png"))
    finally:
        ctx.close()


def test_screenshots_of_the_main_pages_in_both_themes(site: Site, browser: BrowserContext) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page()
    shots = {"today": "/", "all": "/all", "article": f"/item/{site.ids['long']}",
             "search": "/search?q=人工智能", "sources": "/sources", "source": "/sources/lab",
             "add": "/add", "settings": "/settings", "review": "/review"}
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        for name, path in shots.items():
            page.goto(site.server.url + path)
            target = SHOTS / f"{name}-{scheme}.png"
            page.screenshot(path=str(target), full_page=name != "all")
            assert target.stat().st_size > 5000
    page.goto(site.server.url + "/")
    page.keyboard.press("?")
    page.screenshot(path=str(SHOTS / "help-dark.png"))


def test_hostile_items_never_run_script(site: Site, browser: BrowserContext) -> None:
    page = browser.new_page()
    watch = watched(page)
    paths = ["/all", "/source/evil", "/search?q=alert", "/search?q=script",
             *(f"/item/{site.ids[f'xss{n}']}?q=alert" for n in range(len(XSS)))]
    for path in paths:
        page.goto(site.server.url + path)
        page.wait_for_load_state("load")
        handlers = page.evaluate("""() => [...document.querySelectorAll('*')].flatMap(
            e => [...e.attributes].filter(a => /^on/i.test(a.name)).map(a => a.name))""")
        assert handlers == [], (path, handlers)
        bad_links = page.evaluate("""() => [...document.querySelectorAll(
            '[href],[src],[action],[formaction],[data]')].map(e => e.href || e.src || e.action
            || '').filter(u => u && !/^(https?:|about:blank)/i.test(u))""")
        assert bad_links == [], (path, bad_links)
        scripts = page.evaluate("[...document.scripts].map(s => s.src)")
        assert all(s.startswith(site.server.url + "/static/") for s in scripts), scripts
        for link in page.locator(".body a").all()[:3]:
            link.click(modifiers=["Control"], no_wait_after=True)  # would run javascript:
    time.sleep(0.3)
    csp = [e for e in watch.errors if "Content Security Policy" in e]
    assert not watch.dialogs, watch.dialogs
    assert not csp, csp  # nothing even tried to run (CSP is the second wall, not the first)


def test_offline_reading_and_queued_changes(playwright_: Any, tmp_path: Path) -> None:
    settings: Settings = load_settings(tmp_path / "data", env={})
    tid = open_archive(settings)
    add_source(tid, "wire", "The Wire")
    first, second, never = add_items(tid, [
        Spec("Offline article one", source_id="wire", age=timedelta(minutes=1)),
        Spec("Offline article two", source_id="wire", age=timedelta(minutes=2)),
        Spec("Never opened", source_id="wire", age=timedelta(minutes=3)),
    ])
    server = serve_web(tid, settings)
    ctx = _context(playwright_, tmp_path / "profile", viewport={"width": 1000, "height": 800})
    try:
        page = ctx.new_page()
        watch = watched(page)
        page.goto(server.url + "/")
        page.evaluate("navigator.serviceWorker.ready.then(() => true)")
        page.reload()  # now controlled by the service worker
        assert page.evaluate("!!navigator.serviceWorker.controller")
        for item_id in (first, second):
            page.goto(f"{server.url}/item/{item_id}")
            wait_for(lambda i=item_id: tid.items.get(i).read)  # type: ignore[misc]
        page.goto(server.url + "/")
        wait_for(lambda: page.evaluate(
            "caches.open('tidings-articles-v1').then(c => c.keys()).then(k => k.length)") == 2)
        server.stop()
        ctx.set_offline(True)
        page.goto(f"{server.url}/item/{first}")
        assert page.locator("h1").inner_text() == "Offline article one"
        page.keyboard.press("s")  # star it while offline: queued
        page.keyboard.press("m")  # and mark it unread again
        # the cached copy still says "unread", so opening it queued a "read" first
        wait_for(lambda: len(page.evaluate("JSON.parse(localStorage['tidings-queue'] || '[]')"))
                 == 3)
        page.goto(f"{server.url}/item/{never}")
        assert "Offline" in page.locator("h1").inner_text()  # not kept: the offline page
        assert "Offline article one" in page.locator("#offline-list").inner_text()
        assert not tid.items.get(first).starred
        server.start()
        ctx.set_offline(False)  # the "online" event replays the queue
        wait_for(lambda: tid.items.get(first).starred and not tid.items.get(first).read, timeout=20)
        wait_for(lambda: page.evaluate("localStorage['tidings-queue']") == "[]")
        assert not watch.dialogs
    finally:
        ctx.close()
        server.stop()
        tid.close()


def test_manifest_makes_it_installable(site: Site, browser: BrowserContext) -> None:
    page = browser.new_page()
    page.goto(site.server.url + "/")
    manifest = page.evaluate("fetch('/manifest.webmanifest').then(r => r.json())")
    assert manifest["display"] == "standalone" and manifest["start_url"] == "/"
    sizes = {i["sizes"] for i in manifest["icons"]}
    assert {"192x192", "512x512"} <= sizes
    for icon in manifest["icons"]:
        status = page.evaluate(f"fetch('{icon['src']}').then(r => r.status)")
        assert status == 200
    assert os.path.exists(Path(__file__).resolve().parent.parent / "src/tidings/web/static/sw.js")
