"""Dajiala-style answers turned into posts and items, with no network.

The list answer gives each post's metadata (title, link, digest, cover, time);
the body is a second, separate purchase per post. Newness is decided by the
identity key of the post's link (R-WX-2), never by its time, because accounts
re-send and re-order posts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tidings.model import BodyState, ItemData

#: the link parameters that name a post; the rest are per-reader tracking
POST_PARAMS = ("__biz", "mid", "idx")


@dataclass(frozen=True, slots=True)
class Post:
    key: str
    url: str
    title: str
    digest: str
    cover: str
    published_at: datetime | None

    def item(self, account: str) -> ItemData:
        return ItemData(title=self.title, url=self.url, key=self.key, summary=self.digest,
                        published_at=self.published_at, author=account,
                        images=(self.cover,) if self.cover else (),
                        body_state=BodyState.PENDING, raw={"wechat": {"account": account}})


def post_key(url: str) -> str:
    """``wx:`` + what names the post in its link: __biz/mid/idx, or the short /s/ path."""
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    if all(query.get(p) for p in POST_PARAMS):
        return "wx:" + ":".join(query[p][0] for p in POST_PARAMS)
    return "wx:" + parts.path.rstrip("/").rsplit("/", 1)[-1]


def _when(entry: Mapping[str, Any]) -> datetime | None:
    stamp = entry.get("post_time")
    if isinstance(stamp, int | float) and stamp > 0:
        return datetime.fromtimestamp(stamp, UTC)
    return None


def parse_posts(data: Sequence[Any]) -> tuple[list[Post], list[str]]:
    """The list answer's posts (deleted ones left out) and why others were skipped."""
    posts: list[Post] = []
    skipped: list[str] = []
    for entry in data:
        if not isinstance(entry, Mapping):
            skipped.append("a post that is not an object")
            continue
        url, title = entry.get("url"), entry.get("title")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            skipped.append(f"a post without a link ({str(title)[:40]!r})")
            continue
        if entry.get("is_deleted") in (1, "1", True):
            continue
        cover = entry.get("cover_url")
        posts.append(Post(post_key(url), url.replace("http://", "https://", 1),
                          str(title or "").strip(), str(entry.get("digest") or "").strip(),
                          cover if isinstance(cover, str) and cover.startswith("http") else "",
                          _when(entry)))
    return posts, skipped


def post_json(post: Post) -> dict[str, Any]:
    return {"key": post.key, "url": post.url, "title": post.title, "digest": post.digest,
            "cover": post.cover,
            "at": post.published_at.isoformat() if post.published_at else None}


def post_of(data: Mapping[str, Any]) -> Post:
    at = data.get("at")
    return Post(str(data["key"]), str(data["url"]), str(data.get("title") or ""),
                str(data.get("digest") or ""), str(data.get("cover") or ""),
                datetime.fromisoformat(at) if isinstance(at, str) else None)
