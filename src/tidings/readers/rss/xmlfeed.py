"""RSS 0.9x/1.0/2.0, RDF and Atom 0.3/1.0 from an lxml tree: format, feed metadata.

No XPath and no per-field searches: the channel's children are read in one
pass, and each entry's in one pass too (:mod:`tidings.readers.rss.items`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lxml import etree

from tidings.readers.rss.entry import EntryFields
from tidings.readers.rss.items import atom_entry, rss_item
from tidings.readers.rss.tags import (
    ATOM_CORE,
    ENTRY_TAGS,
    ITEM_TAGS,
    NS_ATOM03,
    NS_ATOM10,
    NS_DC,
    NS_RSS090,
    NS_SY,
    RSS_CORE,
    atom_text,
    split,
    text_of,
)

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
        entries = [atom_entry(e, e.base if xml_base else url) for e in root.iter(*ENTRY_TAGS)]
    else:
        meta = _rss_meta(root, fmt)
        entries = [rss_item(e, e.base if xml_base else url) for e in root.iter(*ITEM_TAGS)]
    if not entries:
        entries = _prefixed_entries(root, fmt, url)
    if not xml_base:
        meta.base = url
    return XmlFeed(meta, entries)


def _prefixed_entries(root: etree._Element, fmt: str, url: str) -> list[EntryFields]:
    """Entries whose tags kept an undeclared prefix ("rss:item"), seen after recovery."""
    wanted = "entry" if fmt.startswith("atom") else "item"
    found = [e for e in root.iter() if isinstance(e.tag, str) and split(e.tag)[1] == wanted]
    read = atom_entry if wanted == "entry" else rss_item
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
            meta.title = atom_text(child)
        elif name == "link":
            rel = child.get("rel", "alternate")
            if rel == "alternate" and not meta.link:
                meta.link = child.get("href")
            elif rel == "hub" and not meta.hub:
                meta.hub = child.get("href")
    return meta


def _int(text: str | None) -> int | None:
    try:
        value = int((text or "").strip())
    except ValueError:
        return None
    return value if value > 0 else None
