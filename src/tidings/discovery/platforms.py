"""Feed addresses that common platforms have but rarely declare (R-DISC-1).

Recognised from the page address (and, for YouTube handles, from the channel id
the page carries): a YouTube channel or playlist, a GitHub repository or user;
blog hosts and engines through :mod:`hosts`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from tidings.discovery.hosts import engine_feeds, host_feeds

__all__ = ["PlatformFeed", "platform_feeds"]

#: Score of a platform's main feed: above any declaration, because it is known
#: to exist, to be complete and not to be a comments feed.
PRIMARY = 12
SECONDARY = 9

_YOUTUBE_HOSTS = frozenset({"youtube.com", "www.youtube.com", "m.youtube.com"})
_YT_FEED = "https://www.youtube.com/feeds/videos.xml"
_CHANNEL_ID = r"UC[A-Za-z0-9_-]{22}"
_YT_PATH = re.compile(rf"^/channel/({_CHANNEL_ID})(?:/|$)")
_YT_CHANNEL_IN_URL = re.compile(rf"/channel/({_CHANNEL_ID})(?:[/?#]|$)")
_YT_CHANNEL_ONLY = re.compile(rf"^{_CHANNEL_ID}$")
# The page's JSON names the channel it belongs to; other channel ids on the page
# (recommendations) appear under other keys.
_YT_EXTERNAL_ID = re.compile(rf'"externalId"\s*:\s*"({_CHANNEL_ID})"')
_PLAYLIST = re.compile(r"^[A-Za-z0-9_-]{10,64}$")

_GITHUB_HOSTS = frozenset({"github.com", "www.github.com"})
_GITHUB_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,99})$")
# First path segments that are GitHub's own pages, not users.
_RESERVED_WORDS = """about apps blog collections codespaces contact customer-stories enterprise
events explore features issues join login marketplace new notifications orgs organizations
pricing pulls readme search security settings site sponsors topics trending users"""
_GITHUB_RESERVED = frozenset(_RESERVED_WORDS.split())


@dataclass(frozen=True, slots=True)
class PlatformFeed:
    url: str
    title: str
    type: str
    score: int
    certain: bool = True  # False: an engine's default path, a guess (see ``hosts``)


def platform_feeds(
    page_url: str, *, hints: Mapping[str, str] | None = None, html: str = ""
) -> list[PlatformFeed]:
    """Feeds a known platform offers for ``page_url`` (empty for other sites).

    ``hints`` are what the page says about itself: ``canonical`` (the
    ``<link rel=canonical>`` address) and the ``<meta>`` values by name,
    property or itemprop (``og:url``, ``channelId``, ``identifier``).
    """
    try:
        parts = urlsplit(page_url.strip())
    except ValueError:
        return []
    host = (parts.hostname or "").lower()
    if host in _YOUTUBE_HOSTS:
        return _youtube(parts.path, parts.query, hints or {}, html)
    if host in _GITHUB_HOSTS:
        return _github(parts.path)
    hints = hints or {}
    known = host_feeds(page_url, hints) or engine_feeds(page_url, hints.get("generator", ""))
    return [PlatformFeed(f.url, f.title, f.type, f.score, f.certain) for f in known]


def _youtube(path: str, query: str, hints: Mapping[str, str], html: str) -> list[PlatformFeed]:
    found: list[PlatformFeed] = []
    channel = _youtube_channel(path, hints, html)
    if channel:
        found.append(
            PlatformFeed(f"{_YT_FEED}?channel_id={channel}", "YouTube channel", "atom", PRIMARY)
        )
    playlist = parse_qs(query).get("list", [""])[0]
    if _PLAYLIST.match(playlist):
        found.append(
            PlatformFeed(f"{_YT_FEED}?playlist_id={playlist}", "YouTube playlist", "atom", PRIMARY)
        )
    return found


def _youtube_channel(path: str, hints: Mapping[str, str], html: str) -> str | None:
    """From the most to the least specific statement of the page's own channel."""
    for address in (path, hints.get("canonical", ""), hints.get("og:url", "")):
        match = _YT_CHANNEL_IN_URL.search(address + "/")
        if match:
            return match.group(1)
    for name in ("channelId", "identifier"):
        value = hints.get(name, "").strip()
        if _YT_CHANNEL_ONLY.match(value):
            return value
    found = _YT_EXTERNAL_ID.search(html)
    return found.group(1) if found else None


def _github(path: str) -> list[PlatformFeed]:
    segments = [s for s in path.split("/") if s]
    if not segments or segments[0].lower() in _GITHUB_RESERVED:
        return []
    owner = segments[0]
    if not _GITHUB_NAME.match(owner):
        return []
    if len(segments) == 1:
        return [PlatformFeed(f"https://github.com/{owner}.atom", f"{owner} activity", "atom", 8)]
    repo = segments[1].removesuffix(".git")
    if not _GITHUB_NAME.match(repo):
        return []
    base = f"https://github.com/{owner}/{repo}"
    return [
        PlatformFeed(f"{base}/releases.atom", f"{owner}/{repo} releases", "atom", PRIMARY),
        PlatformFeed(f"{base}/commits.atom", f"{owner}/{repo} commits", "atom", SECONDARY),
    ]
