"""OPML subscription lists in and out (R-API-2). Pure functions, stdlib only.

OPML files come from other readers and are often sloppy: nested folders,
``xmlUrl`` in odd case, missing titles. Import takes every outline with a feed
URL, remembers its folder as a category, and skips the rest with a count.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from tidings.errors import ParseError

#: folders in folders: real lists use two or three levels
MAX_DEPTH = 64


@dataclass(frozen=True, slots=True)
class OpmlFeed:
    url: str
    title: str = ""
    site_url: str = ""
    category: str = ""
    #: further outline attributes written on export (a crawl's abstract, depth...)
    extra: tuple[tuple[str, str], ...] = ()


def _attr(node: ET.Element, name: str) -> str:
    for key, value in node.attrib.items():
        if key.lower() == name.lower():
            return value.strip()
    return ""


def _outlines(node: ET.Element, folder: str, depth: int) -> list[tuple[ET.Element, str, int]]:
    """The outline children of ``node``, last first (as a stack wants them)."""
    return [(child, folder, depth) for child in reversed(node)
            if child.tag.lower() == "outline"]


def is_http(url: str) -> bool:
    return url.lower().startswith(("http://", "https://"))


def parse_opml(data: bytes, origin: str = "OPML file",
               skipped: list[str] | None = None, *, accept: Callable[[str], bool] = is_http,
               expected: str = "not an http(s) URL") -> list[OpmlFeed]:
    """Every outline whose ``xmlUrl`` ``accept`` takes (feeds; the application adds the
    account lines its kinds read); raises ParseError if it is not OPML.

    Each outline left out is described in ``skipped`` (when given), with why: an
    import that drops a subscription without a word loses it for good; ``expected``
    says what the address is not ("not an http(s) URL")."""
    notes: list[str] = [] if skipped is None else skipped
    try:
        root = ET.fromstring(data)  # noqa: S314 - see the import note
    except ET.ParseError as exc:
        raise ParseError(f"{origin}: not valid XML ({exc})") from exc
    if root.tag.lower() != "opml":
        raise ParseError(f"{origin}: not an OPML document (root element <{root.tag}>)")
    feeds: list[OpmlFeed] = []
    seen: set[str] = set()
    body = root.find("body")
    # depth first, in document order, on a stack of its own: a hostile file nested
    # 5,000 deep must be a parse error, not a RecursionError
    stack = _outlines(body if body is not None else root, "", 1)
    while stack:
        node, folder, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ParseError(f"{origin}: outlines nested more than {MAX_DEPTH} levels deep")
        url = _attr(node, "xmlUrl")
        title = _attr(node, "title") or _attr(node, "text")
        if url and accept(url) and url not in seen:
            seen.add(url)
            feeds.append(OpmlFeed(url, title, _attr(node, "htmlUrl"), folder))
        elif url or not len(node):
            notes.append(f"outline {title or url or '(untitled)'!r}: "
                         + _skip_reason(url, seen, expected))
        stack.extend(_outlines(node, title if not url else folder, depth + 1))
    return feeds


def _skip_reason(url: str, seen: set[str], expected: str) -> str:
    if not url:
        return "no xmlUrl (neither a feed nor a folder with feeds)"
    if url in seen:
        return f"{url} is listed twice (imported once)"
    return f"{url[:200]} is {expected}"


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
        attrs.update(feed.extra)
        ET.SubElement(parent, "outline", attrs)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
