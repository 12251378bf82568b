"""Blogroll detection (R-DISC-2) and page abstracts (R-DISC-4) on saved pages.

The pages in tests/data/blogroll are written in the markup of real themes
(WordPress Twenty Ten, Typecho's default, Hexo Landscape and a Butterfly-style
friends page): sidebars, widgets, tag clouds, archives, footers with credits,
social rows and cookie banners around the one block that is the blogroll.
``expected.json`` holds what a reader of each page would write down.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tidings.discovery.abstract import find_abstract, find_abstract_in, site_title
from tidings.discovery.blogroll import (
    THRESHOLD,
    affect,
    blogroll_pages,
    find_blogroll,
    find_blogroll_in,
)
from tidings.discovery.html import parse_html
from tidings.discovery.sites import is_homepage_like, site_key

PAGES = Path(__file__).parent / "data" / "blogroll"
EXPECTED = json.loads((PAGES / "expected.json").read_text(encoding="utf-8"))


def page(name: str) -> str:
    return (PAGES / f"{name}.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_golden_blogrolls(name: str) -> None:
    want = EXPECTED[name]
    roll = find_blogroll(page(name), want["url"])
    if want["container"] is None:
        assert roll is None
        return
    assert roll is not None
    assert roll.container == want["container"]
    assert [[link.url, link.text] for link in roll.links] == want["links"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_golden_abstracts_and_titles(name: str) -> None:
    want = EXPECTED[name]
    root = parse_html(page(name))
    assert root is not None
    assert site_title(root) == want["title"]
    assert find_abstract_in(root) == want["abstract"]


def test_sidebar_widgets_tag_cloud_and_footer_do_not_count() -> None:
    html = page("wordpress_twentyten")
    roll = find_blogroll(html, "https://fieldnotes.example/")
    assert roll is not None
    linked = {link.url for link in roll.links}
    # credits, social profiles and internal widgets are never blogroll entries
    assert not any("wordpress.org" in u or "twitter.com" in u or "fieldnotes" in u
                   for u in linked)


def test_a_page_with_only_tags_socials_and_credits_has_no_blogroll() -> None:
    assert find_blogroll(page("hexo_no_blogroll"), "https://lin.example.dev/") is None


def test_the_home_page_names_its_friends_page() -> None:
    root = parse_html(page("hexo_no_blogroll"))
    assert root is not None
    assert blogroll_pages(root, "https://lin.example.dev/") == ["https://lin.example.dev/friends/"]
    root = parse_html(page("typecho_friends"))
    assert root is not None
    assert blogroll_pages(root, "http://xiong.example.cn/") == [
        "http://xiong.example.cn/index.php/links.html"]


def test_link_farm_is_one_huge_block() -> None:
    roll = find_blogroll(page("linkfarm"), "http://dir.example/")
    assert roll is not None and len(roll.links) == 2500  # the crawler caps what it follows


def test_affect_keeps_a_share_and_scales_the_rest() -> None:
    assert affect(1000, 0.1, 1.0, 2) == 1000
    assert affect(1000, 0.1, 2.0, 2) == 1000
    assert affect(1000, 0.1, 0.0, 2) == pytest.approx(100)
    assert affect(1000, 0.1, 0.5, 2) == pytest.approx(100 + 900 * 0.25)
    assert affect(1000, 0.1, 0.5, 1) == pytest.approx(100 + 900 * 0.5)


def test_two_outbound_links_are_not_a_blogroll() -> None:
    html = """<div><ul><li><a href="https://a.example/">A</a></li>
    <li><a href="https://b.example/" target="_blank">B</a></li></ul></div>"""
    assert find_blogroll(html, "https://me.example/") is None


def test_internal_links_outweigh_outbound_ones() -> None:
    inner = "".join(f'<li><a href="/p/{i}">post {i}</a></li>' for i in range(8))
    outer = "".join(f'<li><a href="https://s{i}.example/">S{i}</a></li>' for i in range(4))
    assert find_blogroll(f"<ul>{inner}{outer}</ul>", "https://me.example/") is None


def test_deep_links_and_queries_are_articles_not_sites() -> None:
    deep = "".join(f'<li><a href="https://s{i}.example/2024/05/post-{i}">S{i}</a></li>'
                   for i in range(6))
    query = "".join(f'<li><a href="https://q{i}.example/?p={i}">Q{i}</a></li>' for i in range(6))
    assert find_blogroll(f"<ul>{deep}</ul><ol>{query}</ol>", "https://me.example/") is None


def test_the_tighter_block_beats_the_wrapper_around_it() -> None:
    items = "".join(f'<li><a href="https://s{i}.example/" target="_blank">Site {i}</a></li>'
                    for i in range(5))
    html = f"""<div id="side"><h3>Links</h3><p>Some friends of mine, all worth a
    read for their long essays.</p><ul id="roll">{items}</ul></div>"""
    root = parse_html(html)
    assert root is not None
    roll = find_blogroll_in(root, "https://me.example/")
    assert roll is not None and roll.container == "ul#roll" and roll.score >= THRESHOLD


def test_garbage_never_raises() -> None:
    for junk in ("", "   ", "<", "<a href='http://[::1'>x</a>", "\x00\x01", "<ul>" * 3000):
        assert find_blogroll(junk, "https://me.example/") is None
        assert isinstance(find_abstract(junk), str)


def test_abstract_skips_cookie_banner_and_navigation() -> None:
    html = """<body><nav><ul><li><a href="/">Home</a></li><li><a href="/a">About us and
    everything else you may want to read here</a></li></ul></nav>
    <div class="cc-window cookie-consent">This website uses cookies to ensure you get the
    best experience on our website. Learn more about cookies and how to refuse them.</div>
    <main><div class="post"><p>The tide tables for the estuary were wrong all spring,
    and nobody noticed until the ferry ran aground in front of the harbour office.</p>
    </div></main></body>"""
    assert find_abstract(html).startswith("The tide tables for the estuary were wrong")
    assert len(find_abstract(html)) <= 101


def test_abstract_weights_cjk_text_above_latin() -> None:
    html = """<div id="a"><p>Short English teaser about a trip.</p></div>
    <div id="b"><p>去年冬天买的树莓派一直在抽屉里吃灰，
    这个周末终于拿出来做了一个小天气站。</p></div>"""
    assert find_abstract(html).startswith("去年冬天")


def test_abstract_prefers_the_block_with_fewest_links() -> None:
    links = " ".join(f'<a href="/t/{i}">tag number {i}</a>' for i in range(20))
    html = f"""<div class="tags">{links}</div>
    <div class="entry"><p>A plain paragraph of prose that is long enough to count as the
    site's abstract, with no links in it whatsoever.</p></div>"""
    assert find_abstract(html).startswith("A plain paragraph of prose")


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("https://www.example.co.uk/blog/", "example.co.uk"),
        ("https://alice.blogspot.com/2024/", "alice.blogspot.com"),
        ("https://bob.tumblr.com/", "bob.tumblr.com"),
        ("https://www.cnblogs.com/xiaoming/p/1.html", "www.cnblogs.com/xiaoming"),
        ("https://medium.com/@ann/a-post-1a2b", "medium.com/@ann"),
        ("https://fosstodon.example/@dev", "fosstodon.example/@dev"),
        ("http://127.0.0.9:8080/x", "127.0.0.9"),
        ("mailto:me@example.com", ""),
    ],
)
def test_site_keys(url: str, key: str) -> None:
    assert site_key(url) == key


def test_homepage_like() -> None:
    assert is_homepage_like("https://a.example/")
    assert is_homepage_like("https://a.example/blog/")
    assert not is_homepage_like("https://a.example/2024/05/post")
    assert not is_homepage_like("https://a.example/?p=3")
    assert is_homepage_like("https://www.cnblogs.com/xiaoming/")
