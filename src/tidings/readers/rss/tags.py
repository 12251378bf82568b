"""Namespaces, tag names and element text for the XML formats."""

from __future__ import annotations

import base64
import binascii
import html
import re

from lxml import etree

from tidings.readers.rss.cdata import mark_escaped

NS_ATOM10 = "http://www.w3.org/2005/Atom"
NS_ATOM03 = "http://purl.org/atom/ns#"
NS_RSS10 = "http://purl.org/rss/1.0/"
NS_RSS090 = "http://my.netscape.com/rdf/simple/0.9/"
NS_RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
NS_CONTENT = "http://purl.org/rss/1.0/modules/content/"
NS_DC = "http://purl.org/dc/elements/1.1/"
NS_DCTERMS = "http://purl.org/dc/terms/"
NS_MEDIA = ("http://search.yahoo.com/mrss/", "http://search.yahoo.com/mrss")
NS_ITUNES = "http://www.itunes.com/dtds/podcast-1.0.dtd"
NS_XHTML = "http://www.w3.org/1999/xhtml"
NS_SY = "http://purl.org/rss/1.0/modules/syndication/"
NS_FEEDBURNER = "http://rssnamespace.org/feedburner/ext/1.0"

RSS_CORE = frozenset(("", NS_RSS10, NS_RSS090))
ATOM_CORE = frozenset(("", NS_ATOM10, NS_ATOM03))
DUBLIN_CORE = frozenset((NS_DC, NS_DCTERMS))
ITEM_TAGS = ("item", f"{{{NS_RSS10}}}item", f"{{{NS_RSS090}}}item")
ENTRY_TAGS = (f"{{{NS_ATOM10}}}entry", f"{{{NS_ATOM03}}}entry", "entry")
RDF_ABOUT = f"{{{NS_RDF}}}about"

#: tag names are few per document, but a hostile feed must not grow the caches
CACHE_LIMIT = 4096
_XMLNS = re.compile(r"""\s+xmlns(?::[\w\-.]+)?=(?:"[^"]*"|'[^']*')""")
_SPLIT_CACHE: dict[str, tuple[str, str]] = {}


def split(tag: str) -> tuple[str, str]:
    """(namespace, local name); an undeclared prefix ("rss:item") counts as no namespace."""
    hit = _SPLIT_CACHE.get(tag)
    if hit is None:
        hit = _split(tag)
        if len(_SPLIT_CACHE) < CACHE_LIMIT:
            _SPLIT_CACHE[tag] = hit
    return hit


def _split(tag: str) -> tuple[str, str]:
    if tag[0] == "{":
        ns, _, local = tag[1:].partition("}")
        return ns, local
    if ":" in tag:
        return "", tag.rpartition(":")[2]
    return "", tag


def text_of(el: etree._Element) -> str:
    """Text of an element; markup inside it (unescaped HTML) is kept as HTML."""
    if len(el) == 0:
        return el.text or ""
    parts = [html.escape(el.text, quote=False)] if el.text else []
    parts += [etree.tostring(child, encoding="unicode", with_tail=True) for child in el]
    return mark_escaped(_XMLNS.sub("", "".join(parts)))


def atom_text(el: etree._Element) -> str:
    """An Atom text construct as HTML (text is escaped, xhtml serialized)."""
    kind = el.get("type")
    kind = kind.lower() if kind else "text"
    mode = el.get("mode")
    mode = mode.lower() if mode else ""  # Atom 0.3
    if mode == "base64" and el.text:
        try:
            return base64.b64decode(el.text).decode("utf-8", "replace")
        except (binascii.Error, ValueError):
            return ""
    children = len(el)
    if children or kind in ("xhtml", "application/xhtml+xml") or mode == "xml":
        if children == 1 and split(str(el[0].tag))[1] == "div" and not (el.text or "").strip():
            return text_of(el[0])
        return text_of(el)
    raw = el.text or ""
    if kind in ("html", "text/html") or mode == "escaped":
        return raw
    if "&" in raw or "<" in raw or ">" in raw:
        return html.escape(raw, quote=False)
    return mark_escaped(raw)
