"""Feeds of the platforms people use (R-DISC-1): blog hosts by address, engines by generator."""

from __future__ import annotations

import pytest

from tidings.discovery.html import collect_candidates
from tidings.discovery.platforms import platform_feeds


@pytest.mark.parametrize(
    ("page", "feed"),
    [
        ("https://sketchbook.blogspot.com/2024/05/x.html",
         "https://sketchbook.blogspot.com/feeds/posts/default"),
        ("https://staff.tumblr.com/", "https://staff.tumblr.com/rss"),
        ("https://onelettera.substack.com/p/hello", "https://onelettera.substack.com/feed"),
        ("https://notes.wordpress.com/", "https://notes.wordpress.com/feed/"),
        ("https://mag.ghost.io/", "https://mag.ghost.io/rss/"),
        ("https://medium.com/@ann/a-post-1a2b", "https://medium.com/feed/@ann"),
        ("https://ann.medium.com/", "https://ann.medium.com/feed"),
        ("https://bsky.app/profile/jay.example", "https://bsky.app/profile/jay.example/rss"),
        ("https://www.cnblogs.com/xiaoming/", "https://www.cnblogs.com/xiaoming/rss"),
        ("https://blog.csdn.net/coder42/article/details/1",
         "https://blog.csdn.net/coder42/rss/list"),
        ("https://blog.sina.com.cn/u/1234567", "https://blog.sina.com.cn/rss/1234567.xml"),
        ("https://www.youtube.com/channel/UC1234567890abcdefghijkl",
         "https://www.youtube.com/feeds/videos.xml?channel_id=UC1234567890abcdefghijkl"),
        ("https://github.com/octo/widgets", "https://github.com/octo/widgets/releases.atom"),
    ],
)
def test_hosts_give_their_feed_by_address(page: str, feed: str) -> None:
    found = platform_feeds(page)
    assert found and found[0].url == feed and found[0].certain


def test_mastodon_profile_needs_the_page_to_say_it_is_a_profile() -> None:
    assert platform_feeds("https://fosstodon.example/@dev") == []
    found = platform_feeds("https://fosstodon.example/@dev", hints={"og:type": "profile"})
    assert [f.url for f in found] == ["https://fosstodon.example/@dev.rss"]
    html = '<html><head><meta property="og:type" content="profile"></head></html>'
    (cand,) = collect_candidates(html, "https://fosstodon.example/@dev")
    assert cand.declared and cand.candidate.url.endswith("/@dev.rss")


@pytest.mark.parametrize(
    ("generator", "feed"),
    [
        ("WordPress 6.4.2", "https://site.example/feed/"),
        ("Ghost 5.80", "https://site.example/rss/"),
        ("Hugo 0.124.1", "https://site.example/index.xml"),
        ("Jekyll v4.3.3", "https://site.example/feed.xml"),
        ("Hexo 7.1.1", "https://site.example/atom.xml"),
        ("Typecho 1.2.1", "https://site.example/index.php/feed/"),
        ("Z-BlogPHP 1.7.3", "https://site.example/feed.php"),
        ("emlog", "https://site.example/rss.php"),
    ],
)
def test_engines_give_a_guess_by_generator(generator: str, feed: str) -> None:
    html = f'<html><head><meta name="generator" content="{generator}"></head></html>'
    (found,) = collect_candidates(html, "https://site.example/")
    assert found.candidate.url == feed
    assert not found.declared  # a theme may move it: the usual paths are still probed


def test_a_declaration_beats_the_engine_default() -> None:
    html = """<html><head><meta name="generator" content="Hugo 0.124">
    <link rel="alternate" type="application/rss+xml" href="/posts/index.xml"></head></html>"""
    found = collect_candidates(html, "https://site.example/")
    assert [f.candidate.url for f in found] == [
        "https://site.example/posts/index.xml", "https://site.example/index.xml"]


def test_unknown_sites_have_no_platform_feed() -> None:
    assert platform_feeds("https://www.example.org/blog/") == []
    assert platform_feeds("https://www.tumblr.com/") == []
    assert platform_feeds("not a url") == []
