"""A site's title and a short abstract of its page (R-DISC-4), for the crawler's findings.

The abstract is the start of the text-densest block with the fewest links:
each ``div``, ``section``, ``article``, ``main``, ``td``, ``li``, ``dd``,
``dt``, ``p`` and ``blockquote`` scores the weight of its first 100
characters (a CJK character weighs 3, as much as its UTF-8 bytes, any other
visible character 1: a hundred Chinese characters say more than a hundred
Latin letters), times 1000, scaled down by its share of the page's links and
by how much of its own text is link text (``affect``, as for blogrolls).
Navigation, headers, footers, sidebars, forms, cookie and consent banners are
removed first. Among equal scores the deepest block wins (the paragraph, not
the page wrapper that holds it), then the first in the page.
"""

from __future__ import annotations

import re

from lxml import etree

from tidings.discovery.blogroll import affect
from tidings.discovery.html import element_text, parse_html
from tidings.textutil import collapse_ws, shorten

__all__ = ["ABSTRACT_CHARS", "find_abstract", "find_abstract_in", "site_title"]

ABSTRACT_CHARS = 100
_BLOCKS = frozenset({"div", "section", "article", "main", "td", "li", "dd", "dt", "p",
                     "blockquote"})
_DROP_TAGS = frozenset({"nav", "header", "footer", "aside", "form", "script", "style",
                        "noscript", "template", "button", "select", "menu", "svg", "iframe",
                        "head", "dialog"})
_DROP_ROLES = frozenset({"navigation", "banner", "contentinfo", "dialog", "alertdialog",
                         "complementary", "search", "menu", "menubar"})
_DROP_NAMES = re.compile(
    r"(?:^|[\s_-])(?:cookies?|consent|gdpr|cc-window|cookiebar|banner|nav|navbar|navigation|"
    r"menu|breadcrumbs?|sidebar|widget|footer|header|masthead|comments?|share|sharing|"
    r"social|related|copyright|skip-link|modal|popup|newsletter|subscribe|ads?|advert)"
    r"(?:$|[\s_-])", re.IGNORECASE)


_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
                  "\U00020000-\U0002fa1f]")  # the ranges of textutil.is_cjk, as a class


def _weight(text: str) -> int:
    return len(text) - text.count(" ") + 2 * len(_CJK.findall(text))


def _unwanted(el: etree._Element) -> bool:
    if el.tag in _DROP_TAGS:
        return True
    if not len(el.attrib):  # most elements: nothing else could say so
        return False
    if (el.get("role") or "").lower() in _DROP_ROLES:
        return True
    if el.get("aria-hidden") == "true" or el.get("hidden") is not None:
        return True
    names = f"{el.get('id') or ''} {el.get('class') or ''}"
    return bool(names.strip()) and bool(_DROP_NAMES.search(names))


def _prune(root: etree._Element) -> None:
    doomed = [el for el in root.iter(etree.Element) if el is not root and _unwanted(el)]
    for el in doomed:
        parent = el.getparent()
        if parent is None:
            continue
        tail = el.tail or ""
        prev = el.getprevious()
        if prev is not None:
            prev.tail = (prev.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
        parent.remove(el)


def find_abstract_in(root: etree._Element) -> str:
    """The abstract of a parsed page ('' when it has no text). Prunes ``root`` in place."""
    _prune(root)
    # each link's text measured once, not once per block around it
    link_chars = {a: len(element_text(a)) for a in root.iter("a")}
    total_links = len(link_chars) or 1
    best: tuple[float, int, int] | None = None
    best_text = ""
    for index, el in enumerate(root.iter(*_BLOCKS)):
        text = element_text(el)
        if not text:
            continue
        points = _weight(text[:ABSTRACT_CHARS]) * 1000.0
        links = [link_chars[a] for a in el.iter("a")]
        points = affect(points, 0.1, 1 - len(links) / total_links, 1.0)
        points = affect(points, 0.1, 1 - sum(links) / len(text), 2.0)
        depth = sum(1 for _ in el.iterancestors())
        key = (points, depth, -index)
        if best is None or key > best:
            best, best_text = key, text
    return shorten(best_text, ABSTRACT_CHARS)


def find_abstract(html: str) -> str:
    """:func:`find_abstract_in` on page text; never raises on bad markup."""
    root = parse_html(html)
    return "" if root is None else find_abstract_in(root)


def site_title(root: etree._Element) -> str:
    """What the site calls itself: ``og:site_name``, ``application-name``, else ``<title>``."""
    for el in root.iter("meta"):
        name = (el.get("property") or el.get("name") or "").lower()
        if name in ("og:site_name", "application-name") and (el.get("content") or "").strip():
            return collapse_ws(el.get("content") or "")[:200]
    for el in root.iter("title"):
        return element_text(el)[:200]
    return ""
