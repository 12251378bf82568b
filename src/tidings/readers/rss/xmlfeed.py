"""RSS 0.9x/1.0/2.0, RDF and Atom 0.3/1.0 from an lxml tree.

One pass over each entry's children, dispatching on the tag, is what makes this
fast: no XPath, no per-field searches. Core elements are matched by local name
within the format's namespaces (feeds mix "no namespace", RSS 1.0 and 0.90, and
Atom 0.3/1.0 freely); extension elements by their full name.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
from dataclasses import dataclass, field

from lxml import etree

from tidings.readers.rss.entry import EntryFields

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

_XMLNS = re.compile(r"""\s+xmlns(?::[\w\-.]+)?=(?:"[^"]*"|'[^']*')""")
RSS_CORE = frozenset(("", NS_RSS10, NS_RSS090))
ATOM_CORE = frozenset(("", NS_ATOM10, NS_ATOM03))
ITEM_TAGS = ("item", f"{{{NS_RSS10}}}item", f"{{{NS_RSS090}}}item")
ENTRY_TAGS = (f"{{{NS_ATOM10}}}entry", f"{{{NS_ATOM03}}}entry", "entry")
_SY_MINUTES = {"hourly": 60, "daily": 1440, "weekly": 10080, "monthly": 43200, "yearly": 525600}


@dataclass(slots=True)
class FeedMeta:
    format: str
    title: str = ""
    link: str | None = None
    language: str = ""
    ttl: int | None = None
    hub: str | None = None
    base: str | None = None


@dataclass(slots=True)
class XmlFeed:
    meta: FeedMeta
    entries: list[EntryFields] = field(default_factory=list)


_SPLIT_CACHE: dict[str, tuple[str, str]] = {}


def split(tag: str) -> tuple[str, str]:
    """(namespace, local name); an undeclared prefix ("rss:item") counts as no namespace."""
    hit = _SPLIT_CACHE.get(tag)
    if hit is None:
        hit = _split(tag)
        if len(_SPLIT_CACHE) < 4096:  # tag names are few; a hostile feed cannot grow this
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
    return _XMLNS.sub("", "".join(parts))


def feed_format(root: etree._Element) -> str | None:
    """The format name of a feed root element, or None when it is no feed."""
    tag = root.tag
    if not isinstance(tag, str):
        return None
    ns, local = split(tag)
    if local == "rss":
        version = (root.get("version") or "2.0").strip()
        return "rss2.0" if version.startswith("2") else f"rss{version}"
    if local == "RDF":
        return "rss0.90" if root.find(f"{{{NS_RSS090}}}channel") is not None else "rss1.0"
    if local == "feed" and ns in ATOM_CORE:
        return "atom0.3" if ns == NS_ATOM03 else "atom1.0"
    if local == "channel":
        return "rss"
    return None


def read_tree(root: etree._Element, fmt: str, *, url: str, xml_base: bool) -> XmlFeed:
    """Read a feed tree. ``xml_base``: the document uses xml:base somewhere.

    Asking lxml for an element's base walks up to the root every time, so it is
    only done for the rare documents that use xml:base at all.
    """
    if fmt.startswith("atom"):
        meta = _atom_meta(root, fmt)
        entries = [_atom_entry(e, e.base if xml_base else url) for e in root.iter(*ENTRY_TAGS)]
    else:
        meta = _rss_meta(root, fmt)
        entries = [_rss_item(e, e.base if xml_base else url) for e in root.iter(*ITEM_TAGS)]
    if not entries:
        entries = _prefixed_entries(root, fmt, url)
    if not xml_base:
        meta.base = url
    return XmlFeed(meta, entries)


def _prefixed_entries(root: etree._Element, fmt: str, url: str) -> list[EntryFields]:
    """Entries whose tags kept an undeclared prefix ("rss:item"), seen after recovery."""
    wanted = "entry" if fmt.startswith("atom") else "item"
    found = [e for e in root.iter() if isinstance(e.tag, str) and split(e.tag)[1] == wanted]
    read = _atom_entry if wanted == "entry" else _rss_item
    return [read(e, url) for e in found]


# ----------------------------------------------------------------------- RSS


