"""The web_list and json_list readers through the real fetcher and the whole pipeline:
local servers on 127.0.0.1 serve the golden pages, a fake Jina-compatible rendering
service answers Markdown and runs out of budget mid-round (R-WEB-2, R-SCHED-3)."""

from __future__ import annotations

import gzip
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from aiohttp import web
from multidict import CIMultiDict

from netservers import serve
from readers_golden import Case, as_json, cases, parse_case
from tidings.app import ItemQuery, SourceUpdate, Tidings
from tidings.model import CostClass, Health, RunOutcome, Source, SourceKind
from tidings.net import Fetcher
from tidings.pipeline.reading import SourceRules
from tidings.readers import get_reader
from tidings.readers.base import ReadContext, ReadResult
from tidings.readers.jsonlist.reader import github_headers
from tidings.settings import Settings

DATA = Path(__file__).parent / "data"
CASES = cases(DATA / "web_list", SourceKind("web_list")) + cases(DATA / "json_list",
                                                               SourceKind("json_list"))
NOW = datetime(2026, 9, 26, 12, 0, tzinfo=UTC)


@dataclass
class Site:
    """Serves one page per path; records the headers each request came with."""

    pages: dict[str, tuple[bytes, str]] = field(default_factory=dict)
    seen: list[CIMultiDict[str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    gzip: bool = False

    async def handle(self, request: web.Request) -> web.Response:
        self.seen.append(request.headers.copy())
        self.paths.append(request.path)
        body, ctype = self.pages[request.path]
        if self.gzip:
            return web.Response(body=gzip.compress(body), content_type=ctype.split(";")[0],
                                headers={"Content-Encoding": "gzip"})
        return web.Response(body=body, content_type=ctype.split(";")[0])

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/{tail:.*}", self.handle)
        return app


async def read_live(settings: Settings, case: Case, base: str) -> ReadResult:
    source = replace(case.source(), url=f"{base}/{case.name}")
    rules = SourceRules.of(source)
    fetcher = Fetcher(settings)
    try:
        return await get_reader(case.kind).read(rules.context(source, fetcher, NOW))
    finally:
        await fetcher.aclose()


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("case", [c for c in CASES if c.name in (
    "company_news_cards", "docusaurus_changelog", "nextjs_flight", "hn_algolia")],
    ids=lambda c: c.name)
async def test_a_served_page_reads_as_its_golden_case(settings: Settings, case: Case,
                                                      compressed: bool) -> None:
    site = Site(gzip=compressed)
    raw = case.raw()
    site.pages[f"/{case.name}"] = (raw.body, raw.headers["Content-Type"])
    async with serve(site.app()) as base:
        result = await read_live(settings, case, base)
    served_url = f"{base}/{case.name}"
    expected = as_json(parse_case(replace(case, url=served_url)))
    assert as_json(result) == expected
    assert result.raw[0].body == raw.body, "the raw archive keeps the decoded page"
    assert "text/html" in site.seen[0]["Accept"] or "json" in site.seen[0]["Accept"]


async def test_request_options_and_the_github_token_stay_on_their_hosts(
    settings: Settings,
) -> None:
    case = next(c for c in CASES if c.name == "github_releases")
    site = Site()
    site.pages["/releases"] = (case.raw().body, "application/json")
    config = {**case.config, "headers": {"X-Team": "news"}, "cookie": "s=1"}
    providers = {"github": {"base_url": "https://api.github.com", "api_key": "ghp_secret1234"}}
    t = Tidings.open(replace(settings, providers=providers), create=True)
    try:
        async with serve(site.app()) as base:
            await t.sources.create(f"{base}/releases", kind=SourceKind("json_list"),
                                   source_id="rel", config=config)
            report = await t.collection.round(extract=False)
        assert report.results["rel"].outcome is RunOutcome.OK
        assert report.results["rel"].created == 2
        sent = site.seen[0]
        assert sent["X-Team"] == "news" and sent["Cookie"] == "s=1"
        assert "Authorization" not in sent, "the GitHub token only goes to api.github.com"
    finally:
        await t.aclose()
    env = t.pipeline_env()
    on_github = Source(id="gh", kind=SourceKind("json_list"),
                       url="https://api.github.com/repos/o/r/releases")
    ctx = ReadContext(on_github, env.fetcher, NOW, paid=env.paid)
    assert github_headers(ctx)["Authorization"] == "Bearer ghp_secret1234"
    elsewhere = replace(ctx, source=replace(on_github, url="https://api.github.com.evil.example/x"))
    assert github_headers(elsewhere) == {}


async def test_a_page_that_changed_fails_its_source_and_not_the_round(settings: Settings) -> None:
    cards = next(c for c in CASES if c.name == "company_news_cards")
    site = Site()
    site.pages["/news"] = (cards.raw().body, "text/html")
    site.pages["/redesigned"] = (b"<html><body><div class='grid'><a href='/n/1'>One</a>"
                                 b"</div></body></html>", "text/html")
    site.pages["/huge"] = (b"<html>" + b"<p>x</p>" * 40_000 + b"</html>", "text/html")
    t = Tidings.open(replace(settings, http_max_bytes=200_000), create=True)
    try:
        async with serve(site.app()) as base:
            for sid, path in (("ok", "news"), ("changed", "redesigned"), ("huge", "huge")):
                await t.sources.create(f"{base}/{path}", kind=SourceKind("web_list"),
                                       source_id=sid, config=cards.config)
            report = await t.collection.round(extract=False)
        outcomes = {sid: r.outcome for sid, r in report.results.items()}
        assert outcomes == {"ok": RunOutcome.OK, "changed": RunOutcome.FAILED,
                            "huge": RunOutcome.FAILED}
        assert report.results["ok"].warnings == (), "a page source starts keyed by URL"
        changed = t.sources.get("changed")
        assert changed.health is Health.DEGRADED
        assert "item selector 'section.news-grid article.card' matched nothing" in (
            changed.last_error or "")
        assert t.sources.get("huge").last_error
        assert {i.source_id for i in t.items.query(ItemQuery(limit=50))} == {"ok"}
    finally:
        await t.aclose()


async def test_a_stored_config_that_no_longer_validates_fails_the_run(
    settings: Settings,
) -> None:
    t = Tidings.open(settings, create=True)
    try:
        await t.sources.create("http://127.0.0.1:9/x", kind=SourceKind("web_list"),
                               source_id="old", config={"item": "article"})
        await t.write(lambda unit: unit.update_source(
            "old", SourceUpdate(config={"itme": "article"})))  # as an older version wrote it
        report = await t.collection.round(extract=False)
        assert report.results["old"].outcome is RunOutcome.FAILED
        assert "unknown config key 'itme'" in (t.sources.get("old").last_error or "")
        assert "did you mean 'item'" in (t.sources.get("old").last_error or "")
    finally:
        await t.aclose()


@dataclass
class Renderer:
    """A Jina-compatible rendering service: ``GET /{url}`` answers the page as Markdown."""

    asked: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)

    async def handle(self, request: web.Request) -> web.Response:
        self.asked.append(request.path_qs[1:])
        self.keys.append(request.headers.get("Authorization", ""))
        target = request.path_qs[1:]
        text = (f"Title: News of {target}\nURL Source: {target}\n\nMarkdown Content:\n"
                "[Home](/) [Blog](/blog) [Tags](/tags/ai/)\n\n# News\n\n"
                f"[![cover](https://cdn.example/{len(self.asked)}.png) A launch]({target}/launch)\n"
                f"- [A paper, explained]({target}/paper \"A paper\")\n"
                f"- [Next page]({target}/page/2)\n")
        return web.Response(text=text, content_type="text/plain")

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/{tail:.*}", self.handle)
        return app


@pytest.fixture
async def rendering(settings: Settings) -> AsyncIterator[tuple[Tidings, Renderer]]:
    renderer = Renderer()
    async with serve(renderer.app()) as base:
        providers = {"jina": {"base_url": base, "api_key": "jina_key_9876", "daily_calls": 2}}
        t = Tidings.open(replace(settings, providers=providers), create=True)
        yield t, renderer
        await t.aclose()


async def test_markdown_pages_are_rendered_and_a_spent_budget_is_not_a_failure(
    rendering: tuple[Tidings, Renderer],
) -> None:
    t, renderer = rendering
    for n in range(3):
        await t.sources.create(f"https://lab{n}.example/news", kind=SourceKind("web_list"),
                               source_id=f"lab{n}",
                               config={"mode": "markdown", "links_start_line": 3})
    assert {(s.cost_class, s.interval_min) for s in t.sources.all()} == {
        (CostClass.PAID_RENDER, 60)}, "a paid render is clamped to 60-120 minutes (R-SCHED-5)"
    report = await t.collection.round(extract=False)
    outcomes = Counter(r.outcome for r in report.results.values())
    assert outcomes == {RunOutcome.OK: 2, RunOutcome.BUDGET: 1}
    assert len(renderer.asked) == 2, "the third render was never requested"
    assert set(renderer.keys) == {"Bearer jina_key_9876"}
    assert all(a.startswith("https://lab") for a in renderer.asked)
    for sid, counts in report.results.items():
        source = t.sources.get(sid)
        if counts.outcome is RunOutcome.BUDGET:
            assert source.fail_count == 0 and source.health is Health.OK
        else:
            assert counts.created == 2
    titles = sorted({i.title for i in t.items.query(ItemQuery(limit=50))})
    assert titles == ["A launch", "A paper"]
    assert t.paid.today()["jina"].calls == 2


# ------------------------------------------------ the rendering fallback of extraction

THIN = b"""<html><head><title>App</title></head><body><div id="app"></div>
<script src="/bundle.js"></script></body></html>"""


@dataclass
class Fallback:
    tid: Tidings
    site: Site
    renderer: Renderer


async def _fallback_world(settings: Settings, renderer: Renderer, provider: str,
                          daily_calls: int) -> AsyncIterator[Fallback]:
    site = Site()
    listing = "".join(f'<li><a href="/post/{n}">Post number {n} of the week</a></li>'
                      for n in range(3))
    site.pages["/list"] = (f"<html><body><ul>{listing}</ul></body></html>".encode(),
                           "text/html")
    for n in range(3):
        site.pages[f"/post/{n}"] = (THIN, "text/html")
    async with serve(site.app()) as base, serve(renderer.app()) as render_base:
        providers = {"jina": {"base_url": render_base, "api_key": "jk_1111",
                              "daily_calls": daily_calls}}
        t = Tidings.open(replace(settings, providers=providers,
                                 extract_render_provider=provider), create=True)
        await t.sources.create(f"{base}/list", kind=SourceKind("web_list"), source_id="lst")
        await t.collection.round(extract=False)
        yield Fallback(t, site, renderer)
        await t.aclose()


class ArticleRenderer(Renderer):
    async def handle(self, request: web.Request) -> web.Response:
        self.asked.append(request.path_qs[1:])
        self.keys.append(request.headers.get("Authorization", ""))
        para = "The rendered article says a great deal about the week. " * 8
        text = (f"Title: Post\nURL Source: {request.path_qs[1:]}\n\nMarkdown Content:\n"
                f"# Post\n\n{para}\n\n<script>alert(1)</script>\n\n* one\n* two\n")
        return web.Response(text=text, content_type="text/plain")


async def test_extraction_falls_back_to_the_rendering_within_its_budget(
    settings: Settings,
) -> None:
    async for world in _fallback_world(settings, ArticleRenderer(), "jina", 2):
        report = await world.tid.collection.extract_pending()
        assert (report.ok, report.skipped) == (2, 1), report
        assert len(world.renderer.asked) == 2 and set(world.renderer.keys) == {"Bearer jk_1111"}
        items = world.tid.items.query(ItemQuery(limit=10))
        done = [i for i in items if i.body_state.value == "ok"]
        assert len(done) == 2
        body = done[0].body or ""
        assert "<h1>" in body or "<h2>" in body
        assert "great deal" in body and "<script" not in body  # raw HTML stays text
        assert done[0].raw["extract"]["method"] == "render:jina"
        assert [i.body_state.value for i in items].count("pending") == 1, \
            "the budget ran out: the last item waits for tomorrow's budget"
        assert world.tid.paid.today()["jina"].calls == 2


async def test_without_the_setting_nothing_is_rendered(settings: Settings) -> None:
    async for world in _fallback_world(settings, ArticleRenderer(), "", 5):
        report = await world.tid.collection.extract_pending()
        assert report.unconfirmed == 3 and report.ok == 0
        assert world.renderer.asked == []


# ------------------------------------------------------------ the detail rule (R-WEB-5)

def _detail_page(head: str, body: str = "") -> bytes:
    return (f"<html><head><title>Page title | Site</title>{head}</head><body>"
            f"<article><h1>The page's own title</h1>{body}<p>text</p></article>"
            "<aside><time datetime='2020-01-01'>related, old</time></aside></body></html>"
            ).encode()


GRAPH = ('<script type="application/ld+json">{"@context":"https://schema.org","@graph":['
         '{"@type":"WebSite","name":"S"},{"@type":"BlogPosting","headline":"H",'
         '"datePublished":"2026-09-02T08:00:00Z"}]}</script>')


async def test_the_detail_rule_fills_dates_by_the_fallback_chain_within_its_budget(
    settings: Settings,
) -> None:
    site = Site()
    links = "".join(f'<li><a href="/p/{n}">Entry {n} on the list</a></li>' for n in range(5))
    site.pages["/list"] = (f"<html><body><ul>{links}</ul></body></html>".encode(),
                           "text/html")
    site.pages["/p/0"] = (_detail_page(
        '<meta property="article:published_time" content="2026-09-01T10:00:00Z">'), "text/html")
    site.pages["/p/1"] = (_detail_page(GRAPH), "text/html")
    site.pages["/p/2"] = (_detail_page("", "<time datetime='2026-09-03'>Sep 3</time>"),
                          "text/html")
    for n in (3, 4):
        site.pages[f"/p/{n}"] = (_detail_page(""), "text/html")
    t = Tidings.open(settings, create=True)
    try:
        async with serve(site.app()) as base:
            await t.sources.create(f"{base}/list", kind=SourceKind("web_list"), source_id="l",
                                  config={"detail": {"max_fetches": 4,
                                                     "title_authoritative": True}})
            report = await t.collection.round(extract=False)
            assert report.results["l"].created == 5
            assert sorted(p for p in site.paths if p.startswith("/p/")) == [
                "/p/0", "/p/1", "/p/2", "/p/3"], "at most max_fetches detail pages"
            by_url = {i.url.rsplit("/", 1)[1]: i for i in t.items.query(ItemQuery(limit=10))
                      if i.url}
            days = {k: (i.published_at.day if i.published_at else None)
                    for k, i in by_url.items()}
            assert days["0"] == 1 and days["1"] == 2 and days["2"] == 3
            assert days["4"] is None, "beyond max_fetches: not fetched"
            assert by_url["3"].published_at is not None
            assert by_url["3"].published_at.year == 2020, \
                "the first <time datetime> stands in when nothing else dates the page"
            assert by_url["0"].title == "The page's own title", "title_authoritative"
            assert by_url["4"].title == "Entry 4 on the list"
            assert "over detail.max_fetches" in by_url["4"].raw["detail"]["pending"]
            assert t.sources.get("l").cursor["detail_todo"] == [by_url["4"].url]
            again = await t.collection.round(["l"], extract=False)  # what was left comes first
        assert again.results["l"].revised == 1
        assert sorted(p for p in site.paths if p.startswith("/p/")) == [
            "/p/0", "/p/1", "/p/2", "/p/3", "/p/4"], "only the page carried over"
        four = next(i for i in t.items.query(ItemQuery(limit=10)) if i.url == by_url["4"].url)
        assert four.title == "The page's own title" and four.published_at is not None
        assert "detail_todo" not in t.sources.get("l").cursor
    finally:
        await t.aclose()


async def test_an_authoritative_date_rule_lets_no_other_timestamp_stand_in(
    settings: Settings,
) -> None:
    site = Site()
    site.pages["/list"] = (b"<html><body><ul><li><a href='/p/3'>Entry three on the list</a>"
                           b"</li></ul></body></html>", "text/html")
    site.pages["/p/3"] = (_detail_page(""), "text/html")
    t = Tidings.open(settings, create=True)
    try:
        async with serve(site.app()) as base:
            await t.sources.create(f"{base}/list", kind=SourceKind("web_list"), source_id="l",
                                   config={"detail": {"date_selector": "article time",
                                                      "published_authoritative": True}})
            await t.collection.round(extract=False)
        (item,) = t.items.query(ItemQuery(limit=10))
        assert item.published_at is None
    finally:
        await t.aclose()
