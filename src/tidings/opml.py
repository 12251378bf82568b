"""OPML subscription lists in and out (R-API-2). Pure functions, stdlib only.

OPML files come from other readers and are often sloppy: nested folders,
``xmlUrl`` in odd case, missing titles. Import takes every outline with a feed
URL, remembers its folder as a category, and skips the rest with a count.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from tidings.errors import ParseError


@dataclass(frozen=True, slots=True)
class OpmlFeed:
    url: str
    title: str = ""
    site_url: str = ""
    category: str = ""


def _attr(node: ET.Element, name: str) -> str:
    for key, value in node.attrib.items():
        if key.lower() == name.lower():
            return value.strip()
    return ""


def parse_opml(data: bytes, origin: str = "OPML file") -> list[OpmlFeed]:
    """Every outline that names a feed URL; raises ParseError if it is not OPML."""
    try:
        root = ET.fromstring(data)  # noqa: S314 - see the import note
    except ET.ParseError as exc:
        raise ParseError(f"{origin}: not valid XML ({exc})") from exc
    if root.tag.lower() != "opml":
        raise ParseError(f"{origin}: not an OPML document (root element <{root.tag}>)")
    feeds: list[OpmlFeed] = []
    seen: set[str] = set()

    def walk(node: ET.Element, folder: str) -> None:
        for child in node:
            if child.tag.lower() != "outline":
                continue
            url = _attr(child, "xmlUrl")
            title = _attr(child, "title") or _attr(child, "text")
            if url.lower().startswith(_SCHEMES) and url not in seen:
                seen.add(url)
                feeds.append(OpmlFeed(url, title, _attr(child, "htmlUrl"), folder))
            walk(child, title if not url else folder)

    body = root.find("body")
    walk(body if body is not None else root, "")
    return feeds


#: feeds, and accounts on paid APIs (``x:@handle``, ``wechat:<id>``; see app/accounts.py)
_SCHEMES = ("http://", "https://", "x:", "twitter:", "wechat:", "weixin:", "mp:")


def render_opml(feeds: Iterable[OpmlFeed], title: str = "tidings subscriptions") -> str:
    """An OPML 2.0 document, folders from the categories."""
    root = ET.Element("opml", version="2.0")
    head = ET.SubElement(root, "head")
    ET.SubElement(head, "title").text = title
    ET.SubElement(head, "dateCreated").text = datetime.now(UTC).strftime(
        "%a, %d %b %Y %H:%M:%S +0000")
    body = ET.SubElement(root, "body")
    folders: dict[str, ET.Element] = {}
    for feed in feeds:
        parent = body
        if feed.category:
            if feed.category not in folders:
                folders[feed.category] = ET.SubElement(
                    body, "outline", text=feed.category, title=feed.category)
            parent = folders[feed.category]
        attrs = {"type": "rss", "text": feed.title or feed.url, "title": feed.title or feed.url,
                 "xmlUrl": feed.url}
        if feed.site_url:
            attrs["htmlUrl"] = feed.site_url
        ET.SubElement(parent, "outline", attrs)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
