"""The page readers' fast paths give what the plain way gives (issue 17's speed work).

Each shortcut is checked against the general code it stands in for: the summary
collapsed from a prefix, the cached date reading, the URL template without
``quote`` for ids and slugs, the script cutter made of two searches, and the
``<base>`` walk skipped when the page has no ``<base`` at all.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from urllib.parse import quote

from hypothesis import given
from hypothesis import strategies as st

from tidings.readers.jsonlist.embedded import scripts_of
from tidings.readers.jsonlist.parse import read_date
from tidings.readers.jsonlist.paths import fill_template
from tidings.readers.web import WebListConfig, html, links, parse_page
from tidings.textutil import collapse_ws, short_summary, shorten

_WORDS = st.lists(st.sampled_from(["a", "bb", "word", "长文本", " ", "  ", "\n", "\t",
                                   "\u3000", "\xa0", ",", ".", "x" * 70]), max_size=400)


@given(_WORDS, st.sampled_from([10, 50, 600]))
def test_short_summary_is_shorten_of_the_collapsed_text(parts: list[str], limit: int) -> None:
    text = "".join(parts)
    assert short_summary(text, limit) == shorten(collapse_ws(text), limit)


def test_a_long_body_is_cut_like_the_whole_of_it() -> None:
    body = ("Fixed   a bug\n\n* in the parser\t" * 500).strip()
    assert short_summary(body) == shorten(collapse_ws(body))
    assert short_summary(body).endswith("…")


def test_cached_dates_keep_int_and_float_apart() -> None:
    assert read_date(20260926, "yyyymmdd") == datetime(2026, 9, 26, tzinfo=UTC)
    assert read_date(20260926.0, "yyyymmdd") is None  # "20260926.0" is not eight digits
    assert read_date(20260926, "yyyymmdd") == datetime(2026, 9, 26, tzinfo=UTC)
    assert read_date(1727186400, "epoch_s") == read_date(1727186400.0, "epoch_s")
    assert read_date("2026-09-24T17:02:11Z", "iso") == datetime(2026, 9, 24, 17, 2, 11,
                                                                 tzinfo=UTC)
    assert read_date(True, "epoch_s") is None


@given(st.text(max_size=20).filter(lambda t: t != ""))
def test_template_values_are_encoded_as_quote_does(value: str) -> None:
    url = fill_template("https://x.example/item?id={id}", {"id": value})
    assert url == "https://x.example/item?id=" + quote(value, safe="")


_OLD_CUT = re.compile(r"<script\b([^>]*)>(.*?)</script\s*>", re.IGNORECASE | re.DOTALL)
_PAGES = [
    "<html><SCRIPT type='application/json' id=a>{\"k\": 1}</Script >"
    "<script src=x.js></script><script>var a = '</scr' + 'ipt>';</script></html>",
    "<script>window.A = {}</script><p>text</p><script>never closed",
    "<script id=\"__NEXT_DATA__\" type=\"application/json\">{}</script  >"
    "<scriptx>not a script</scriptx><script>\n</script>",
    "no scripts at all",
]


def test_scripts_are_cut_where_the_single_pattern_cut_them() -> None:
    for page in _PAGES:
        old = [body for _head, body in _OLD_CUT.findall(page) if body and not body.isspace()]
        assert [body for _id, _type, body in scripts_of(page, "u")] == old


def test_a_page_without_base_resolves_against_its_url_and_with_one_against_it() -> None:
    cfg = WebListConfig.model_validate({"item": "li", "title": "a"})
    page = "<html><body><ul><li><a href='post/1'>One post</a></li></ul></body></html>"
    plain = parse_page(page, "https://site.example/blog/", cfg)
    assert [i.url for i in plain.items] == ["https://site.example/blog/post/1"]
    based = parse_page(page.replace("<html>", "<html><head><BASE href='/x/'></head>"),
                       "https://site.example/blog/", cfg)
    assert [i.url for i in based.items] == ["https://site.example/x/post/1"]


def test_a_huge_href_or_date_gives_the_same_answer_and_stays_out_of_the_caches() -> None:
    huge = "/post/" + "x" * (links.CACHED_LEN + 10)
    before = links.absolute_cached.cache_info().currsize
    url = links.absolute(huge, "https://site.example/blog/")
    assert url == "https://site.example" + huge
    assert links.is_navigation(url, "https://site.example/blog/") is False
    assert links.absolute_cached.cache_info().currsize == before
    prose = "Posted " + "on a long day " * 40 + "Sep 24, 2026"
    dates_before = html.read_date_cached.cache_info().currsize
    assert html.read_date(prose) == datetime(2026, 9, 24, tzinfo=UTC)
    assert html.read_date_cached.cache_info().currsize == dates_before
