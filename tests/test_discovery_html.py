"""Pure autodiscovery (R-DISC-1): candidates, scores, URL resolution, platforms."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tidings.discovery import find_feeds_in_html, guess_type, looks_like_feed_url, platform_feeds
from tidings.discovery.html import _feedish
from tidings.model import FeedCandidate

PAGES = Path(__file__).parent / "data" / "pages"


def feeds(name: str, page_url: str) -> list[FeedCandidate]:
    return find_feeds_in_html((PAGES / name).read_text(encoding="utf-8"), page_url)


def urls(cands: list[FeedCandidate]) -> list[str]:
    return [c.url for c in cands]


def test_wordpress_home_prefers_the_site_feed() -> None:
    cands = feeds("wordpress_home.html", "https://notes.example.com/")
    assert urls(cands) == [
        "https://notes.example.com/feed/",
        "https://notes.example.com/comments/feed/",
    ]
    site, comments = cands
    assert (site.score, site.type, site.title) == (10, "rss", "Example Notes » Feed")
    assert comments.score < site.score
    assert not any(c.verified for c in cands)
    # the WordPress REST API, oEmbed, RSD and pingback links are not feeds
    assert not any("wp-json" in u or "xmlrpc" in u for u in urls(cands))


def test_wordpress_post_ranks_comment_feeds_below_the_site_feed() -> None:
    cands = feeds("wordpress_post.html", "https://notes.example.com/2024/05/hello-world/")
    assert cands[0].url == "https://notes.example.com/feed/"
    assert cands[0].title == "示例笔记 » Feed"
    post_comments = next(c for c in cands if c.url.endswith("/hello-world/feed/"))
    assert post_comments.score < cands[0].score  # named "评论Feed" in its title


def test_blogger_declarations_and_service_link() -> None:
    cands = feeds("blogger.html", "https://sketchbook.blogspot.com/")
    assert urls(cands)[:2] == [
        "https://sketchbook.blogspot.com/feeds/posts/default",
        "https://sketchbook.blogspot.com/feeds/posts/default?alt=rss",
    ]
    assert [c.type for c in cands[:2]] == ["atom", "rss"]
    service = next(c for c in cands if "www.blogger.com" in c.url)
    assert service.score == 4  # service.post is no declaration: a low guess (R-DISC-1)
    assert len(cands) == 3  # the <a> to the Atom feed was folded into the declaration


def test_relative_base_href() -> None:
    cands = feeds("base_href.html", "https://www.example.com/blog/post/1")
    assert urls(cands) == [
        "https://www.example.com/blog/atom.xml",
        "https://www.example.com/feed.json",
    ]
    assert [c.type for c in cands] == ["atom", "json"]


def test_absolute_base_href_on_another_host() -> None:
    cands = feeds("base_other_host.html", "https://www.example.com/")
    assert urls(cands) == ["https://static.example.net/site/rss.xml"]


def test_protocol_relative_and_foreign_host_feeds() -> None:
    cands = feeds("protocol_relative.html", "https://digest.example.org/")
    assert urls(cands) == [
        "https://feeds.feedburner.com/DailyDigest",
        "https://digest.example.org/rss.xml",
        "https://digest.example.org/atom.xml",
    ]
    # text/xml is a generic type (a guess); rel=feed is not rel=alternate (a low guess)
    assert [c.score for c in cands] == [10, 6, 4]
    # the same page over plain http resolves // to http
    http = find_feeds_in_html(
        (PAGES / "protocol_relative.html").read_text(), "http://digest.example.org/"
    )
    assert http[0].url == "http://feeds.feedburner.com/DailyDigest"


def test_anchor_links_only() -> None:
    cands = feeds("anchors_only.html", "http://hand.example.org/index.html")
    assert urls(cands) == [
        "http://hand.example.org/rss.xml",
        "http://hand.example.org/atom.xml",
        "http://hand.example.org/subscribe",
        "http://hand.example.org/comments.rss",
    ]
    assert [c.type for c in cands[:2]] == ["rss", "atom"]
    assert cands[1].title == "Atom feed"  # from the image's alt text
    assert all(c.score < 10 for c in cands)
    assert cands[-1].score < cands[-2].score  # the comments feed comes last


def test_youtube_channel_page_uses_the_page_own_channel() -> None:
    cands = feeds("youtube_channel.html", "https://www.youtube.com/@somemaker")
    assert urls(cands) == [
        "https://www.youtube.com/feeds/videos.xml?channel_id=UCabcdefghijklmnopqrstuv"
    ]
    assert cands[0].type == "atom"


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        (
            "https://www.youtube.com/channel/UC1234567890abcdefghijkl/videos",
            ["https://www.youtube.com/feeds/videos.xml?channel_id=UC1234567890abcdefghijkl"],
        ),
        (
            "https://www.youtube.com/playlist?list=PLx0sYbCqOb8TBPRdmBHs5Iftvv9TPboYG",
            [
                "https://www.youtube.com/feeds/videos.xml?playlist_id=PLx0sYbCqOb8TBPRdmBHs5Iftvv9TPboYG"
            ],
        ),
        (
            "https://github.com/octo/widgets.git",
            [
                "https://github.com/octo/widgets/releases.atom",
                "https://github.com/octo/widgets/commits.atom",
            ],
        ),
        (
            "https://github.com/octo/widgets/tree/main/src",
            [
                "https://github.com/octo/widgets/releases.atom",
                "https://github.com/octo/widgets/commits.atom",
            ],
        ),
        ("https://github.com/octo", ["https://github.com/octo.atom"]),
        ("https://github.com/features/actions", []),
        ("https://github.com/", []),
        ("https://www.youtube.com/@nobody", []),
        ("https://example.com/channel/UC1234567890abcdefghijkl", []),
    ],
)
def test_platform_feeds_from_the_address(page: str, expected: list[str]) -> None:
    assert [f.url for f in platform_feeds(page)] == expected
    assert urls(find_feeds_in_html("", page)) == expected


def test_github_repo_page_ranks_releases_first_and_keeps_declared_commits() -> None:
    cands = feeds("github_repo.html", "https://github.com/octo/widgets")
    assert urls(cands) == [
        "https://github.com/octo/widgets/releases.atom",
        "https://github.com/octo/widgets/commits.atom",
        "https://github.com/octo/widgets/commits/main.atom",  # one branch, under the page
    ]


def test_feeds_under_the_article_rank_below_the_site_feed() -> None:
    html = """<html><head>
    <link rel="alternate" type="application/rss+xml" title="Kabar » Jangan Umpan Komentar"
          href="https://kabar.example/2015/03/30/jangan/feed/">
    <link rel="alternate" type="application/rss+xml" title="Kabar » Feed"
          href="https://kabar.example/feed/">
    <link rel="alternate" type="application/rss+xml" title="Kabar » Tech Category Feed"
          href="https://kabar.example/category/tech/feed/">
    </head></html>"""
    on_post = find_feeds_in_html(html, "https://kabar.example/2015/03/30/jangan/")
    assert [(c.url, c.score) for c in on_post] == [
        ("https://kabar.example/feed/", 10),
        ("https://kabar.example/category/tech/feed/", 10),
        ("https://kabar.example/2015/03/30/jangan/feed/", 5),  # title and place both say so
    ]
    on_category = find_feeds_in_html(html, "https://kabar.example/category/tech/")
    assert on_category[0].url == "https://kabar.example/feed/"
    assert on_category[1].score == 8


def test_share_buttons_and_social_profiles_are_not_feeds() -> None:
    html = """<html><body>
    <a href="https://www.facebook.com/dialog/feed?app_id=1&link=https%3A%2F%2Fa.example">Share</a>
    <a href="https://twitter.com/intent/tweet?url=x">Tweet</a>
    <a href="https://twitter.com/example" class="twitter-feed">Twitter feed</a>
    <a href="https://www.reddit.com/r/python/.rss">r/python RSS</a>
    </body></html>"""
    cands = find_feeds_in_html(html, "https://a.example/")
    assert urls(cands) == ["https://www.reddit.com/r/python/.rss"]


def test_page_without_feeds() -> None:
    assert feeds("no_feeds.html", "https://plain.example/") == []


@pytest.mark.parametrize(
    "html",
    [
        "",
        "   ",
        "\x00\x00",
        "<html",
        "not html at all",
        "<?xml version='1.0' encoding='utf-8'?><html></html>",
    ],
)
def test_garbage_never_raises(html: str) -> None:
    assert find_feeds_in_html(html, "https://plain.example/") == []


def test_duplicates_fold_to_the_best_score_and_keep_a_title() -> None:
    html = """<html><head>
    <link rel="alternate" type="application/rss+xml" href="/feed?utm_source=x">
    </head><body><a href="https://site.example/feed">Our RSS feed</a></body></html>"""
    cands = find_feeds_in_html(html, "https://site.example/")
    assert len(cands) == 1
    assert cands[0].score == 10
    assert cands[0].url == "https://site.example/feed?utm_source=x"  # as declared
    assert cands[0].title == "Our RSS feed"


def test_rpc_and_rsd_hrefs_lose_points() -> None:
    html = """<html><head>
    <link rel="alternate" type="application/rss+xml" href="/xmlrpc.php?feed=rss2">
    <link rel="alternate" type="application/rss+xml" href="/rsd/feed.xml">
    <link rel="alternate" type="application/rss+xml" href="/news.xml">
    </head></html>"""
    cands = find_feeds_in_html(html, "https://site.example/")
    assert cands[0].url == "https://site.example/news.xml"
    assert [c.score for c in cands] == [10, 5, 5]


def test_untyped_alternate_only_when_the_address_says_feed() -> None:
    html = """<html><head>
    <link rel="alternate" href="/index.xml">
    <link rel="alternate" href="/en/">
    <link rel="alternate" type="application/json" href="/api/posts/1">
    <link rel="alternate" type="application/json" href="/feed.json">
    </head></html>"""
    cands = find_feeds_in_html(html, "https://site.example/")
    assert [(c.url, c.type, c.score) for c in cands] == [
        ("https://site.example/index.xml", "rss", 6),
        ("https://site.example/feed.json", "json", 5),
    ]


@pytest.mark.parametrize(
    ("url", "feedish"),
    [
        ("https://a.com/feed", True),
        ("https://a.com/feed/", True),
        ("https://a.com/blog/rss.xml", True),
        ("https://a.com/index.xml", True),
        ("https://a.com/posts.atom", True),
        ("https://a.com/?feed=rss2", True),
        ("https://a.com/feeds/posts/default", True),
        ("https://a.com/feeds/all", True),
        ("https://feeds.feedburner.com/x", True),
        ("https://a.com/feedback", False),
        ("https://a.com/sitemap.xml", False),
        ("https://a.com/about", False),
    ],
)
def test_looks_like_feed_url(url: str, feedish: bool) -> None:
    assert looks_like_feed_url(url) is feedish


def test_guess_type() -> None:
    assert guess_type("https://a.com/atom.xml") == "atom"
    assert guess_type("https://a.com/feed.json") == "json"
    assert guess_type("https://a.com/index.rdf") == "rdf"
    assert guess_type("https://a.com/feed") == "rss"


def test_the_feed_word_check_matches_the_case_insensitive_expression() -> None:
    expression = re.compile(r"feed|rss|atom|xml|rdf|json", re.IGNORECASE)
    for text in ("https://a.example/", "https://a.example/FEED", "/Rss.XML", "/ATOM",
                 "/index.Rdf", "/feed.JSON", "/rſs", "/ɼss", "/fe-ed", "https://feeds.example/",
                 "/blog?format=JSON", "/\u212aml", "/xmL", "", "/r ss"):
        assert _feedish(text) == bool(expression.search(text)), text
