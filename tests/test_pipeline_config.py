"""Source config: one schema per kind, checked when saved, applied by the pipeline (R-SCHED-2,
R-SCHED-9, R-WEB-5): every key, bad values refused with the key named, a stored config
that no longer validates failing its runs, the external kind, global filters, the detail
rule and the CLI."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from click.testing import CliRunner

from netservers import serve
from tidings.app import ItemQuery, SourceUpdate, Tidings
from tidings.cli import cli
from tidings.errors import ConfigError
from tidings.model import RunOutcome, SourceKind
from tidings.pipeline.config import parse_config, validate_config
from tidings.settings import Settings

RSS = SourceKind("rss")
NOW = datetime.now(UTC).replace(microsecond=0)

GOOD: list[tuple[str, Any]] = [
    ("filters", {"block": [{"field": "title", "pattern": "(?i)sponsored"}],
                 "keep": [{"field": "category", "pattern": "AI"}], "max_age_days": 30,
                 "drop_future": True}),
    ("url_allow", ["^https://example\\.com/blog/"]),
    ("url_rewrite", [{"from": "http://old/", "to": "https://new/"}]),
    ("limits", {"first": 10, "first_months": 3, "later": 20}),
    ("user_agent", "Reader/1.0 (+https://me.example)"),
    ("cookie", "session=abc"),
    ("headers", {"X-Token": "t1", "Accept-Language": "zh"}),
    ("proxy", False),
    ("summary_only", True),
    ("extract", {"body_selector": "article", "remove_selectors": [".ad", "nav"]}),
    ("detail", {"max_fetches": 5, "title_selector": "h1", "date_selector": "time",
                "summary_selector": ".lead", "title_authoritative": True,
                "published_authoritative": True}),
]

BAD: list[tuple[dict[str, Any], str]] = [
    ({"url_allow": ["("]}, "'url_allow.0': bad regular expression '('"),
    ({"filters": {"block": [{"field": "title", "pattern": "[z-a]"}]}},
     "'filters.block.0.pattern': bad regular expression"),
    ({"filters": {"block": [{"field": "colour", "pattern": "x"}]}}, "'filters.block.0.field'"),
    ({"filters": {"keep": "AI"}}, "'filters.keep'"),
    ({"filters": {"max_age_days": 0}}, "'filters.max_age_days'"),
    ({"filters": {"drop_future": "yes"}}, "'filters.drop_future'"),
    ({"filters": {"since": 3}}, "'filters.since': unknown key"),
    ({"url_rewrite": [{"from": "a"}]}, "'url_rewrite.0.to'"),
    ({"limits": {"first": 0}}, "'limits.first'"),
    ({"limits": {"later": "all"}}, "'limits.later'"),
    ({"user_agent": 5}, "'user_agent'"),
    ({"user_agent": "a\nb"}, "'user_agent': must be one line"),
    ({"cookie": "a=b\r\nX: y"}, "'cookie': must be one line"),
    ({"headers": ["X-A: 1"]}, "'headers'"),
    ({"headers": {"X A": "1"}}, "'headers.X A': 'X A' is not a header name"),
    ({"headers": {"X-A": "1\r\nX-Injected: 2"}}, "'headers.X-A': must be one line"),
    ({"proxy": "yes"}, "'proxy'"),
    ({"summary_only": 1}, "'summary_only'"),
    ({"extract": "article"}, "'extract'"),
    ({"extract": {"body_selector": "div[["}}, "'extract.body_selector': invalid CSS selector"),
    ({"extract": {"remove_selectors": ["p::nonsense("]}}, "'extract.remove_selectors.0'"),
    ({"detail": {"max_fetches": 1000}}, "'detail.max_fetches'"),
    ({"detail": {"date_selector": ""}}, "'detail.date_selector': an empty CSS selector"),
    ({"detail": {"follow": True}}, "'detail.follow': unknown key"),
    ({"category": "AI"}, "unknown config key 'category' for an rss source (allowed: cookie,"),
    ({"items_path": "$.x"}, "unknown config key 'items_path'"),
]


@pytest.mark.parametrize(("key", "value"), GOOD, ids=[k for k, _ in GOOD])
def test_every_common_key_is_accepted_and_stored_normalized(key: str, value: Any) -> None:
    stored = validate_config(RSS, {key: value})
    assert stored == {key: value}
    assert validate_config(RSS, stored) == stored, "a stored config validates again"


def test_values_are_normalized_and_defaults_are_not_stored() -> None:
    assert validate_config(RSS, {"user_agent": "  UA/1 ", "proxy": None, "filters": {},
                                 "extract": {"remove_selectors": []}}) == {"user_agent": "UA/1"}
    assert validate_config(RSS, {"detail": {}}) == {"detail": {}}, "detail on, with defaults"


@pytest.mark.parametrize(("config", "message"), BAD, ids=[str(c) for c, _ in BAD])
def test_bad_values_are_refused_with_the_key_named(config: dict[str, Any], message: str
                                                   ) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(RSS, config)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_request_options_come_from_the_config() -> None:
    options = parse_config(RSS, {"user_agent": "UA/1", "cookie": "a=b",
                                 "headers": {"X-T": "1"}, "proxy": True}).request_options()
    assert dict(options.headers) == {"X-T": "1", "Cookie": "a=b"}
    assert (options.user_agent, options.proxy) == ("UA/1", True)
    page = parse_config(RSS, {"cookie": "a=b"}).request_for(
        "https://a.example/feed", "https://b.example/x", "text/html")
    assert dict(page.headers) == {"Accept": "text/html"}, "a cookie only goes to its own host"


# ------------------------------------------------------------ through the facade


FEED = """<?xml version="1.0"?><rss version="2.0"><channel><title>Blog</title>
<link>{base}/</link>{items}</channel></rss>"""


def _item(base: str, n: int, title: str, *, date: bool = True, summary: str = "") -> str:
    when = f"<pubDate>{format_datetime(NOW - timedelta(hours=n))}</pubDate>" if date else ""
    return (f"<item><title>{title}</title><link>{base}/p/{n}</link><guid>{base}/p/{n}</guid>"
            f"{when}<description>{summary}</description></item>")


@pytest.fixture
async def tidings(settings: Settings) -> AsyncIterator[Tidings]:
    t = Tidings.open(settings, create=True)
    yield t
    await t.aclose()


async def test_a_bad_config_is_refused_when_saved_everywhere(tidings: Tidings) -> None:
    with pytest.raises(ConfigError, match=r"'url_allow\.0': bad regular expression"):
        await tidings.sources.create("https://a.example/feed", config={"url_allow": ["("]})
    assert tidings.sources.all() == []
    source = await tidings.sources.create("https://a.example/feed")
    with pytest.raises(ConfigError, match=r"'filters\.block\.0\.pattern'"):
        await tidings.sources.update(source.id, SourceUpdate(
            config={"filters": {"block": [{"field": "title", "pattern": "("}]}}))
    assert tidings.sources.get(source.id).config == {}
    opml = (b'<opml version="2.0"><body><outline text="AI"><outline type="rss" text="x" '
            b'xmlUrl="https://b.example/rss"/></outline></body></opml>')
    added, _ = await tidings.transfer.import_opml(opml)
    assert added[0].folder == "AI" and added[0].config == {}


async def test_a_stored_config_that_no_longer_validates_fails_its_runs(
    tidings: Tidings,
) -> None:
    """A key a newer version dropped (or a hand edit) is never half-applied."""
    async def feed(request: web.Request) -> web.Response:
        return web.Response(text=FEED.format(base="", items=""), content_type="text/xml")

    app = web.Application()
    app.router.add_get("/feed", feed)
    async with serve(app) as base:
        source = await tidings.sources.create(f"{base}/feed")
        await tidings.write(lambda unit: unit.update_source(
            source.id, SourceUpdate(config={"user_agent": "ok", "selector": "div"})))
        report = await tidings.collection.round([source.id], extract=False)
    counts = report.results[source.id]
    assert counts.outcome is RunOutcome.FAILED
    assert counts.error is not None and "unknown config key 'selector'" in counts.error
    assert tidings.sources.get(source.id).fail_count == 1


async def test_external_sources_are_created_and_never_collected(tidings: Tidings) -> None:
    ext = await tidings.sources.create("scripts", kind=SourceKind("external"),
                                       config={"filters": {"max_age_days": 7}})
    assert (ext.id, ext.url, ext.kind) == ("scripts", "external:scripts", SourceKind("external"))
    with pytest.raises(ConfigError, match="is external"):
        await tidings.collection.round([ext.id])
    report = await tidings.collection.round(extract=False)  # a round over everything due
    assert ext.id not in report.results
    with pytest.raises(ConfigError, match="without spaces"):
        await tidings.sources.create("two words", kind=SourceKind("external"))


async def test_global_filters_from_the_settings_file_apply_to_every_source(
    settings: Settings,
) -> None:
    base_holder: dict[str, str] = {}

    async def feed(request: web.Request) -> web.Response:
        base = base_holder["base"]
        items = "".join(_item(base, n, t) for n, t in enumerate(
            ["Model released", "Sponsored: buy now", "Benchmarks"]))
        return web.Response(text=FEED.format(base=base, items=items), content_type="text/xml")

    app = web.Application()
    app.router.add_get("/feed", feed)
    glob = replace(settings, filters={"block": [{"field": "title", "pattern": "(?i)sponsored"}]})
    t = Tidings.open(glob, create=True)
    try:
        async with serve(app) as base:
            base_holder["base"] = base
            source = await t.sources.create(f"{base}/feed", config={"filters": {
                "block": [{"field": "title", "pattern": "Benchmarks"}]}})
            report = await t.collection.round([source.id], extract=False)
        assert report.results[source.id].filtered == 2
        assert [i.title for i in t.items.query()] == ["Model released"]
    finally:
        await t.aclose()
    with pytest.raises(ConfigError, match=r"^setting filters\.block\.0\.pattern"):
        Tidings.open(replace(settings, filters={"block": [{"field": "title", "pattern": "("}]}))


async def test_the_detail_rule_fills_entries_from_their_pages(tidings: Tidings) -> None:
    """A list with links and titles only: the pages give the date and a summary; an
    authoritative title from the page is not changed back by the next listing."""
    fetched: list[str] = []
    listing = {"titles": ["link one", "link two"]}

    async def feed(request: web.Request) -> web.Response:
        base = f"http://{request.host}"
        items = "".join(_item(base, n, t, date=False) for n, t in enumerate(listing["titles"]))
        return web.Response(text=FEED.format(base=base, items=items), content_type="text/xml")

    async def page(request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        fetched.append(request.path)
        when = (NOW - timedelta(days=n + 1)).isoformat()
        body = (f"<html><head><title>Site</title><meta name='description' content='About {n}'>"
                f"</head><body><h1 class='t'>Real title {n}</h1><span class='d'>{when}</span>"
                "<p>text</p></body></html>")
        return web.Response(text=body, content_type="text/html")

    app = web.Application()
    app.router.add_get("/feed", feed)
    app.router.add_get("/p/{n}", page)
    async with serve(app) as base:
        source = await tidings.sources.create(f"{base}/feed", config={"detail": {
            "title_selector": "h1.t", "date_selector": ".d", "title_authoritative": True}})
        await tidings.collection.round([source.id], extract=False)
        items = {i.url: i for i in tidings.items.query(ItemQuery(limit=10))}
        assert sorted(fetched) == ["/p/0", "/p/1"]
        first = items[f"{base}/p/0"]
        assert first.title == "Real title 0" and first.summary == "About 0"
        assert first.published_at == NOW - timedelta(days=1)
        assert first.raw["detail"]["keep"] == ["title"]
        listing["titles"] = ["link one, renamed", "link two"]
        await tidings.sources.update(source.id, SourceUpdate(
            next_fetch_at=NOW - timedelta(minutes=1)))
        again = await tidings.collection.round([source.id], extract=False)
        assert sorted(fetched) == ["/p/0", "/p/1"], "stored URLs are not fetched again"
        assert again.results[source.id].revised == 0
        kept = next(i for i in tidings.items.query(ItemQuery(limit=10)) if i.url == f"{base}/p/0")
        assert kept.title == "Real title 0", "an authoritative page title stays"
        assert kept.published_at == NOW - timedelta(days=1), "the page's date stays"


async def test_detail_fetches_are_bounded_per_run(tidings: Tidings) -> None:
    fetched: list[str] = []

    async def feed(request: web.Request) -> web.Response:
        base = f"http://{request.host}"
        items = "".join(_item(base, n, f"t{n}", date=False) for n in range(6))
        return web.Response(text=FEED.format(base=base, items=items), content_type="text/xml")

    async def page(request: web.Request) -> web.Response:
        fetched.append(request.path)
        return web.Response(status=404)

    app = web.Application()
    app.router.add_get("/feed", feed)
    app.router.add_get("/p/{n}", page)
    async with serve(app) as base:
        source = await tidings.sources.create(f"{base}/feed",
                                              config={"detail": {"max_fetches": 2}})
        report = await tidings.collection.round([source.id], extract=False)
    assert len(fetched) == 2
    assert report.results[source.id].created == 6, "a failed page keeps the listed entry"
    marks = [i.raw["detail"] for i in tidings.items.query() if "detail" in i.raw]
    errors = [m["error"] for m in marks if "error" in m]
    assert len(errors) == 2 and all("HTTP 404" in e for e in errors)
    assert sum(1 for m in marks if m.get("pending")) == 4, "the rest carried over"


# -------------------------------------------------------------------------- CLI


def _run(data: Path, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--data", str(data), *args], env={})
    assert result.exit_code == code, result.output
    return result.output


def test_the_cli_shows_and_changes_a_config(tmp_path: Path) -> None:
    _run(tmp_path, "init", "--empty")
    _run(tmp_path, "add", "ingest", "--kind", "external", "--set", "summary_only=true")
    assert json.loads(_run(tmp_path, "config", "ingest", "--json")) == {"summary_only": True}
    _run(tmp_path, "config", "ingest", "--set", "filters.max_age_days=30",
         "--set", 'url_allow=["^https://a/"]', "--set", "user_agent=Reader/1.0")
    assert json.loads(_run(tmp_path, "config", "ingest", "--json")) == {
        "summary_only": True, "filters": {"max_age_days": 30}, "url_allow": ["^https://a/"],
        "user_agent": "Reader/1.0"}
    out = _run(tmp_path, "config", "ingest", "--set", 'url_allow=["("]', code=2)
    assert out.startswith("tidings: config key 'url_allow.0': bad regular expression")
    assert out.count("\n") == 1
    _run(tmp_path, "config", "ingest", "--unset", "filters", "--unset", "url_allow")
    _run(tmp_path, "config", "ingest", "--folder", "Scripts")
    text = _run(tmp_path, "config", "ingest")
    assert text == '# folder: Scripts\nsummary_only = true\nuser_agent = "Reader/1.0"\n'
    assert "no such key" in _run(tmp_path, "config", "ingest", "--unset", "nope", code=2)
    toml = tmp_path / "c.toml"
    toml.write_text('proxy = false\n[limits]\nlater = 5\n')
    _run(tmp_path, "config", "ingest", "--from-file", str(toml))
    assert json.loads(_run(tmp_path, "config", "ingest", "--json")) == {
        "proxy": False, "limits": {"later": 5}}


def test_the_cli_files_a_source_under_a_folder_as_storage_names_it(tmp_path: Path) -> None:
    _run(tmp_path, "init", "--empty")
    _run(tmp_path, "add", "ingest", "--kind", "external")
    _run(tmp_path, "config", "ingest", "--folder", "  Daily \t news ")
    assert _run(tmp_path, "config", "ingest").startswith("# folder: Daily news\n")
    _run(tmp_path, "config", "ingest", "--folder", " ")
    assert "# folder" not in _run(tmp_path, "config", "ingest")


@pytest.mark.parametrize(("name", "content", "reason"), [
    ("latin1.toml", "user_agent = \"Caf\xe9\"\n".encode("latin-1"), "not UTF-8 text"),
    ("c.json", b"\xff\xfe{}", "not UTF-8 text"),
    ("broken.toml", b"proxy = \n", "not valid toml"),
])
def test_a_config_file_that_cannot_be_read_is_refused_in_one_line(
    tmp_path: Path, name: str, content: bytes, reason: str,
) -> None:
    _run(tmp_path, "init", "--empty")
    _run(tmp_path, "add", "ingest", "--kind", "external")
    path = tmp_path / name
    path.write_bytes(content)
    out = _run(tmp_path, "config", "ingest", "--from-file", str(path), code=2)
    assert out.startswith(f"tidings: {path}: {reason}") and out.count("\n") == 1
