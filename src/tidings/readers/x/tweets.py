"""SocialData tweet objects turned into items (R-X-5), with no network.

The search answer carries whole tweets (text, author, quoted tweet, media,
metrics), so a tweet is an item at once; only a tweet that links an X long-form
article leaves its body pending for the article endpoint.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from html import escape
from typing import Any

from tidings.model import BodyState, ItemData
from tidings.readers.x.draft import draft_to_html
from tidings.readers.x.query import tweet_time
from tidings.textutil import shorten

TITLE_CHARS = 140
MAX_IMAGES = 6
ARTICLE_LINK = re.compile(r"^https?://(?:www\.|mobile\.)?(?:x|twitter)\.com/i/article/\d+",
                          re.IGNORECASE)
_TCO = re.compile(r"https?://t\.co/\w+")
_METRICS = {"likes": "favorite_count", "retweets": "retweet_count", "replies": "reply_count",
            "quotes": "quote_count", "views": "views_count", "bookmarks": "bookmark_count"}


@dataclass(frozen=True, slots=True)
class Tweet:
    """One tweet as the reader keeps it: its id, author handle and the item."""

    id: int
    handle: str
    item: ItemData


def first_line(text: str, limit: int = TITLE_CHARS) -> str:
    """The first non-empty line, at most ``limit`` characters (with its ellipsis)."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return shorten(line, limit - 1)


def _text(tweet: Mapping[str, Any]) -> str:
    text = tweet.get("full_text") or tweet.get("text") or ""
    return text if isinstance(text, str) else ""


def _links(tweet: Mapping[str, Any]) -> dict[str, str]:
    """t.co short link -> expanded URL, from the tweet's entities."""
    entities = tweet.get("entities")
    out: dict[str, str] = {}
    urls = entities.get("urls") if isinstance(entities, Mapping) else None
    for entry in urls if isinstance(urls, list) else ():
        if isinstance(entry, Mapping) and entry.get("url") and entry.get("expanded_url"):
            out[str(entry["url"])] = str(entry["expanded_url"])
    return out


def _expand(text: str, links: Mapping[str, str]) -> str:
    return _TCO.sub(lambda m: links.get(m.group(0), m.group(0)), text)


def _images(tweet: Mapping[str, Any]) -> tuple[str, ...]:
    found: list[str] = []
    for key in ("extended_entities", "entities"):
        holder = tweet.get(key)
        media_list = holder.get("media") if isinstance(holder, Mapping) else None
        for media in media_list if isinstance(media_list, list) else ():
            url = media.get("media_url_https") if isinstance(media, Mapping) else None
            if isinstance(url, str) and url.startswith("https://") and url not in found:
                found.append(url)
    return tuple(found[:MAX_IMAGES])


def _handle(tweet: Mapping[str, Any]) -> str:
    user = tweet.get("user")
    name = user.get("screen_name") if isinstance(user, Mapping) else None
    return name if isinstance(name, str) else ""


def _paragraphs(text: str) -> str:
    parts = [p for p in text.split("\n") if p.strip()]
    return "".join(f"<p>{escape(p)}</p>" for p in parts)


def _quoted(tweet: Mapping[str, Any]) -> tuple[str, str]:
    """The quoted tweet inlined: as HTML, and as plain text for the summary."""
    quoted = tweet.get("quoted_status")
    if not isinstance(quoted, Mapping):
        return "", ""
    text = _expand(_text(quoted), _links(quoted)).strip()
    head = f"【引用 @{_handle(quoted)}】"
    return f"<blockquote>{escape(head)}{_paragraphs(text)}</blockquote>", f"{head}{text}"


def _published(tweet: Mapping[str, Any], tweet_id: int) -> datetime:
    raw = tweet.get("tweet_created_at")
    if isinstance(raw, str):
        try:
            return datetime.fromisoformat(raw.replace("Z", "+00:00")).astimezone(UTC)
        except ValueError:
            pass
    return tweet_time(tweet_id)


def tweet_id(tweet: Mapping[str, Any]) -> int | None:
    raw = tweet.get("id_str") or tweet.get("id")
    try:
        return int(str(raw))
    except (TypeError, ValueError):
        return None


def is_retweet(tweet: Mapping[str, Any]) -> bool:
    return bool(tweet.get("retweeted_status")) or _text(tweet).startswith("RT @")


def article_link(tweet: Mapping[str, Any]) -> str | None:
    for url in _links(tweet).values():
        if ARTICLE_LINK.match(url):
            return url
    return None


def parse_tweet(tweet: Mapping[str, Any]) -> Tweet | str:
    """The tweet as an item, or why it is left out (a retweet, no id, no text)."""
    tid = tweet_id(tweet)
    if tid is None:
        return "a tweet without an id"
    if is_retweet(tweet):
        return f"tweet {tid} is a retweet"
    handle = _handle(tweet)
    text = _expand(_text(tweet), _links(tweet)).strip()
    images = _images(tweet)
    article = article_link(tweet)
    if not text and not images and article is None:
        return f"tweet {tid} has no text"
    quote_html, quote_text = _quoted(tweet)
    metrics = {name: tweet.get(field) for name, field in _METRICS.items()
               if isinstance(tweet.get(field), int)}
    raw = {"x": {"id": str(tid), "author": handle, "lang": tweet.get("lang"), **metrics}}
    item = ItemData(
        title=first_line(text, TITLE_CHARS) or f"@{handle}",
        url=f"https://x.com/{handle or 'i'}/status/{tid}", key=f"x:{tid}",
        summary=shorten(text + ("\n" + quote_text if quote_text else "")),
        body=None if article else _paragraphs(text) + quote_html + "".join(
            f'<p><img src="{escape(u)}" alt=""></p>' for u in images),
        body_state=BodyState.PENDING if article else BodyState.OK,
        published_at=_published(tweet, tid), author=f"@{handle}" if handle else "",
        images=images, raw={**raw, "x_article": article} if article else raw,
    )
    return Tweet(tid, handle.lower(), item)


def parse_tweets(tweets: Sequence[Any]) -> tuple[list[Tweet], list[str]]:
    """Every tweet of a page parsed; what was left out comes back as reasons."""
    kept: list[Tweet] = []
    skipped: list[str] = []
    for tweet in tweets:
        parsed = (parse_tweet(tweet) if isinstance(tweet, Mapping)
                  else "a tweet that is not an object")
        if isinstance(parsed, Tweet):
            kept.append(parsed)
        else:
            skipped.append(parsed)
    return kept, skipped


def with_article(item: ItemData, answer: Mapping[str, Any]) -> ItemData:
    """The tweet's item with its long-form article's body from the article endpoint."""
    article = answer.get("article")
    if not isinstance(article, Mapping):
        return item
    content = article.get("content_state") or article.get("content")
    body = draft_to_html(content) if isinstance(content, Mapping) else ""
    if not body:
        return item
    title = article.get("title")
    cover = article.get("cover_url")
    images = (cover,) if isinstance(cover, str) and cover.startswith("https://") else ()
    only_link = item.title.startswith(("http://", "https://"))
    return replace(item, body=body, body_state=BodyState.OK,
                   title=str(title)[:TITLE_CHARS] if only_link and title else item.title,
                   images=item.images or images)
