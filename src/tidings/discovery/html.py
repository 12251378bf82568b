"""Feed candidates declared or linked in an HTML page (R-DISC-1), no I/O.

Scoring, in points (higher is better):

* a declaration - ``<link>`` whose ``rel`` tokens (any case) contain
  ``alternate`` and whose media type, parameters dropped, is a feed type
  (RSS, Atom, RDF, JSON Feed, JF2) - scores 10; the vendor spellings of those
  types (``application/x-rss+xml``...) lose 1. Only declarations stop the
  probing of the usual feed paths;
* everything else a ``<link>`` carries is at most a guess: an alternate link
  with a generic type (``text/xml``, ``application/json``) or no type and a
  feed-like address scores 6 (generic ``application/json`` 5); a feed type
  under another rel (``self``, ``service.post``, ``feed``...) scores 4;
  ``sitemap``, ``hub``, icons, stylesheets and the like are never feeds;
* ``<a>`` links: 5 for a feed-like address, +1 for a feed media type, +1 for
  text such as "RSS"; 3 when only the text says "RSS"/"Atom"/"订阅";
* an ``href`` containing ``comment``, ``rpc`` or ``rsd`` loses 5 (comment
  feeds, XML-RPC and RSD endpoints are not the site feed); a title naming
  comments loses 3 (WordPress per-post comment feeds have a neutral address);
* a feed under the page's own (non-root) path loses 2: on an article that is
  its comments feed, on a category page the category feed - both less the
  site feed than one found elsewhere;
* ``<a>`` links to share dialogs are ignored, and so are links to social
  networks whose only claim is a text like "Twitter feed";
* known platforms (see :mod:`platforms`) score 12 for their main feed.

The same feed found several ways (after URL normalization) is listed once
with its best score.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from lxml import etree

from tidings.discovery.platforms import platform_feeds
from tidings.identity import normalize_url, resolve_url
from tidings.model import FeedCandidate
from tidings.textutil import collapse_ws

__all__ = ["Found", "collect_candidates", "element_text", "find_feeds_in_html", "guess_type",
           "looks_like_feed_url", "parse_html", "raw_text"]

FULL_DECLARATION = 10

# media type -> (feed type, deduction): the feed types a declaration may name
_LINK_TYPES: dict[str, tuple[str, int]] = {
    "application/rss+xml": ("rss", 0),
    "application/atom+xml": ("atom", 0),
    "application/feed+json": ("json", 0),
    "application/rdf+xml": ("rdf", 0),
    "application/jf2feed+json": ("jf2", 0),
    "application/x-rss+xml": ("rss", 1),
    "application/x.atom+xml": ("atom", 1),
    "application/x-atom+xml": ("atom", 1),
    "text/rss+xml": ("rss", 1),
}
# generic types: a guess when the address says "feed", never a declaration
_GENERIC_TYPES: dict[str, tuple[str, int]] = {
    "text/xml": ("rss", 6),
    "application/xml": ("rss", 6),
    "application/x-netcdf": ("rss", 6),  # old Netscape RSS 0.91 servers
    "application/json": ("json", 5),
}
#: score of a feed type under a rel other than ``alternate`` (``self``, ``service.post``)
OTHER_REL = 4
UNTYPED_ALTERNATE = 6
#: rels whose links are never the site's feed, whatever type they carry
_NOT_FEED_RELS = frozenset({
    "stylesheet", "icon", "meta", "preload", "prefetch", "canonical", "manifest",
    "pingback", "sitemap", "hub", "search", "edituri", "wlwmanifest", "shortlink",
    "apple-touch-icon", "mask-icon", "dns-prefetch", "preconnect", "modulepreload",
})
_FEED_SEGMENTS = frozenset(
    {"feed", "feeds", "rss", "rss2", "atom", "index.xml", "feed.xml", "rss.xml", "atom.xml"}
    | {
        "index.rss",
        "index.atom",
        "rdf",
        "feed.json",
        "feed.atom",
        "feed.rss",
        "rss.php",
        "index.rdf",
    }
)
_FEED_SUFFIXES = (".rss", ".atom", ".rdf")
_FEED_QUERY = re.compile(r"(?:^|&)(?:feed|format|type|output)=(?:rss2?|atom|rdf|json)\b", re.I)
_FEED_WORDS = re.compile(r"\b(?:rss|atom|feed|json\s*feed)\b|订阅|訂閱|rss\s*源", re.IGNORECASE)
_COMMENT_TITLE = re.compile(
    r"comm?ent|komentar|coment[aá]rio|评论|評論|留言|コメント|댓글", re.IGNORECASE
)
# Share buttons ("facebook.com/dialog/feed", "twitter.com/intent/tweet") are not feeds.
_SHARE_PATH = re.compile(r"/(?:dialog|sharer?|intent)(?:[/.?]|$)", re.IGNORECASE)
_SOCIAL_HOSTS = frozenset(
    {"facebook.com", "twitter.com", "x.com", "linkedin.com", "instagram.com", "pinterest.com"}
    | {"t.me", "weibo.com", "wa.me", "tiktok.com", "threads.net", "youtube.com"}
)
_BAD_HREF = ("comment", "rpc", "rsd")
def _feedish(text: str) -> bool:
    """Whether ``text`` holds "feed", "rss", "atom", "xml", "rdf" or "json" in any case
    (every address looks_like_feed_url accepts does): ``re.IGNORECASE``'s match (where
    the long s "ſ" matches "s") at a fraction of its cost, asked for every link."""
    low = text.lower()
    if "ſ" in low:
        low = low.replace("ſ", "s")
    return ("feed" in low or "rss" in low or "atom" in low or "xml" in low or "rdf" in low
            or "json" in low)


def raw_text(el: etree._Element) -> str:
    """The text of ``el`` and its descendants, as ``itertext`` joins it (an element
    without children, most links, without the iterator)."""
    if not len(el):
        return el.text or ""
    return "".join(str(t) for t in el.itertext())


def element_text(el: etree._Element) -> str:
    """:func:`raw_text` with its whitespace collapsed: what a reader sees of ``el``."""
    return collapse_ws(raw_text(el))


@dataclass(frozen=True, slots=True)
class Found:
    """A candidate with where it came from: ``link`` (a declaration), ``guess`` (any
    other ``<link>``), ``a`` or ``platform``."""

    candidate: FeedCandidate
    origin: str

    @property
    def declared(self) -> bool:
        """Stated by the page or known for the platform (not a guess from an <a>)."""
        return self.origin in ("link", "platform")


def guess_type(url: str) -> str:
    """rss / atom / json / rdf from the address alone (for links without a type)."""
    low = url.lower()
    if "atom" in low:
        return "atom"
    if "json" in low:
        return "json"
    if ".rdf" in low or "rdf" in urlsplit(low).query:
        return "rdf"
    return "rss"


def looks_like_feed_url(url: str) -> bool:
    """Whether the address alone says "feed" (``/feed``, ``*.rss``, ``?feed=rss2``...)."""
    parts = urlsplit(url)
    path = parts.path.lower().rstrip("/")
    last = path.rpartition("/")[2]
    if last in _FEED_SEGMENTS or last.endswith(_FEED_SUFFIXES):
        return True
    if "/feeds/" in path:  # Blogger's /feeds/posts/default, /feeds/all, /feeds/news.rss
        return True
    host = (parts.hostname or "").lower()
    if host.startswith("feeds.") or "feedburner" in host:
        return True
    if last.endswith(".xml") and any(w in last for w in ("feed", "rss", "atom")):
        return True
    return bool(_FEED_QUERY.search(parts.query))


def _penalty(url: str, title: str) -> int:
    low = url.lower()
    points = 5 * sum(1 for bad in _BAD_HREF if bad in low)
    if "comment" not in low and _COMMENT_TITLE.search(title):
        points += 3
    return points


def _under_page(url: str, page_url: str) -> int:
    """2 when the feed lives below the page's own non-root path (see module doc)."""
    try:
        feed, page = urlsplit(url), urlsplit(page_url)
    except ValueError:
        return 0
    page_path = page.path.rstrip("/")
    if not page_path or feed.netloc.lower() != page.netloc.lower():
        return 0
    return 2 if feed.path.startswith(page_path + "/") else 0


