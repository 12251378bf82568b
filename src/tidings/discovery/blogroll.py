"""Blogroll detection (R-DISC-2): the block of links a site keeps to other people's sites.

Every ``div``, ``table``, ``ul``, ``ol``, ``section`` and ``aside`` is scored
from the links inside it, in one bottom-up pass over the tree:

* each link with text to another site's home page (or one level below it,
  no query) counts 1, and 1 more when it opens a new window
  (``target=_blank``); each link to the page's own site counts -1; links
  without text (icons, banners), to social networks and share dialogs, and
  deep links to other sites count nothing;
* ``points = (outbound - internal) * 1000``, then scaled down by how much of
  the block's text is link text (``affect(points, 0.1, link_text / text, 2)``)
  and by how many of its tags are links (``affect(points, 0.1, links / tags, 1)``);
* a block below :data:`THRESHOLD` or with fewer than :data:`MIN_SITES`
  distinct sites is no blogroll (footers with two credits, a "follow me"
  row). Tag clouds, menus and archives link inwards and score nothing.

The best block is the blogroll. A home page without one often links to a page
the site calls "Links", "Blogroll", "Friends", "友情链接" or "友链":
:func:`blogroll_pages` names those pages for the crawler to try next.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

from lxml import etree

from tidings.discovery.html import element_text, parse_html
from tidings.discovery.sites import is_homepage_like, paths_stay_home, site_key
from tidings.identity import resolve_url

__all__ = ["MIN_SITES", "THRESHOLD", "Blogroll", "RollLink", "affect", "blogroll_pages",
           "find_blogroll", "find_blogroll_in"]

CONTAINERS = frozenset({"div", "table", "ul", "ol", "section", "aside"})
THRESHOLD = 1000.0
MIN_SITES = 3
_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "head"})
_SOCIAL = frozenset({
    "facebook.com", "twitter.com", "x.com", "linkedin.com", "instagram.com", "pinterest.com",
    "t.me", "weibo.com", "wa.me", "tiktok.com", "threads.net", "reddit.com", "wordpress.org",
    "news.ycombinator.com", "feedly.com", "getpocket.com", "addtoany.com", "sharethis.com",
    "gravatar.com", "creativecommons.org", "w3.org", "validator.w3.org", "ghost.org",
    "hexo.io", "gohugo.io", "jekyllrb.com", "blogger.com", "beian.miit.gov.cn",
})
_BLOCK_TAGS = frozenset({"div", "p", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "span"})
_SHARE = re.compile(r"/(?:dialog|sharer?|intent|share)(?:[/.?]|$)", re.IGNORECASE)
_ROLL_WORDS = re.compile(
    r"^\W*(?:blog\s*roll|links?|friends?|friend\s*links?|友情链接|友链|友情鏈接|友鏈|朋友们?|"
    r"blogs?\s+i\s+(?:read|follow)|other\s+blogs)\W*$", re.IGNORECASE)
_ROLL_PATHS = re.compile(r"/(?:blogroll|links?|friends?|friend-?links?|youlian|link\.html)/?$",
                         re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class RollLink:
    """One site a blogroll links to: the address as written and the link's text."""

    url: str
    text: str


@dataclass(frozen=True, slots=True)
class Blogroll:
    links: tuple[RollLink, ...]
    score: float
    container: str  # the block's tag with its id/class, for explanations and tests


def affect(points: float, keep: float, ratio: float, power: float) -> float:
    """``points`` scaled by ``ratio**power`` except for a ``keep`` share it never loses."""
    if ratio >= 1.0:
        return points
    kept = points * keep
    scale: float = max(ratio, 0.0) ** power
    return kept + (points - kept) * scale


@dataclass(slots=True)
class _Tally:
    outbound: float = 0.0
    internal: float = 0.0
    link_text: int = 0
    text: int = 0
    tags: int = 0


def _link_text(a: etree._Element, text: str) -> str:
    """The name a link shows: its ``text``, or the first block inside it (card layouts
    put the site's name and its description in two blocks)."""
    for child in a:
        if child.tag in _BLOCK_TAGS:
            name = element_text(child)
            if name:
                return name
    return text


@lru_cache(maxsize=2048)
def _target(url: str) -> tuple[str, bool]:
    """``url``'s site key and whether a blogroll may name it: another site's home page
    (or one level below), not a social network or a share dialog. Cached: the same
    sites recur in many blogrolls."""
    key = site_key(url)
    host = (urlsplit(url).hostname or "").removeprefix("www.")
    return key, host not in _SOCIAL and not _SHARE.search(url) and is_homepage_like(url)


@lru_cache(maxsize=2048)
def _absolute(scheme: str, href: str) -> str | None:
    return resolve_url(f"{scheme}://base.invalid/", href)


