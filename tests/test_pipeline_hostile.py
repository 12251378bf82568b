"""What a hostile or broken publisher sent the attack campaign (issue 16), kept as tests."""

from __future__ import annotations

from aiohttp import web

from netservers import body_app, serve
from tidings.app import ItemQuery, Tidings
from tidings.model import ItemData, RunOutcome
from tidings.pipeline import limits
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
        await t.create_source(f"{base}/feed", source_id="f")
        await t.collect()
    return t


async def test_oversized_fields_are_cut_with_a_marker_and_a_warning(settings: Settings) -> None:
    huge = "T" * 7_000_000
    cats = "".join(f"<category>{'c' * 500}{n}</category>" for n in range(200))
    long_author = f"<author>{'a' * 5000}</author>"
    t = await _collect(settings, body_app(_rss(huge, cats + long_author),
                                          {"Content-Type": "application/rss+xml"}))
    try:
        items = {i.title[:4]: t.item(i.id) for i in t.briefs(ItemQuery())}
        item = items["TTTT"]
        assert len(item.title) == limits.TITLE_MAX and item.title.endswith(limits.MARK)
        assert len(item.categories) == limits.CATEGORIES_MAX
        assert all(len(c) <= limits.CATEGORY_MAX for c in item.categories)
        assert len(item.author) <= limits.AUTHOR_MAX
        assert items["Fine"].title == "Fine"
        run = t.runs("f")[0]
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