def parse_html(html: str) -> etree._Element | None:
    """The page as an lxml tree (comments dropped), or None when there is nothing to parse.

    Plain ``etree`` elements, not ``lxml.html``'s: discovery uses only the etree API,
    and ``lxml.html`` calls back into Python to pick a class for every element it
    hands out (a fifth of the crawler's time reading a page)."""
    if not html.strip():
        return None
    parser = etree.HTMLParser(encoding="utf-8", remove_comments=True)
    try:
        root = etree.fromstring(html.encode("utf-8", "replace"), parser=parser)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return None
    return root if isinstance(root, etree._Element) else None


def _base_url(root: etree._Element, page_url: str) -> str:
    """The document's ``<base href>`` (itself resolved against the page), else the page."""
    for base in root.iter("base"):
        href = base.get("href")
        if href:
            return resolve_url(page_url, href) or page_url
    return page_url


def _media(el: etree._Element) -> str:
    """The ``type`` attribute's media type, parameters dropped, lower-cased."""
    return (el.get("type") or "").split(";", 1)[0].strip().lower()


def _link_score(rels: set[str], media: str, url: str) -> tuple[str, int, bool] | None:
    """(feed type, score, declared) of a ``<link>``, or None when it names no feed."""
    if rels & _NOT_FEED_RELS:
        return None
    alternate = "alternate" in rels
    if media in _LINK_TYPES:
        kind, deduction = _LINK_TYPES[media]
        return (kind, FULL_DECLARATION - deduction, True) if alternate else (
            kind, OTHER_REL, False)
    if not alternate or not looks_like_feed_url(url):
        return None
    if media in _GENERIC_TYPES:
        kind, score = _GENERIC_TYPES[media]
        return kind, score, False
    if media:
        return None
    return guess_type(url), UNTYPED_ALTERNATE, False


