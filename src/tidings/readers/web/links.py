"""Which links of a list page are entries, and what each one is called (R-WEB-1).

The navigation filter knows the URL shapes that are never an entry on a list
page: archives by tag, category, author, year or month, pagination, login and
sharing links. A card link (an image, a heading, a teaser, all in one ``<a>``)
is read without its images and media; a ``title`` attribute is preferred when
the link text is empty or much longer than it (a card, "Read more").
"""

from __future__ import annotations

import copy
import re
from functools import lru_cache
from urllib.parse import urljoin, urlsplit

from lxml.html import HtmlElement

from tidings.textutil import collapse_ws

_NAV_PATH = re.compile(
    r"/(?:tags?|topics?|categor(?:y|ies)|labels?|authors?|writers?|people|archives?|page"
    r"|login|log-in|signin|sign-in|signup|sign-up|register|account|search|feed|rss"
    r"|subscribe|share|sharer|intent|legal|privacy|terms|cookies|contact|about|press"
    r"|careers|jobs)(?:/|$|\.)"
    r"|/(?:19|20)\d\d/?$|/(?:19|20)\d\d/[01]?\d/?$",  # year and month archives
    re.IGNORECASE,
)
_NAV_QUERY = re.compile(r"(?:^|&)(?:page|p|paged|tag|category|cat|author|share)=",
                        re.IGNORECASE)
_SHARE_HOSTS = frozenset({
    "twitter.com", "x.com", "facebook.com", "www.facebook.com", "linkedin.com",
    "www.linkedin.com", "reddit.com", "www.reddit.com", "t.me", "wa.me",
    "news.ycombinator.com", "bsky.app", "mastodon.social",
})  # fmt: skip
_NOT_PAGES = ("#", "javascript:", "mailto:", "tel:", "data:")
_WEB_URL = re.compile(r"https?://[^/?#\s]", re.IGNORECASE)
_MEDIA_TAGS = ("img", "picture", "svg", "video", "audio", "figure", "script", "style",
               "noscript", "button")
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
# A title attribute wins when the text is this many times longer (a whole card).
_CARD_RATIO = 2


# Links and dates are cached by value up to this length: a list page polled again
# shows mostly the same ones, and a hostile page's megabyte href must not sit in a cache.
CACHED_LEN = 2048


def absolute(href: str | None, base: str) -> str | None:
    """``href`` resolved against ``base``, without its fragment; None for what is not an
    http(s) page."""
    if href is not None and len(href) > CACHED_LEN:
        return _absolute(href, base)
    return absolute_cached(href, base)


def _absolute(href: str | None, base: str) -> str | None:
    if not href:
        return None
    href = href.strip()
    if not href or href.startswith(_NOT_PAGES):
        return None
    if href.startswith(("https://", "http://")):
        url = href
    elif href[0] == "/" and href[1:2] != "/" and "/." not in href:
        url = _origin(base) + href  # a rooted path: what urljoin gives, without its cost
    else:
        url = urljoin(base, href)
    url = url.split("#", 1)[0]  # "#comments" is the same entry
    if not _WEB_URL.match(url):
        return None
    return url


def other_site(url: str, page_url: str) -> bool:
    """True when ``url`` is on another host than the page (``same_site``); ``www.`` aside."""
    def host(u: str) -> str:
        return (urlsplit(u).hostname or "").removeprefix("www.")
    return host(url) != host(page_url)


@lru_cache(maxsize=256)
def _origin(base: str) -> str:
    parts = urlsplit(base)
    return f"{parts.scheme}://{parts.netloc}"


@lru_cache(maxsize=256)
def _page_parts(page_url: str) -> tuple[str, str]:
    parts = urlsplit(page_url)
    return parts.hostname or "", parts.path.rstrip("/")


def is_navigation(url: str, page_url: str) -> bool:
    """True for a link that is part of the site's chrome rather than an entry."""
    if len(url) > CACHED_LEN:
        return _is_navigation(url, page_url)
    return navigation_cached(url, page_url)


def _is_navigation(url: str, page_url: str) -> bool:
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if host in _SHARE_HOSTS:
        return True
    page_host, page_path = _page_parts(page_url)
    if parts.path in ("", "/") or (parts.path.rstrip("/") == page_path and host == page_host):
        return True  # a home page; the page itself (or its pagination by query)
    return bool(_NAV_PATH.search(parts.path) or _NAV_QUERY.search(parts.query))


absolute_cached = lru_cache(maxsize=4096)(_absolute)
navigation_cached = lru_cache(maxsize=4096)(_is_navigation)


def page_base(root: HtmlElement, url: str) -> str:
    """The URL relative links resolve against: ``<base href>`` when the page has one."""
    for base in root.iter("base"):
        href = base.get("href")
        if href:
            return str(urljoin(url, str(href).strip()))
    return url


def link_text(link: HtmlElement) -> str:
    """The link's text without what images and media put in it; a card's heading
    when it has one."""
    media = False
    for el in link.iter(*_HEADINGS, *_MEDIA_TAGS):
        if el.tag in _HEADINGS:
            text = collapse_ws(el.text_content())
            if text:
                return text
        else:
            media = True
    if not media:
        return collapse_ws(link.text_content())
    return collapse_ws(_without_media(link).text_content())


def _without_media(link: HtmlElement) -> HtmlElement:
    clone: HtmlElement = copy.deepcopy(link)
    for el in list(clone.iter(*_MEDIA_TAGS)):
        if el is not clone:
            el.drop_tree()  # keeps the tail text
    return clone


def link_title(link: HtmlElement) -> str:
    """The entry's title as the link gives it (see the module docstring)."""
    text = link_text(link)
    attr = collapse_ws(link.get("title") or link.get("aria-label") or "")
    if attr and (not text or len(text) > _CARD_RATIO * len(attr)):
        return attr
    return text
