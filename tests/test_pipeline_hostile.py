"""What a hostile or broken publisher sent the attack campaign (issue 16), kept as tests."""

from __future__ import annotations

from datetime import timedelta

import pytest
from aiohttp import web

from netservers import body_app, serve
from tidings.app import ItemQuery, Tidings
from tidings.errors import ParseError
from tidings.model import ItemData, RunOutcome
from tidings.opml import parse_opml
from tidings.pipeline import limits
from tidings.readers.rss.parse import parse_feed
from tidings.settings import Settings


def _rss(title: str, extra: str = "") -> bytes:
    return (f"<?xml version='1.0' encoding='utf-8'?><rss version='2.0'><channel><title>F</title>"
            f"<item><guid>g1</guid><title>{title}</title><link>http://x.example/1</link>"
            f"{extra}<description>short</description></item>"
            f"<item><guid>g2</guid><title>Fine</title><link>http://x.example/2</link></item>"
            "</channel></rss>").encode()


async def _collect(settings: Settings, app: web.Application) -> Tidings:
    t = Tidings.open(settings, create=True)
    async with serve(app) as base:
        await t.sources.create(f"{base}/feed", source_id="f")
        await t.collection.round()
    return t


async def test_oversized_fields_are_cut_with_a_marker_and_a_warning(settings: Settings) -> None:
    huge = "T" * 7_000_000
    cats = "".join(f"<category>{'c' * 500}{n}</category>" for n in range(200))
    long_author = f"<author>{'a' * 5000}</author>"
    t = await _collect(settings, body_app(_rss(huge, cats + long_author),
                                          {"Content-Type": "application/rss+xml"}))
    try:
        items = {i.title[:4]: t.items.get(i.id) for i in t.items.briefs(ItemQuery())}
        item = items["TTTT"]
        assert len(item.title) == limits.TITLE_MAX and item.title.endswith(limits.MARK)
        assert len(item.categories) == limits.CATEGORIES_MAX
        assert all(len(c) <= limits.CATEGORY_MAX for c in item.categories)
        assert len(item.author) <= limits.AUTHOR_MAX
        assert items["Fine"].title == "Fine"
        run = t.sources.runs("f")[0]
        assert run.outcome is RunOutcome.OK
        assert any(w.startswith("oversized fields were truncated") and "title (1)" in w
                   for w in run.warnings), run.warnings
    finally:
        await t.aclose()


def test_cut_keeps_short_text_and_marks_long_text() -> None:
    assert limits.cut("abc", 10) == "abc"
    cut = limits.cut("x" * 50, 20)
    assert len(cut) == 20 and cut.endswith(limits.MARK)


def test_a_huge_link_is_dropped_not_cut() -> None:
    item, names = limits.bound_item(ItemData(title="t", url="http://x/" + "a" * 9000))
    assert item.url is None and names == ("url",)
    assert limits.bound_item(ItemData(title="t", url="http://x/"))[1] == ()



def test_an_undeclared_latin1_feed_is_read_as_latin1() -> None:
    """Not "cafķ": short Latin text fools statistical detection, so Latin is tried first."""
    for title in ("Un café au lait à Paris, s'il vous plaît", "Größe und Qualität: Müller"):
        body = _rss(title).replace(b" encoding='utf-8'", b"").decode().encode("latin-1")
        feed = parse_feed(body, url="http://x.example/f")
        assert feed.items[0].title == title
        assert any("windows-1252" in w for w in feed.warnings)
    for title, codec in (("Новости дня: Москва", "cp1251"), ("今天的新闻汇总", "gbk")):
        body = _rss(title).replace(b" encoding='utf-8'", b"").decode().encode(codec)
        assert parse_feed(body, url="http://x.example/f").items[0].title == title


def test_deep_json_feed_and_opml_are_parse_errors_not_recursion_errors() -> None:
    deep = (b'{"version":"https://jsonfeed.org/version/1.1","items":' + b"[" * 200_000
            + b"]" * 200_000 + b"}")
    with pytest.raises(ParseError, match="nested too deeply"):
        parse_feed(deep, url="http://x.example/f")
    opml = (b"<opml><body>" + b'<outline text="f">' * 5000 + b'<outline xmlUrl="http://x/"/>'
            + b"</outline>" * 5000 + b"</body></opml>")
    with pytest.raises(ParseError, match="nested more than 64 levels"):
        parse_opml(opml)
    nested = (b'<opml><body><outline text="A"><outline xmlUrl="http://a/1" title="1"/>'
              b'<outline text="B"><outline xmlUrl="http://b/2"/></outline></outline>'
              b'<outline xmlUrl="http://c/3"/></body></opml>')
    assert [(f.url, f.category) for f in parse_opml(nested)] == [
        ("http://a/1", "A"), ("http://b/2", "A/B"), ("http://c/3", "")]  # a path


async def test_a_huge_retry_after_pushes_a_source_one_day_at_most(settings: Settings) -> None:
    app = web.Application()

    async def busy(request: web.Request) -> web.Response:
        return web.Response(status=429, headers={"Retry-After": "9" * 20})

    app.router.add_get("/feed", busy)
    t = await _collect(settings, app)
    try:
        source = t.sources.get("f")
        run = t.sources.runs("f")[0]
        assert run.outcome is RunOutcome.FAILED and run.error and "429" in run.error
        assert source.next_fetch_at is not None
        assert source.next_fetch_at - run.started_at <= timedelta(hours=24, minutes=1)
    finally:
        await t.aclose()


@pytest.mark.parametrize("body", [
    b"<item>&#xD800;",  # feedparser encoded the surrogate as UTF-8 and failed
    b"<entry><description></content>&#55296;",  # libxml2's recovery gave text not UTF-8
    b"<rss><channel><item><title>a&#55296;b&#x110000;c&#0;</title></item></channel></rss>",
])
def test_references_to_no_character_are_replaced_not_fatal(body: bytes) -> None:
    """Found by scripts/fuzz.sh: a ParsedFeed or a ParseError, never a UnicodeError."""
    try:
        feed = parse_feed(body, url="http://x.example/f")
    except ParseError:
        return
    assert all("\ud800" not in item.title for item in feed.items)


def test_control_characters_in_a_search_are_a_one_line_error() -> None:
    """Found by scripts/fuzz.sh: ``\\x00intitle:`` reached SQLite ("unterminated string")."""
    from tidings.errors import ConfigError
    from tidings.store.query_syntax import parse_search

    for text in ("\x00intitle:", "a\x00", "intitle:\x07x", "b\x7f"):
        with pytest.raises(ConfigError, match="control characters"):
            parse_search(text)
    assert parse_search("tab\tand\nnewline").terms == ("tab", "and", "newline")