def _from_link(el: etree._Element, base: str) -> Found | None:
    url = resolve_url(base, el.get("href") or "")
    if url is None:
        return None
    rels = set((el.get("rel") or "").lower().split())
    if not _media(el) and el.get("hreflang"):
        return None  # a translation of the page, not a feed
    judged = _link_score(rels, _media(el), url)
    if judged is None:
        return None
    kind, score, declared = judged
    title = collapse_ws(el.get("title") or "")[:200]
    cand = FeedCandidate(url=url, title=title, type=kind, score=score - _penalty(url, title))
    return Found(cand, "link" if declared else "guess")


def _from_anchor(el: etree._Element, base: str, feedish_base: bool) -> Found | None:
    """``feedish_base``: whether the page's base address says "feed" (:func:`_feedish`)."""
    href = el.get("href") or ""
    text = collapse_ws(raw_text(el) or el.get("title") or "")
    if not text:
        text = " ".join(img.get("alt") or "" for img in el.iter("img")).strip()
    media = _media(el)
    wordy = bool(_FEED_WORDS.search(text)) and len(text) <= 40
    if not (wordy or media in _LINK_TYPES or _feedish(href) or feedish_base):
        return None  # most links of a page: nothing about them can say "feed"
    url = resolve_url(base, href)
    if url is None:
        return None
    parts = urlsplit(url)
    if _SHARE_PATH.search(parts.path):
        return None
    if looks_like_feed_url(url):
        score = 5 + (media in _LINK_TYPES) + wordy
    elif (parts.hostname or "").removeprefix("www.") in _SOCIAL_HOSTS:
        return None
    elif wordy or media in _LINK_TYPES:
        score = 3
    else:
        return None
    kind = _LINK_TYPES[media][0] if media in _LINK_TYPES else guess_type(url)
    title = text[:200]
    return Found(FeedCandidate(url=url, title=title, type=kind,
                               score=score - _penalty(url, title)), "a")


def _hints(root: etree._Element, base: str) -> dict[str, str]:
    """What the page says about itself, for platform recognition."""
    hints: dict[str, str] = {}
    for el in root.iter("meta"):
        name = el.get("itemprop") or el.get("property") or el.get("name")
        if name and name not in hints:
            hints[name] = el.get("content") or ""
    for el in root.iter("link"):
        if "canonical" in (el.get("rel") or "").lower().split():
            hints["canonical"] = resolve_url(base, el.get("href") or "") or ""
            break
    return hints


def collect_candidates(html: str, page_url: str,
                       parsed: etree._Element | None = None) -> list[Found]:
    """Every candidate with its origin, best first, one per normalized address.

    ``parsed`` is the page already parsed with :func:`parse_html` (the crawler
    parses once for feeds, blogroll and abstract)."""
    root = parsed if parsed is not None else parse_html(html)
    found: list[Found] = []
    hints: dict[str, str] = {}
    if root is not None:
        base = _base_url(root, page_url)
        hints = _hints(root, base)
        feedish_base = _feedish(base)
        for el in root.iter("link", "a"):
            got = _from_link(el, base) if el.tag == "link" else _from_anchor(el, base,
                                                                            feedish_base)
            if got is not None:
                cand = got.candidate
                cand = replace(cand, score=cand.score - _under_page(cand.url, page_url))
                found.append(Found(cand, got.origin))
    platform = [
        Found(FeedCandidate(url=f.url, title=f.title, type=f.type, score=f.score),
              "platform" if f.certain else "guess")
        for f in platform_feeds(page_url, hints=hints, html=html)
    ]
    return _dedupe(platform + found, page_url)


def _dedupe(found: list[Found], page_url: str) -> list[Found]:
    page_key = normalize_url(page_url)
    best: dict[str, Found] = {}
    for item in found:
        key = normalize_url(item.candidate.url)
        if key == page_key:
            continue
        old = best.get(key)
        if old is None:
            best[key] = item
            continue
        winner, loser = (item, old) if item.candidate.score > old.candidate.score else (old, item)
        if not winner.candidate.title and loser.candidate.title:
            winner = Found(replace(winner.candidate, title=loser.candidate.title), winner.origin)
        if loser.declared and not winner.declared:
            winner = Found(winner.candidate, loser.origin)
        best[key] = winner
    # dicts keep first-seen order, and sorted() is stable: ties stay in page order
    return sorted(best.values(), key=lambda f: -f.candidate.score)


def find_feeds_in_html(html: str, page_url: str) -> list[FeedCandidate]:
    """Feed candidates of a page, best first, deduplicated; never raises."""
    return [found.candidate for found in collect_candidates(html, page_url)]
