"""OPML subscription lists in and out (R-API-2). Pure functions, stdlib only.

OPML files come from other readers and are often sloppy: nested folders,
``xmlUrl`` in odd case, missing titles, a raw ``&`` in a title (recovered, as
Miniflux does). Import takes every outline with a feed URL and remembers its
folder as a category: nested folders as a path (``Tech/Rust``), or OPML 2.0's
``category="/Tech/Rust"`` attribute when the outline is not in a folder.
FreshRSS's web-scraping outlines (``type="HTML+XPath"`` and kin) name a page,
not a feed: they are skipped with the reason. The rest is skipped with a count.
"""

from __future__ import annotations

import re
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


#: an ``&`` that starts no character or entity reference: a raw one, as sloppy
#: writers leave in titles ("News & Views")
_RAW_AMP = re.compile(rb"&(?!#[0-9]{1,7};|#x[0-9a-fA-F]{1,6};|[A-Za-z][A-Za-z0-9]{0,31};)")
#: FreshRSS's web-scraping sources: a page read with XPath or a JSON path, not a feed
_SCRAPING = ("html+xpath", "xml+xpath", "json+dotnotation", "html+xpath+json+dotnotation")


def _parse_xml(data: bytes, origin: str, notes: list[str]) -> ET.Element:
    try:
        return ET.fromstring(data)  # noqa: S314 - see the import note
    except ET.ParseError as exc:
        fixed = _RAW_AMP.sub(b"&amp;", data)
        if fixed == data:
            raise ParseError(f"{origin}: not valid XML ({exc})") from exc
        try:
            root = ET.fromstring(fixed)  # noqa: S314 - see the import note
        except ET.ParseError:
            raise ParseError(f"{origin}: not valid XML ({exc})") from exc
        notes.append(f"{origin}: a raw & read as &amp; (the file is not valid XML)")
        return root


def parse_opml(data: bytes, origin: str = "OPML file",
               skipped: list[str] | None = None, *, accept: Callable[[str], bool] = is_http,
               expected: str = "not an http(s) URL") -> list[OpmlFeed]:
    """Every outline whose ``xmlUrl`` ``accept`` takes (feeds; the application adds the
    account lines its kinds read); raises ParseError if it is not OPML.

    Each outline left out is described in ``skipped`` (when given), with why: an
    import that drops a subscription without a word loses it for good; ``expected``
    says what the address is not ("not an http(s) URL")."""
    notes: list[str] = [] if skipped is None else skipped
    root = _parse_xml(data, origin, notes)
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
        if url and _scraping(node):
            notes.append(f"outline {title or url!r}: a FreshRSS web-scraping source "
                         f"({_attr(node, 'type') or 'XPath'}), not a feed: add the page "
                         f"with `tidings add {_attr(node, 'htmlUrl') or url}` instead")
        elif url and accept(url) and url not in seen:
            seen.add(url)
            feeds.append(OpmlFeed(url, title, _attr(node, "htmlUrl"),
                                  folder or _category(node)))
        elif url or not len(node):
            notes.append(f"outline {title or url or '(untitled)'!r}: "
                         + _skip_reason(url, seen, expected))
        inner = f"{folder}/{_segment(title)}" if folder else _segment(title)
        stack.extend(_outlines(node, inner if not url else folder, depth + 1))
    return feeds


def _segment(title: str) -> str:
    return title.strip()


def _category(node: ET.Element) -> str:
    """OPML 2.0's ``category``: comma-separated paths, "/Tech/Rust"; the first, as a
    folder path. Tags without a slash (Feedly writes some) are folders of one step."""
    first = _attr(node, "category").split(",")[0].strip()
    return "/".join(part.strip() for part in first.split("/") if part.strip())


def _scraping(node: ET.Element) -> bool:
    if _attr(node, "type").lower() in _SCRAPING:
        return True
    return any(key.rsplit("}", 1)[-1].lower().startswith("xpath") for key in node.attrib)


def _skip_reason(url: str, seen: set[str], expected: str) -> str:
    if not url:
        return "no xmlUrl (neither a feed nor a folder with feeds)"
    if url in seen:
        return f"{url} is listed twice (imported once)"
    return f"{url[:200]} is {expected}"


def _folder(body: ET.Element, folders: dict[str, ET.Element], path: str) -> ET.Element:
    """The outline of folder ``path`` ("Tech/Rust": Rust inside Tech), made on first use."""
    parent, walked = body, ""
    for step in (part for part in path.split("/") if part.strip()):
        walked = f"{walked}/{step}" if walked else step
        if walked not in folders:
            folders[walked] = ET.SubElement(parent, "outline", text=step, title=step)
        parent = folders[walked]
    return parent


def render_opml(feeds: Iterable[OpmlFeed], title: str = "tidings subscriptions") -> str:
    """An OPML 2.0 document, folders from the categories (a path as nested outlines)."""
    root = ET.Element("opml", version="2.0")
    head = ET.SubElement(root, "head")
    ET.SubElement(head, "title").text = title
    ET.SubElement(head, "dateCreated").text = datetime.now(UTC).strftime(
        "%a, %d %b %Y %H:%M:%S +0000")
    body = ET.SubElement(root, "body")
    folders: dict[str, ET.Element] = {}
    for feed in feeds:
        parent = _folder(body, folders, feed.category)
        attrs = {"type": "rss", "text": feed.title or feed.url, "title": feed.title or feed.url,
                 "xmlUrl": feed.url}
        if feed.site_url:
            attrs["htmlUrl"] = feed.site_url
        attrs.update(feed.extra)
        ET.SubElement(parent, "outline", attrs)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