def _rss_meta(root: etree._Element, fmt: str) -> FeedMeta:
    _ns, local = split(root.tag)
    channel = root if local == "channel" else None
    if channel is None:
        for child in root:
            if isinstance(child.tag, str) and split(child.tag)[1] == "channel":
                channel = child
                break
    meta = FeedMeta(format=fmt, base=root.base)
    if channel is None:
        return meta
    meta.base = channel.base
    period, frequency = "", 1
    for child in channel:
        tag = child.tag
        if not isinstance(tag, str):
            continue
        cns, name = split(tag)
        if cns in RSS_CORE:
            if name == "title" and not meta.title:
                meta.title = text_of(child)
            elif name == "link" and not meta.link and child.text:
                meta.link = child.text.strip()
            elif name == "ttl":
                meta.ttl = _int(child.text)
            elif name == "language":
                meta.language = (child.text or "").strip().lower()
        elif cns == NS_ATOM10 and name == "link":
            rel = child.get("rel", "alternate")
            if rel == "hub" and not meta.hub:
                meta.hub = child.get("href")
            elif rel == "alternate" and not meta.link:
                meta.link = child.get("href")
        elif cns == NS_DC and name == "language" and not meta.language:
            meta.language = (child.text or "").strip().lower()
        elif cns == NS_SY and name == "updatePeriod":
            period = (child.text or "").strip().lower()
        elif cns == NS_SY and name == "updateFrequency":
            frequency = _int(child.text) or 1
    if meta.ttl is None and period in _SY_MINUTES:
        meta.ttl = _SY_MINUTES[period] // max(frequency, 1)
    return meta


def _rss_item(item: etree._Element, base: str | None) -> EntryFields:
    f = EntryFields(base=base, guid=item.get(f"{{{NS_RDF}}}about"))
    orig_link = None
    for child in item:
        tag = child.tag
        if not isinstance(tag, str):
            continue
        ns, name = split(tag)
        if ns in RSS_CORE:
            _rss_core(f, child, name)
        elif ns == NS_CONTENT and name == "encoded":
            f.content = text_of(child)
        elif ns in (NS_DC, NS_DCTERMS):
            _dublin_core(f, child, name)
        elif ns in NS_MEDIA:
            _media(f, child, name)
        elif ns == NS_ATOM10:
            _atom_in_rss(f, child, name)
        elif ns == NS_ITUNES:
            if name == "image" and child.get("href"):
                f.media.append((child.get("href", ""), ""))
            elif name == "author" and not f.author:
                f.author = child.text or ""
        elif ns == NS_XHTML and name == "body" and not f.content:
            f.content = text_of(child)
        elif ns == NS_FEEDBURNER and name == "origLink" and child.text:
            orig_link = child.text.strip()
    if orig_link:
        f.link = orig_link
    return f


def _rss_core(f: EntryFields, el: etree._Element, name: str) -> None:
    if name == "title":
        f.title = text_of(el)
    elif name == "link":
        if el.text and el.text.strip():
            f.link = el.text.strip()
        elif el.get("href"):
            f.link = el.get("href")
    elif name == "description":
        f.description = text_of(el)
    elif name == "guid":
        f.guid = (el.text or "").strip() or f.guid
        f.guid_is_link = el.get("isPermaLink", "true").strip().lower() != "false"
    elif name == "pubDate":
        f.published = el.text
    elif name == "author" and not f.author:
        f.author = text_of(el)
    elif name == "category" and el.text:
        f.categories.append(el.text)
    elif name == "comments":
        f.comments = (el.text or "").strip() or None
    elif name == "enclosure" and el.get("url"):
        f.enclosures.append({k: el.get(k, "") for k in ("url", "type", "length")})


def _dublin_core(f: EntryFields, el: etree._Element, name: str) -> None:
    if name in ("creator", "contributor") and not f.author:
        f.author = text_of(el)
    elif name in ("date", "created", "issued") and not f.published:
        f.published = el.text
    elif name == "modified":
        f.updated = el.text
    elif name == "subject" and el.text:
        f.categories.append(el.text)


def _media(f: EntryFields, el: etree._Element, name: str) -> None:
    if name == "group":
        for child in el:
            if isinstance(child.tag, str):
                _media(f, child, split(child.tag)[1])
    elif name == "content" and el.get("url"):
        medium, mime = el.get("medium", ""), el.get("type", "")
        url = el.get("url", "")
        if medium == "image" or mime.startswith("image/") or (not medium and not mime):
            f.media.append((url, mime if medium != "image" else "image/*"))
        for child in el:
            if isinstance(child.tag, str) and split(child.tag)[1] == "thumbnail":
                _media(f, child, "thumbnail")
    elif name == "thumbnail" and el.get("url"):
        f.media.append((el.get("url", ""), "image/*"))


