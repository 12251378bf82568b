"""Navigation by folder and source (issue 32) in real headless Chromium, at 360 and
1280 px in both themes: the sidebar (a drawer on a phone) shows the counts the API
gives, a folder is marked read and the undo takes back exactly that, J/K walk the
sources, the header is one row, the password note is one line or gone, and no page
scrolls sideways. Screenshots go to test-artifacts/screenshots/."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from test_web_support import (
    ServerThread,
    Spec,
    add_items,
    add_source,
    open_archive,
    run,
    serve_web,
    write,
)
from tidings.app import SourceUpdate, Tidings
from tidings.model import RunCounts, RunOutcome
from tidings.settings import load_settings

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--no-first-run",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
SHOTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "screenshots"
if not CHROMIUM.exists():
    pytest.skip("headless Chromium is missing: apt-get install chromium",
                allow_module_level=True)

from playwright.sync_api import BrowserContext, Page, sync_playwright  # noqa: E402

WIDTHS = {"phone": {"width": 360, "height": 740}, "wide": {"width": 1280, "height": 800}}
STORY = [("wire", "Rust 1.85 released with the Rust 2024 edition",
          "The Rust team released Rust 1.85, which stabilizes the 2024 edition."),
         ("lab", "Rust 1.85 stabilizes the Rust 2024 edition",
          "Rust 1.85 is out today, stabilizing the Rust 2024 edition."),
         ("daily", "Announcing Rust 1.85.0 and Rust 2024",
          "The Rust team is happy to announce Rust 1.85.0, which stabilizes the 2024 "
          "edition.")]
#: news that is nobody's reprint: every source tells its own (stories are by meaning,
#: so "Item 1 of wire" and "Item 1 of lab" would be one story)
OTHER_NEWS = ["Harbour bridge repainted in blue", "Local bakery wins a national prize",
              "Chess final ends in a draw", "Mars rover finds clay in a crater",
              "Jazz festival sells out in an hour", "City council cuts bus fares",
              "New bird species described in Peru", "Glacier retreat measured by drones",
              "Violin maker opens a school", "Marathon route changes for roadworks",
              "Library extends its opening hours", "Rare orchid blooms in a greenhouse",
              "Ferry strike called off", "Museum returns a bronze statue",
              "Solar farm approved on old airfield", "Robot vacuum recalled over batteries",
              "Coffee prices climb after frost", "Tennis star retires at 34",
              "Volcanic ash grounds flights in the north", "Theatre reopens after a fire",
              "Record wheat harvest in the plains", "Submarine cable repaired at sea",
              "Snowstorm closes mountain schools", "Old mill becomes a hotel"]
REASON = "HTTP 503 from wire.example: the server is busy; tried again in 30 minutes"


@dataclass
class Site:
    tid: Tidings
    server: ServerThread
    news: list[int]  # the items of the folder "News" (wire and lab)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    settings = load_settings(tmp_path_factory.mktemp("nav") / "data", env={})
    tid = open_archive(settings)
    for sid, title in (("wire", "The Wire"), ("lab", "Lab Notes"), ("daily", "Daily Post"),
                       ("blog", "A Blog"), ("quiet", "Quiet Feed")):
        add_source(tid, sid, title)
    write(tid, lambda unit: unit.add_folder("News"))
    write(tid, lambda unit: unit.add_folder("Tech & Science"))
    for sid, folder in (("wire", "News"), ("lab", "News"), ("blog", "Tech & Science")):
        write(tid, lambda unit, s=sid, f=folder: unit.update_source(s, SourceUpdate(folder=f)))
    story = add_items(tid, [Spec(t, source_id=s, summary=lead, body=None,
                                 age=timedelta(hours=3 - n))
                            for n, (s, t, lead) in enumerate(STORY)])
    more = add_items(tid, [Spec(OTHER_NEWS[4 * n + k], source_id=s,
                                age=timedelta(hours=5 * n + 1))
                           for n in range(6) for k, s in enumerate(("wire", "lab", "daily",
                                                                      "blog"))])
    old = add_items(tid, [Spec("History", source_id="wire", age=timedelta(days=9),
                               backfill=True)])
    run(lambda: tid.items.mark_read(more[:3], True))  # some read already: an undo keeps them read
    run(lambda: tid.items.star([more[4], more[9]], True))
    assert run(tid.stories.cluster_pending) >= 3
    now = datetime.now(UTC)
    run_id = write(tid, lambda unit: unit.start_run("wire", now - timedelta(minutes=9)))
    write(tid, lambda unit: unit.finish_run(run_id, now - timedelta(minutes=8), RunCounts(
        RunOutcome.FAILED, error=REASON, http_status=503)))
    news = [i for i in [*story, *more, *old] if tid.items.get(i).source_id in ("wire", "lab")]
    server = serve_web(tid, settings)
    yield Site(tid, server, news)
    server.stop()
    tid.close()


@pytest.fixture(scope="module")
def playwright_() -> Iterator[Any]:
    with sync_playwright() as p:
        yield p


def _context(playwright_: Any, tmp: Path, size: str, scheme: str = "light",
             script: bool = True) -> BrowserContext:
    phone = size == "phone"
    ctx: BrowserContext = playwright_.chromium.launch_persistent_context(
        str(tmp), executable_path=str(CHROMIUM), args=ARGS, headless=True,
        viewport=WIDTHS[size], device_scale_factor=2 if phone else 1, is_mobile=phone,
        has_touch=phone, color_scheme=scheme, java_script_enabled=script)
    return ctx


@dataclass
class Browser:
    size: str  # phone (360 px) or wide (1280 px)
    scheme: str  # light or dark
    ctx: BrowserContext

    @property
    def name(self) -> str:
        return f"{self.size}-{self.scheme}"


@pytest.fixture(params=[(size, scheme) for size in sorted(WIDTHS)
                        for scheme in ("light", "dark")], ids="-".join)
def browser(request: pytest.FixtureRequest, playwright_: Any,
            tmp_path: Path) -> Iterator[Browser]:
    size, scheme = request.param
    ctx = _context(playwright_, tmp_path / "profile", size, scheme)
    yield Browser(size, scheme, ctx)
    ctx.close()


def _api_counts(page: Page) -> dict[str, Any]:
    counts: dict[str, Any] = page.evaluate(
        "fetch('/api/v1/counts', {credentials: 'same-origin'}).then(r => r.json())")
    return counts


def _page_counts(page: Page) -> dict[str, Any]:
    """What the sidebar shows, in the API's shape (an empty count is 0)."""
    shown: dict[str, Any] = page.evaluate("""() => {
      const n = el => Number((el && el.textContent.trim()) || 0);
      const bar = document.getElementById('sidebar');
      const src = a => ({id: a.dataset.source, unread: n(a.querySelector('.count'))});
      const out = {folders: [], sources: []};
      for (const v of ['today', 'all', 'starred', 'trending'])
        out[v] = n(bar.querySelector(`[data-count="${v}"]`));
      for (const f of bar.querySelectorAll('details.folder'))
        out.folders.push({name: f.dataset.folder,
                          unread: n(f.querySelector('summary .count')),
                          sources: [...f.querySelectorAll('a[data-source]')].map(src)});
      out.sources = [...bar.querySelectorAll('.side-sources a[data-source]')].map(src);
      return out;
    }""")
    return shown


