"""Feed addresses of blog hosts and blog engines (R-DISC-1, the crawler's platforms).

Two kinds of knowledge, with two kinds of certainty:

* **hosts** - the address alone says where the feed is, because the host
  serves one for every blog it holds: Blogger (``/feeds/posts/default``),
  Tumblr (``/rss``), Substack (``/feed``), WordPress.com (``/feed/``), Ghost(Pro)
  (``/rss/``), Medium (``/feed/@user``), Mastodon profiles (``/@user.rss``),
  Bluesky profiles (``/profile/handle/rss``), and the Chinese hosts cnblogs
  (``/user/rss``), CSDN (``/user/rss/list``), Sina blogs (``/rss/uid.xml``);
* **engines** - the page's ``<meta name="generator">`` names the software, and
  its default feed path is a good guess (WordPress ``/feed/``, Ghost
  ``/rss/``, Hugo ``/index.xml``, Jekyll ``/feed.xml``, Hexo ``/atom.xml``,
  Typecho ``/index.php/feed/``, Z-Blog ``/feed.php``, Emlog ``/rss.php``,
  Halo ``/rss.xml``). Themes move these, so they are guesses: they never stop
  the probing of the usual paths and rank below a declaration.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = ["HostFeed", "engine_feeds", "host_feeds"]

HOST_SCORE = 12  # the host serves it for every blog: as good as a declaration, better
ENGINE_SCORE = 7  # the engine's default: below any declaration, above an <a> guess


@dataclass(frozen=True, slots=True)
class HostFeed:
    url: str
    title: str
    type: str
    score: int
    certain: bool  # a host's rule (True) or an engine's default (False)


def _sub(host: str, domain: str) -> bool:
    return host.endswith("." + domain) and host != "www." + domain


_PATH_RULES: tuple[tuple[str, re.Pattern[str], str, str, str], ...] = (
    # host, path pattern, feed template, title, type
    ("medium.com", re.compile(r"^/(@[^/]+)"), "https://medium.com/feed/{0}", "Medium", "rss"),
    ("bsky.app", re.compile(r"^/profile/([^/]+)"), "https://bsky.app/profile/{0}/rss",
     "Bluesky", "rss"),
    ("www.cnblogs.com", re.compile(r"^/([A-Za-z0-9_-]+)/?"), "https://www.cnblogs.com/{0}/rss",
     "博客园", "rss"),
    ("blog.csdn.net", re.compile(r"^/([A-Za-z0-9_-]+)/?"), "https://blog.csdn.net/{0}/rss/list",
     "CSDN", "rss"),
    ("blog.sina.com.cn", re.compile(r"^/u/(\d+)"), "https://blog.sina.com.cn/rss/{0}.xml",
     "新浪博客", "rss"),
)
_SUBDOMAIN_RULES: tuple[tuple[str, str, str, str], ...] = (
    # domain, feed path, title, type
    ("blogspot.com", "/feeds/posts/default", "Blogger", "atom"),
    ("tumblr.com", "/rss", "Tumblr", "rss"),
    ("substack.com", "/feed", "Substack", "rss"),
    ("wordpress.com", "/feed/", "WordPress.com", "rss"),
    ("ghost.io", "/rss/", "Ghost", "rss"),
    ("medium.com", "/feed", "Medium", "rss"),
)
_PROFILE = re.compile(r"^/@([A-Za-z0-9_]+)/?$")
_ENGINES: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"^wordpress", re.I), "/feed/", "rss"),
    (re.compile(r"^ghost", re.I), "/rss/", "rss"),
    (re.compile(r"^hugo", re.I), "/index.xml", "rss"),
    (re.compile(r"^jekyll", re.I), "/feed.xml", "atom"),
    (re.compile(r"^hexo", re.I), "/atom.xml", "atom"),
    (re.compile(r"^typecho", re.I), "/index.php/feed/", "rss"),
    (re.compile(r"^z-?blog", re.I), "/feed.php", "rss"),
    (re.compile(r"^emlog", re.I), "/rss.php", "rss"),
    (re.compile(r"^halo", re.I), "/rss.xml", "rss"),
    (re.compile(r"^(?:blogger|substack)", re.I), "", ""),  # their hosts' rules say it
)


def host_feeds(page_url: str, hints: Mapping[str, str] | None = None) -> list[HostFeed]:
    """The feed a blog host serves for the blog at ``page_url`` (empty for other hosts)."""
    parts = urlsplit(page_url)
    host = (parts.hostname or "").lower()
    origin = f"{parts.scheme}://{parts.netloc}"
    for domain, path, title, kind in _SUBDOMAIN_RULES:
        if _sub(host, domain):
            return [HostFeed(origin + path, title, kind, HOST_SCORE, True)]
    for rule_host, pattern, template, title, kind in _PATH_RULES:
        match = pattern.match(parts.path)
        if host == rule_host and match:
            return [HostFeed(template.format(match.group(1)), title, kind, HOST_SCORE, True)]
    profile = _PROFILE.match(parts.path)
    generator = (hints or {}).get("generator", "")
    if profile and (generator.lower().startswith("mastodon") or _looks_fediverse(hints)):
        return [HostFeed(f"{origin}/@{profile.group(1)}.rss", "Mastodon", "rss", HOST_SCORE,
                         True)]
    return []


def _looks_fediverse(hints: Mapping[str, str] | None) -> bool:
    """A profile page of a Mastodon-compatible server (``og:type`` profile, no generator)."""
    return bool(hints) and (hints or {}).get("og:type", "") == "profile"


def engine_feeds(page_url: str, generator: str) -> list[HostFeed]:
    """The default feed of the engine ``generator`` names, at the page's origin."""
    parts = urlsplit(page_url)
    origin = f"{parts.scheme}://{parts.netloc}"
    for pattern, path, kind in _ENGINES:
        if pattern.match(generator.strip()):
            if not path:
                return []
            name = generator.split(maxsplit=1)[0]
            return [HostFeed(origin + path, name, kind, ENGINE_SCORE, False)]
    return []
