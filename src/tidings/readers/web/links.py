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
from urllib.parse import urldefrag, urljoin, urlsplit

from lxml.html import HtmlElement

from tidings.textutil import collapse_ws

_NAV_PATH = re.compile(
    r"/(?:tags?|topics?|categor(?:y|ies)|labels?|authors?|writers?|people|archives?|page"
    r"|login|log-in|signin|sign-in|signup|sign-up|register|account|search|feed|rss"
    r"|subscribe|share|sharer|intent)(?:/|$|\.)"
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
_MEDIA_TAGS = ("img", "picture", "svg", "video", "audio", "figure", "script", "style",
               "noscript", "button")
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
# A title attribute wins when the text is this many times longer (a whole card).
_CARD_RATIO = 2


def absolute(href: str | None, base: str) -> str | None:
    """``href`` resolved against ``base``; None for what is not an http(s) page."""
    if not href:
        return None
    href = href.strip()
    if not href or href.startswith(("#", "javascript:", "mailto:", "tel:", "data:")):
        return None
    url = urldefrag(urljoin(base, href)).url  # "#comments" is the same entry
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return url


def other_site(url: str, page_url: str) -> bool:
    """True when ``url`` is on another host than the page (``same_site``); ``www.`` aside."""
    def host(u: str) -> str:
        return (urlsplit(u).hostname or "").removeprefix("www.")
    return host(url) != host(page_url)


def is_navigation(url: str, page_url: str) -> bool:
    """True for a link that is part of the site's chrome rather than an entry."""
    parts = urlsplit(url)
    page = urlsplit(page_url)
    if (parts.hostname or "").lower() in _SHARE_HOSTS:
        return True
    if parts.path.rstrip("/") == page.path.rstrip("/") and parts.hostname == page.hostname:
        return True  # the page itself (or its pagination by query)
    if parts.path in ("", "/"):
        return True  # a home page
    return bool(_NAV_PATH.search(parts.path) or _NAV_QUERY.search(parts.query))


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
    for tag in _HEADINGS:
        for heading in link.iter(tag):
            text = collapse_ws(heading.text_content())
            if text:
                return text
    if not any(True for _ in link.iter(*_MEDIA_TAGS)):
        return collapse_ws(link.text_content())
    copy = _without_media(link)
    return collapse_ws(copy.text_content())


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