def _as_shown(api: dict[str, Any]) -> dict[str, Any]:
    def src(s: dict[str, Any]) -> dict[str, Any]:
        return {"id": s["id"], "unread": s["unread"]}

    return {**{v: api[v] for v in ("today", "all", "starred", "trending")},
            "folders": [{"name": f["name"], "unread": f["unread"],
                         "sources": [src(s) for s in f["sources"]]} for f in api["folders"]],
            "sources": [src(s) for s in api["sources"]]}


def _overflow(page: Page) -> int:
    return int(page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"))


def _open_sidebar(page: Page, size: str) -> None:
    bar = page.locator("#sidebar")
    if size == "phone":
        assert not bar.is_visible(), "the drawer starts closed on a phone"
        page.locator("#drawer-toggle").click()
    else:
        assert not page.locator("#drawer-toggle").is_visible()
    bar.wait_for(state="visible")
    page.wait_for_function(
        "() => document.getElementById('sidebar').getBoundingClientRect().left >= 0")
    box = bar.bounding_box()
    assert box is not None and box["x"] >= 0
    assert box["x"] + box["width"] <= WIDTHS[size]["width"]


def test_the_sidebar_shows_the_counts_the_api_gives(
        site: Site, browser: Browser) -> None:
    size, ctx = browser.size, browser.ctx
    page = ctx.new_page()
    SHOTS.mkdir(parents=True, exist_ok=True)
    for path in ("/", "/folder/Tech%20%26%20Science", "/trending"):
        page.goto(site.server.url + path)
        _open_sidebar(page, size)
        shown = _page_counts(page)
        api = _api_counts(page)
        assert shown == _as_shown(api), path
        assert api["trending"] == 1 and api["starred"] == 2
        assert [f["name"] for f in api["folders"]] == ["News", "Tech & Science"]
        assert [s["id"] for s in api["sources"]] == ["daily", "quiet"]
        assert api["all"] == sum(f["unread"] for f in api["folders"]) + \
            sum(s["unread"] for s in api["sources"])
        assert _overflow(page) <= 0
        name = path.strip("/").split("/")[0] or "today"
        page.screenshot(path=str(SHOTS / f"nav-sidebar-{name}-{browser.name}.png"))


def test_mark_a_folder_read_and_undo(site: Site, browser: Browser) -> None:
    size, ctx = browser.size, browser.ctx
    page = ctx.new_page()
    before = {i: site.tid.items.get(i).read for i in site.news}
    assert not all(before.values()) and any(before.values())
    page.goto(site.server.url + "/folder/News")
    counts = _api_counts(page)
    news = next(f for f in counts["folders"] if f["name"] == "News")
    assert news["unread"] == sum(not r for r in before.values())
    page.locator("#mark-scope").click()
    page.wait_for_url("**/folder/News?marked=*")
    note = page.locator("#marked-note")
    assert f"Marked {news['unread']} items of News as read" in note.inner_text()
    assert all(site.tid.items.get(i).read for i in site.news)
    _open_sidebar(page, size)
    after = _api_counts(page)
    assert _page_counts(page) == _as_shown(after)
    assert next(f for f in after["folders"] if f["name"] == "News")["unread"] == 0
    assert after["all"] == counts["all"] - news["unread"]
    page.screenshot(path=str(SHOTS / f"nav-marked-{browser.name}.png"))
    if size == "phone":
        page.keyboard.press("Escape")  # the drawer closes
        page.locator("#sidebar").wait_for(state="hidden")
    page.locator("#undo-mark").click()
    page.wait_for_url("**/folder/News?undone=*")
    assert f"{news['unread']} items unread again" in page.locator("#undone-note").inner_text()
    assert {i: site.tid.items.get(i).read for i in site.news} == before
    _open_sidebar(page, size)
    assert _page_counts(page) == _as_shown(_api_counts(page)) == _as_shown(counts)


def test_the_counts_follow_what_is_read_on_the_page(site: Site, browser: Browser) -> None:
    """Marking a row read (m) updates the sidebar to what the API says, without a reload."""
    page = browser.ctx.new_page()
    page.goto(site.server.url + "/source/daily")
    before = _api_counts(page)
    index = page.evaluate("""() => [...document.querySelectorAll('#items .row[data-id]')]
        .findIndex(r => r.classList.contains('unread') && r.dataset.ids === r.dataset.id)""")
    item = int(page.locator("#items .row[data-id]").nth(index).get_attribute("data-id") or 0)
    for _ in range(index + 1):
        page.keyboard.press("j")
    page.keyboard.press("m")
    page.wait_for_function("n => document.querySelector('[data-count=\"all\"]')"
                           ".textContent.trim() === String(n)", arg=before["all"] - 1)
    assert site.tid.items.get(item).read
    _open_sidebar(page, browser.size)
    assert _page_counts(page) == _as_shown(_api_counts(page))
    if browser.size == "phone":
        page.keyboard.press("Escape")
    page.keyboard.press("m")  # unread again, and the count with it
    page.wait_for_function("n => document.querySelector('[data-count=\"all\"]')"
                           ".textContent.trim() === String(n)", arg=before["all"])
    assert not site.tid.items.get(item).read


def test_j_and_k_walk_the_sources_and_folders_fold(
        site: Site, browser: Browser) -> None:
    size, ctx = browser.size, browser.ctx
    page = ctx.new_page()
    page.goto(site.server.url + "/")
    order = page.eval_on_selector_all("#sidebar a[data-source]",
                                      "links => links.map(a => a.dataset.source)")
    assert order == ["lab", "wire", "blog", "daily", "quiet"]  # by folder, then by title
    page.keyboard.press("Shift+J")
    page.wait_for_url("**/source/lab")
    page.keyboard.press("Shift+J")
    page.wait_for_url("**/source/wire")
    page.keyboard.press("Shift+J")
    page.wait_for_url("**/source/blog")
    page.keyboard.press("Shift+K")
    page.wait_for_url("**/source/wire")
    assert page.locator('#sidebar a[aria-current="page"]').get_attribute("data-source") == "wire"
    _open_sidebar(page, size)
    page.locator('details.folder[data-folder="News"] summary').click(position={"x": 4, "y": 8})
    assert page.locator('details.folder[data-folder="News"]').get_attribute("open") is None
    page.reload()
    assert page.locator('details.folder[data-folder="News"]').get_attribute("open") is None
    page.keyboard.press("Shift+J")  # folded sources are still walked
    page.wait_for_url("**/source/blog")


HEADER_PAGES = ["/", "/all", "/trending", "/folder/News", "/source/wire", "/sources",
                "/sources/wire", "/settings", "/add", "/search?q=rust"]


def test_one_row_header_a_short_note_and_no_overflow(
        site: Site, browser: Browser) -> None:
    size, ctx = browser.size, browser.ctx
    page = ctx.new_page()
    for path in HEADER_PAGES:
        page.goto(site.server.url + path)
        assert _overflow(page) <= 0, f"{path} scrolls sideways at {size}"
        if size == "wide":
            tops = page.eval_on_selector_all(
                "header.top > *", "els => els.filter(e => e.offsetParent)"
                ".map(e => Math.round(e.getBoundingClientRect().top))")
            header = page.locator("header.top").bounding_box()
            assert header is not None and header["height"] < 56, (path, header)
            assert max(tops) - min(tops) < 16, (path, tops)
        banner = page.locator(".banner").bounding_box()
        assert banner is not None and banner["height"] <= 40, (path, banner)
    page.goto(site.server.url + "/")
    page.locator("#banner-close").click()
    assert not page.locator("#banner").is_visible()
    page.reload()
    assert not page.locator("#banner").is_visible(), "a closed note stays closed"
    page.screenshot(path=str(SHOTS / f"nav-header-{browser.name}.png"))


def test_the_reason_of_a_run_comes_first_on_a_phone(site: Site, playwright_: Any,
                                                     tmp_path: Path) -> None:
    ctx = _context(playwright_, tmp_path / "runs", "phone")
    try:
        page = ctx.new_page()
        page.goto(site.server.url + "/sources/wire")
        reason = page.locator(".runs td.reason").first
        box = reason.bounding_box()
        started = page.locator(".runs tbody tr td").first.bounding_box()
        assert box is not None and started is not None
        assert REASON in reason.inner_text()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 360
        assert box["y"] < started["y"], "the reason is the run's first line"
        assert _overflow(page) <= 0
        reason.scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / "nav-source-runs-phone.png"))
    finally:
        ctx.close()


def test_the_drawer_opens_without_javascript(site: Site, playwright_: Any,
                                             tmp_path: Path) -> None:
    ctx = _context(playwright_, tmp_path / "nojs", "phone", script=False)
    try:
        page = ctx.new_page()
        page.goto(site.server.url + "/all")
        assert not page.locator("#sidebar").is_visible()
        page.locator("#drawer-toggle").click()  # a link to #sidebar: opened by :target
        page.locator("#sidebar").wait_for(state="visible")
        page.locator('#sidebar a[data-source="daily"]').click()
        page.wait_for_url("**/source/daily")
        assert not page.locator("#sidebar").is_visible()
    finally:
        ctx.close()
