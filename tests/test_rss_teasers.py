"""R-RSS-2: teaser detection and the body/summary split, table-driven."""

from __future__ import annotations

import pytest

from tidings.model import BodyState
from tidings.readers.rss import parse_feed
from tidings.readers.rss.text import TEASER_MAX_CHARS, is_teaser

LONG = "word " * 300  # 1,500 characters of text

TEASERS = [
    ("The first lines of the story...", True),
    ("The first lines of the story…", True),
    ("The first lines of the story [...]", True),
    ("The first lines of the story [&hellip;]", False),  # is_teaser sees text, not HTML
    ("The first lines […]", True),
    ("Short text. The post X appeared first on Example.", True),
    ("Short text. Read the full story at the site", True),
    ("Short text. Continue reading →", True),
    ("Short text. READ MORE", True),
    ("简短的摘要，阅读全文", True),
    ("简短的摘要…更多", True),
    ("A complete short note without any marker.", False),
    ("", False),
    (LONG + "...", False),  # long enough to be a body even with an ellipsis
    (LONG + " read more", False),
]


@pytest.mark.parametrize(("text", "teaser"), TEASERS)
def test_is_teaser(text: str, teaser: bool) -> None:
    assert is_teaser(text) is teaser


def feed_with(description: str, content: str = "") -> bytes:
    encoded = f"<content:encoded><![CDATA[{content}]]></content:encoded>" if content else ""
    return (
        '<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">'
        "<channel><title>t</title><item><title>i</title><link>https://e.example/1</link>"
        f"<description><![CDATA[{description}]]></description>{encoded}</item></channel></rss>"
    ).encode()


BODIES = [
    # (description, content, body expected?, state)
    ("<p>Teaser of a story…</p>", "", False, BodyState.PENDING),
    ("<p>A whole short post.</p>", "", True, BodyState.OK),
    ("<p>Teaser…</p>", f"<p>{LONG}</p>", True, BodyState.OK),
    ("<p>Teaser</p>", "<p>Intro. <a href='/x'>Continue reading</a></p>", False, BodyState.PENDING),
    ("", "", False, BodyState.PENDING),
    ("", '<p><img src="https://e.example/comic.png"></p>', True, BodyState.OK),
    (f"<p>{LONG}</p><p>Read more</p>", "", True, BodyState.OK),
]


@pytest.mark.parametrize(("description", "content", "has_body", "state"), BODIES)
def test_body_or_teaser(description: str, content: str, has_body: bool, state: BodyState) -> None:
    item = parse_feed(feed_with(description, content), url="https://e.example/feed").items[0]
    assert (item.body is not None) is has_body
    assert item.body_state is state
    if description and "img" not in content:
        assert item.summary  # the teaser is kept as the summary
        assert "<" not in item.summary


def test_summary_is_short_plain_text() -> None:
    item = parse_feed(feed_with(f"<p><b>{LONG}</b></p>"), url="https://e.example/feed").items[0]
    assert len(item.summary) <= 601
    assert item.summary.endswith("…")
    assert "<" not in item.summary
    assert TEASER_MAX_CHARS == 1200
