"""Preparing a parsed page for extraction: drop what is never article text.

Three passes over the tree, all in place: elements that are code or chrome
(scripts, navigation, forms), hidden elements, and containers whose class or id
names them as boilerplate (comments, sharing, related links...) unless the same
names also call them the content. Lazy-loaded images get their real source.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from lxml import etree
from lxml.cssselect import CSSSelector
from lxml.html import HtmlElement

from tidings.errors import ConfigError
from tidings.htmlpolicy import compile_css

_JUNK_TAGS = (
    "script", "style", "noscript", "template", "svg", "math", "iframe", "frame", "object",
    "embed", "canvas", "button", "select", "textarea", "input", "label", "nav", "aside",
    "head", "link", "meta", "dialog", "audio", "video",
)  # fmt: skip
_CHROME_TAGS = ("footer", "header", "menu")

# Class/id/role words (after splitting on -, _ and camelCase) that name chrome.
# Matched as word prefixes so "sharebar" and "relatedPosts" count too.
_BOILERPLATE_PREFIXES = (
    "advert", "breadcrumb", "byline", "consent", "cookie", "copyright", "footer", "gdpr",
    "masthead", "menu", "modal", "nav", "newsletter", "outbrain", "paginat", "paywall",
    "popular", "popup", "promo", "recirc", "recommend", "related", "share", "sharing",
    "sidebar", "signup", "social", "sponsor", "subscri", "taboola", "toolbar", "trending",
    "widget",
)  # fmt: skip
_BOILERPLATE_WORDS = frozenset({"ad", "ads", "adslot", "pager", "tags", "taglist", "more"})
# Comment sections are removed whatever their size: on some pages they are the
# longest block, and readers' comments are never the article.
_COMMENT_PREFIXES = ("comment", "disqus", "respond", "repl")
_CONTENT_PREFIXES = ("article", "content", "entry", "post", "story", "main", "body", "text")
_WORD_SPLIT = re.compile(r"[\s_\-:./]+|(?<=[a-z])(?=[A-Z])")
# A hinted element holding more than this share of the page's text is a layout
# wrapper that happens to carry a chrome word ("page-ad-margins"), not chrome.
_MAX_CHROME_SHARE = 0.4
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_LAZY_ATTRS = ("data-src", "data-original", "data-lazy-src", "data-url", "data-hi-res-src")


def _drop(el: HtmlElement) -> None:
    """Remove ``el`` but keep its tail text in the document."""
    parent = el.getparent()
    if parent is None:
        return
    tail = el.tail
    if tail:
        prev = el.getprevious()
        if prev is not None:
            prev.tail = (prev.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(el)


def _chrome_kind(el: HtmlElement) -> str | None:
    """'hidden', 'comments', 'chrome' or None, from attributes alone."""
    if el.get("aria-hidden") == "true" or el.get("hidden") is not None:
        return "hidden"
    style = el.get("style")
    if style and _HIDDEN_STYLE.search(style):
        return "hidden"
    cls, ident, role = el.get("class"), el.get("id"), el.get("role")
    if cls is None and ident is None and role is None:
        return None
    return _hint_kind(f"{cls or ''} {ident or ''} {role or ''}")


@functools.lru_cache(maxsize=4096)
def _hint_kind(hint: str) -> str | None:
    """The kind named by class/id/role words; cached, as pages repeat their classes."""
    words = [w.lower() for w in _WORD_SPLIT.split(hint) if w]
    if not words or any(w.startswith(_CONTENT_PREFIXES) for w in words):
        return None
    if any(w.startswith(_COMMENT_PREFIXES) for w in words):
        return "comments"
    if any(w in _BOILERPLATE_WORDS or w.startswith(_BOILERPLATE_PREFIXES) for w in words):
        return "chrome"
    return None


def _text_lengths(root: HtmlElement) -> dict[HtmlElement, int]:
    """Characters of text in each element's subtree, in one post-order pass."""
    lengths: dict[HtmlElement, int] = {}
    for _event, el in etree.iterwalk(root, events=("end",)):
        total = len(el.text or "") + lengths.get(el, 0)
        lengths[el] = total
        parent = el.getparent()
        if parent is not None and el is not root:
            lengths[parent] = lengths.get(parent, 0) + total + len(el.tail or "")
    return lengths


def drop_selected(root: HtmlElement, selectors: Sequence[str]) -> None:
    """Per-source override: drop every element matching one of ``selectors``."""
    for selector in selectors:
        for el in select(root, selector):
            _drop(el)


def select(root: HtmlElement, selector: str) -> list[HtmlElement]:
    """Elements under ``root`` matching the CSS ``selector`` (ConfigError if invalid)."""
    found = compile_selector(selector)(root)
    return [el for el in found if isinstance(el, HtmlElement)] if isinstance(found, list) else []


def compile_selector(selector: str) -> CSSSelector:
    try:
        return compile_css(selector)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc


def fix_lazy_images(root: HtmlElement) -> None:
    """Give lazy-loaded images their real source so it survives extraction."""
    for img in root.iter("img"):
        src = img.get("src", "")
        if src and not src.startswith("data:"):
            continue
        for attr in _LAZY_ATTRS:
            value = img.get(attr)
            if value and not value.startswith("data:"):
                img.set("src", value)
                break


def clean_tree(root: HtmlElement, *, keep_chrome: bool = False) -> None:
    """Remove junk, hidden and boilerplate elements from ``root`` in place.

    ``keep_chrome`` keeps <header>/<footer>/<menu>: used when the caller chose the
    body container itself and only wants scripts and hidden parts out.
    """
    etree.strip_elements(root, etree.Comment, etree.ProcessingInstruction, with_tail=False)
    etree.strip_elements(root, *_JUNK_TAGS, with_tail=False)
    if keep_chrome:
        return
    for tag in _CHROME_TAGS:
        for el in list(root.iter(tag)):
            _drop(el)
    lengths = _text_lengths(root)
    limit = _MAX_CHROME_SHARE * lengths.get(root, 0)
    doomed = []
    for el in root.iter(etree.Element):
        if el.tag in ("body", "html"):
            continue
        kind = _chrome_kind(el)
        if kind == "chrome" and lengths.get(el, 0) > limit:
            continue
        if kind is not None:
            doomed.append(el)
    for el in doomed:
        _drop(el)