def _atom_in_rss(f: EntryFields, el: etree._Element, name: str) -> None:
    if name == "link" and not f.link and el.get("rel", "alternate") == "alternate":
        f.link = el.get("href")
    elif name == "updated":
        f.updated = el.text
    elif name == "published" and not f.published:
        f.published = el.text


# ----------------------------------------------------------------------- Atom


def _atom_meta(root: etree._Element, fmt: str) -> FeedMeta:
    meta = FeedMeta(format=fmt, base=root.base)
    lang = root.get("{http://www.w3.org/XML/1998/namespace}lang")
    meta.language = (lang or "").lower()
    for child in root:
        tag = child.tag
        if not isinstance(tag, str):
            continue
        ns, name = split(tag)
        if ns not in ATOM_CORE:
            continue
        if name == "title":
            meta.title = _atom_text(child)
        elif name == "link":
            rel = child.get("rel", "alternate")
            if rel == "alternate" and not meta.link:
                meta.link = child.get("href")
            elif rel == "hub" and not meta.hub:
                meta.hub = child.get("href")
    return meta


def _atom_entry(entry: etree._Element, base: str | None) -> EntryFields:
    f = EntryFields(base=base)
    for child in entry:
        tag = child.tag
        if not isinstance(tag, str):
            continue
        ns, name = split(tag)
        if ns in ATOM_CORE:
            _atom_core(f, child, name)
        elif ns in NS_MEDIA:
            _media(f, child, name)
        elif ns in (NS_DC, NS_DCTERMS):
            _dublin_core(f, child, name)
        elif ns == NS_FEEDBURNER and name == "origLink" and child.text:
            f.link = child.text.strip()
    return f


def _atom_core(f: EntryFields, el: etree._Element, name: str) -> None:
    if name == "title":
        f.title = _atom_text(el)
    elif name == "link":
        _atom_link(f, el)
    elif name == "id":
        f.guid = el.text
    elif name == "summary":
        f.description = _atom_text(el)
    elif name == "content":
        f.content = _atom_text(el)
        if not f.link and el.get("src"):
            f.link = el.get("src")
    elif name in ("published", "issued", "created"):
        f.published = f.published or el.text
    elif name in ("updated", "modified"):
        f.updated = el.text
    elif name == "author" and not f.author:
        for part in el:
            if isinstance(part.tag, str) and split(part.tag)[1] == "name":
                f.author = part.text or ""
    elif name == "category":
        term = el.get("label") or el.get("term") or el.text
        if term:
            f.categories.append(term)


def _atom_link(f: EntryFields, el: etree._Element) -> None:
    rel, href = el.get("rel", "alternate"), el.get("href")
    if not href:
        return
    if rel == "alternate":
        # the first alternate wins, but an HTML page beats a typed non-HTML one
        rank = 2 if el.get("type", "text/html") in ("text/html", "application/xhtml+xml") else 1
        if rank > f.link_rank:
            f.link, f.link_rank = href, rank
    elif rel == "enclosure":
        f.enclosures.append({"url": href, "type": el.get("type", ""),
                             "length": el.get("length", "")})
    elif rel == "replies" and not f.comments and el.get("type", "text/html") == "text/html":
        f.comments = href


def _atom_text(el: etree._Element) -> str:
    """An Atom text construct as HTML (text is escaped, xhtml serialized)."""
    kind = (el.get("type") or "text").lower()
    mode = (el.get("mode") or "").lower()  # Atom 0.3
    if mode == "base64" and el.text:
        try:
            return base64.b64decode(el.text).decode("utf-8", "replace")
        except (binascii.Error, ValueError):
            return ""
    if kind in ("xhtml", "application/xhtml+xml") or mode == "xml" or len(el):
        if len(el) == 1 and split(str(el[0].tag))[1] == "div" and not (el.text or "").strip():
            return text_of(el[0])
        return text_of(el)
    raw = el.text or ""
    if kind in ("html", "text/html") or mode == "escaped":
        return raw
    return html.escape(raw, quote=False)


def _int(text: str | None) -> int | None:
    try:
        value = int((text or "").strip())
    except ValueError:
        return None
    return value if value > 0 else None
