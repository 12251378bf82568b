"""The provider answers the readers rely on, as documented (tests/data/paid/), parsed
with no network: tweets to items (R-X-5), Draft.js articles to HTML, Dajiala lists."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tidings.errors import ParseError, ProviderError
from tidings.model import BodyState, RawResponse, Source, SourceKind
from tidings.readers.base import CallNote
from tidings.readers.options import Provider
from tidings.readers.wechat.posts import parse_posts
from tidings.readers.wechat.reader import ACCOUNT_CODES, WechatReader, inspect_answer
from tidings.readers.x.draft import draft_to_html
from tidings.readers.x.reader import XReader
from tidings.readers.x.tweets import Tweet, parse_tweets, with_article

DATA = Path(__file__).parent / "data" / "paid"


def load(name: str) -> Any:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def test_a_search_page_becomes_items_with_reasons_for_what_is_left_out() -> None:
    kept, skipped = parse_tweets(load("socialdata_search.json")["tweets"])
    assert [t.id for t in kept] == [1896506829212774400, 1896482900000000000]
    assert skipped == ["tweet 1896488500000000000 is a retweet",
                       "tweet 1896472800000000000 has no text", "a tweet that is not an object"]
    first = kept[0].item
    assert first.key == "x:1896506829212774400" and kept[0].handle == "examplelab"
    assert first.title == "We are releasing a new open model today."
    assert first.url == "https://x.com/examplelab/status/1896506829212774400"
    assert "https://example.org/open-model" in (first.body or ""), "t.co links expanded"
    assert "【引用 @someone】" in (first.body or "") and "【引用 @someone】" in first.summary
    assert first.raw["x"] == {"id": "1896506829212774400", "author": "examplelab", "lang": "en",
                              "likes": 2100, "retweets": 310, "replies": 40, "quotes": 12,
                              "views": 185000, "bookmarks": 95}
    assert first.images == ("https://pbs.twimg.com/media/GlExample1.jpg",)
    assert first.body_state is BodyState.OK and first.author == "@examplelab"
    article = kept[1].item
    assert article.body is None and article.body_state is BodyState.PENDING
    assert article.raw["x_article"] == "https://x.com/i/article/1896482000000000000"


def test_an_article_answer_fills_the_pending_tweet() -> None:
    kept, _ = parse_tweets(load("socialdata_search.json")["tweets"])
    item = with_article(kept[1].item, load("socialdata_article.json"))
    assert item.body_state is BodyState.OK
    assert item.title == "Why evaluation is the bottleneck", "a bare link takes the title"
    assert item.body == (
        "<h2>The problem</h2>"
        '<p><strong>Models</strong> improve faster than the <a href="https://example.org/tests">'
        "tests</a> we give them.</p>"
        "<ul><li>first point</li><li><em>second</em> &lt;point&gt;</li></ul>"
        '<p><img src="https://pbs.twimg.com/media/GlInline.jpg" alt=""/></p>'
        "<blockquote>Quoted wisdom</blockquote>")


@pytest.mark.parametrize("case", load("draft_states.json"), ids=lambda c: c["name"])
def test_draft_states_render_as_the_golden_html(case: dict[str, Any]) -> None:
    """Lists wrapped and nested by depth, overlapping styles well nested, only http(s)
    links and https images, blocks and ranges that are not well formed left out."""
    assert draft_to_html(case["content"]) == case["html"]


def test_a_dajiala_list_becomes_posts_keyed_by_their_link() -> None:
    posts, skipped = parse_posts(load("dajiala_post_history.json")["data"])
    assert [p.key for p in posts] == ["wx:MzA3MzI4MjgzMw==:2650912345:1", "wx:AbCdEfGhIjKlMnOp"]
    assert posts[0].url.startswith("https://mp.weixin.qq.com/s?__biz=")
    assert posts[0].title == "大模型周报：开源模型追上来了" and posts[0].digest
    assert posts[1].cover == ""
    assert skipped == ["a post without a link ('没有链接')"]
    item = posts[0].item("almosthuman2014")
    assert item.body_state is BodyState.PENDING and item.summary == "本周最值得关注的十件事"


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.sampled_from(
                        ["id_str", "full_text", "user", "entities", "urls", "blocks", "type",
                         "text", "entityMap", "quoted_status", "retweeted_status", "url",
                         "title", "post_time", "inlineStyleRanges", "entityRanges"]),
                        inner, max_size=6), max_leaves=20))
def test_arbitrary_answers_never_crash_the_parsers(data: Any) -> None:
    tweets = data if isinstance(data, list) else [data]
    kept, skipped = parse_tweets(tweets)
    assert all(isinstance(t, Tweet) for t in kept) and len(kept) + len(skipped) == len(tweets)
    parse_posts(tweets)
    if isinstance(data, dict):
        assert isinstance(draft_to_html(data), str)


@pytest.mark.parametrize(("case", "reason"), [
    ("key_refused", "dajiala: API key …0001 refused (code 10002"),
    ("no_balance", "dajiala: balance used up (code 20001"),
    ("account_gone", None),  # the account's trouble: the reader fails that source alone
])
def test_dajiala_error_codes_are_sorted_into_whose_trouble(case: str, reason: str | None
                                                           ) -> None:
    answer = load("dajiala_errors.json")[case]
    provider = Provider("dajiala", "http://127.0.0.1:9", "sk-test-0001")
    note = CallNote()
    if reason is None:
        inspect_answer(provider, answer, note)
        assert answer["code"] in ACCOUNT_CODES and note.cost == 0
        return
    with pytest.raises(ProviderError) as caught:
        inspect_answer(provider, answer, note)
    assert str(caught.value).startswith(reason) and "sk-test" not in str(caught.value)


def test_archived_answers_parse_again_without_the_network() -> None:
    now = datetime(2025, 3, 3, tzinfo=UTC)
    x_source = Source("x-examplelab", SourceKind("x"), "https://x.com/examplelab",
                      config={"handle": "examplelab"})
    body = json.dumps({"pages": [load("socialdata_search.json")]}).encode()
    raw = RawResponse("socialdata:search:examplelab", "", now, 200, {}, body)
    again = XReader().parse_raw(x_source, raw)
    assert [i.key for i in again.items] == ["x:1896506829212774400", "x:1896482900000000000"]
    wx_source = Source("wx-a", SourceKind("wechat"), "wechat:a", config={"account": "a"})
    listing = (DATA / "dajiala_post_history.json").read_bytes()
    wx = WechatReader().parse_raw(wx_source, RawResponse("http://p/list", "", now, 200, {},
                                                         listing))
    assert len(wx.items) == 2 and wx.items[0].author == "a"
    with pytest.raises(ParseError):
        XReader().parse_raw(x_source, replace(raw, body=b"<html>"))
    with pytest.raises(ParseError):
        WechatReader().parse_raw(wx_source, replace(raw, body=b"{oops"))