@dataclass(frozen=True, slots=True)
class _Page:
    """The page whose links are scored: its address, scheme and site key, and whether a
    root-relative link is known to stay on its site (:func:`paths_stay_home`)."""

    url: str
    scheme: str
    home: str
    paths_home: bool

    @classmethod
    def of(cls, url: str) -> _Page:
        return cls(url, urlsplit(url).scheme.lower(), site_key(url), paths_stay_home(url))

    def resolve(self, href: str) -> str | None:
        """:func:`resolve_url` against the page, without its cost for the common links: an
        absolute link with a host does not depend on the page beyond its scheme."""
        if href.startswith(("http://", "https://")):
            rest = href.partition("//")[2]
            if rest[:1].isalnum():
                return _absolute(self.scheme, href)
        return resolve_url(self.url, href)

    def is_internal_path(self, href: str) -> bool:
        """``/about/``: on the page's own site without resolving it."""
        return (self.paths_home and href.startswith("/") and not href.startswith("//")
                and "@" not in href)


def _own_link(el: etree._Element, page: _Page) -> tuple[_Tally, RollLink | None]:
    """What the link ``el`` adds by itself (not its children, nor their tails: the caller
    counts those as it adds the children up) and the outbound link it is, if any."""
    tally = _Tally(text=len((el.text or "").strip()), tags=1)
    href = (el.get("href") or "").strip()
    if page.is_internal_path(href):
        tally.internal = 1
        return tally, None
    url = page.resolve(href)
    if url is None:
        return tally, None
    home = page.home
    key, roll_like = _target(url)
    if key == home or not key:
        tally.internal = 1
        return tally, None
    if not roll_like:
        return tally, None
    text = element_text(el)
    if text:
        tally.outbound = 2 if (el.get("target") or "").lower() == "_blank" else 1
        tally.link_text = len(text)
        return tally, RollLink(url, _link_text(el, text)[:200])
    return tally, None


def _score(t: _Tally, sites: int) -> float:
    points = (t.outbound - t.internal) * 1000
    if points <= 0 or sites < MIN_SITES:
        return 0.0
    points = affect(points, 0.1, t.link_text / max(t.text, 1), 2.0)
    points = affect(points, 0.1, t.outbound / max(t.tags, 1), 1.0)
    return points if points >= THRESHOLD else 0.0


def _describe(el: etree._Element) -> str:
    ident = el.get("id")
    cls = " ".join((el.get("class") or "").split())
    return f"{el.tag}{'#' + ident if ident else ''}{'.' + cls.replace(' ', '.') if cls else ''}"


def find_blogroll_in(root: etree._Element, page_url: str) -> Blogroll | None:
    """The best-scoring block of ``root`` as a blogroll, or None when no block qualifies."""
    order = list(root.iter(etree.Element))
    page = _Page.of(page_url)
    tallies: dict[etree._Element, _Tally] = {}
    links: dict[etree._Element, list[RollLink]] = {}  # only elements that hold some
    best: tuple[float, etree._Element, list[RollLink]] | None = None
    for el in reversed(order):  # children before parents
        tag = el.tag
        if tag in _SKIP:
            continue
        own_links: list[RollLink] = []
        if tag == "a":
            tally, link = _own_link(el, page)
            if link is not None:
                own_links.append(link)
        else:
            text = el.text
            tally = _Tally(text=len(text.strip()) if text else 0, tags=1)
        if len(el):
            for child in el:
                tail = child.tail
                if tail:
                    tally.text += len(tail.strip())
                sub = tallies.pop(child, None)
                if sub is None:
                    continue
                tally.outbound += sub.outbound
                tally.internal += sub.internal
                tally.link_text += sub.link_text
                tally.text += sub.text
                tally.tags += sub.tags
                held = links.pop(child, None)
                if held:
                    own_links.extend(held)
        tallies[el] = tally
        if own_links:
            links[el] = own_links
        if tag in CONTAINERS:
            score = _score(tally, len({_target(x.url)[0] for x in own_links}))
            if score > 0 and (best is None or score > best[0]):
                best = (score, el, own_links)  # a parent extends a list of its own
    if best is None:
        return None
    score, el, found = best
    if any(anc.tag in _SKIP for anc in el.iterancestors()):
        found = []  # a block inside <noscript> or <template>: its links are not the page's
    return Blogroll(_distinct(found), score, _describe(el))


def _distinct(links: list[RollLink]) -> tuple[RollLink, ...]:
    """One link per site, in page order."""
    seen: set[str] = set()
    out: list[RollLink] = []
    for link in links:
        key = site_key(link.url)
        if key not in seen:
            seen.add(key)
            out.append(link)
    return tuple(out)


def find_blogroll(html: str, page_url: str) -> Blogroll | None:
    """:func:`find_blogroll_in` on page text; never raises on bad markup."""
    root = parse_html(html)
    return None if root is None else find_blogroll_in(root, page_url)


def blogroll_pages(root: etree._Element, page_url: str, limit: int = 2) -> list[str]:
    """Pages of the same site that are probably its blogroll, best guesses first."""
    here = site_key(page_url)
    found: list[str] = []
    for a in root.iter("a"):
        url = resolve_url(page_url, (a.get("href") or "").strip())
        if url is None or site_key(url) != here or url in found:
            continue
        text = element_text(a)
        if _ROLL_WORDS.match(text) or _ROLL_PATHS.search(urlsplit(url).path):
            found.append(url.split("#", 1)[0])
        if len(found) >= limit:
            break
    return found
